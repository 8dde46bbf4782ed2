package challenge

import (
	"encoding/base64"
	"encoding/binary"
	"time"
)

// The prefix is base64url, without padding and with strict trailing bits, of
//
//	version    1 byte, 1
//	id         16 bytes
//	room tag   8 bytes: HMAC(key, 'R' || room), truncated
//	net tag    8 bytes: HMAC(key, 'N' || network), truncated
//	bits       1 byte, 0..MaxBits
//	number     varint (signed), the ticket number
//	issued     varint (signed), Unix seconds
//	lifetime   uvarint, seconds from issued to expiry, at most MaxTTL
//	mac        16 bytes: HMAC(key, 'S' || everything above), truncated
//
// Room and network travel as keyed tags, so a long room name or an IPv6
// network costs nothing and the prefix reveals neither. A 64-bit tag cannot
// be matched by trying networks: without the key each guess costs a request.
const (
	version   = 1
	idBytes   = 16
	tagBytes  = 8
	macBytes  = 16
	fixedHead = 1 + idBytes + 2*tagBytes + 1
	minRaw    = fixedHead + 3 + macBytes
	maxRaw    = fixedHead + 2*binary.MaxVarintLen64 + 5 + macBytes
	maxPrefix = (maxRaw*8 + 5) / 6 // base64 characters of maxRaw bytes
)

var encoding = base64.RawURLEncoding.Strict()

// tags are the room and network tags a payload carries.
type tags struct {
	room, network [tagBytes]byte
}

// appendPayload appends everything but the MAC, with tags keyed by k.
func appendPayload(b []byte, c Challenge, k *macKey) []byte {
	b = append(b, version)
	b = append(b, c.ID[:]...)
	b = macSum(k, b, tagBytes, domainRoom, c.Room)
	b = macSum(k, b, tagBytes, domainNetwork, c.Network)
	b = append(b, byte(min(max(c.Bits, 0), MaxBits)))
	b = binary.AppendVarint(b, c.Number)
	issued := c.Issued.Unix()
	b = binary.AppendVarint(b, issued)
	life := min(max(c.Expires.Unix()-issued, 0), int64(MaxTTL/time.Second))
	return binary.AppendUvarint(b, uint64(life))
}

// decodePrefix decodes prefix into dst, refusing anything Issue cannot have
// written: a length out of bounds, padding, a byte outside base64url,
// non-zero trailing bits, another version. The alphabet is checked here
// because the decoder skips '\r' and '\n', which would give one prefix many
// spellings (FuzzCheck's corpus keeps the one it found).
func decodePrefix(dst []byte, prefix string) ([]byte, error) {
	if len(prefix) > maxPrefix || len(prefix) < encoding.EncodedLen(minRaw) {
		return nil, ErrMalformed
	}
	for i := 0; i < len(prefix); i++ {
		if !base64URLByte(prefix[i]) {
			return nil, ErrMalformed
		}
	}
	var in [maxPrefix]byte // a copy on the stack, not a []byte(prefix) on the heap
	raw, err := encoding.AppendDecode(dst, in[:copy(in[:], prefix)])
	if err != nil || len(raw) < minRaw || raw[0] != version {
		return nil, ErrMalformed
	}
	return raw, nil
}

// parsePayload reads what appendPayload wrote. It runs only on payloads
// whose MAC verified, yet checks every bound.
func parsePayload(p []byte) (Challenge, tags, error) {
	var c Challenge
	var t tags
	if len(p) < fixedHead {
		return c, t, ErrMalformed
	}
	copy(c.ID[:], p[1:])
	copy(t.room[:], p[1+idBytes:])
	copy(t.network[:], p[1+idBytes+tagBytes:])
	c.Bits = int(p[fixedHead-1])
	rest := p[fixedHead:]
	number, n1 := binary.Varint(rest)
	if n1 <= 0 {
		return c, t, ErrMalformed
	}
	issued, n2 := binary.Varint(rest[n1:])
	if n2 <= 0 {
		return c, t, ErrMalformed
	}
	life, n3 := binary.Uvarint(rest[n1+n2:])
	if n3 <= 0 || n1+n2+n3 != len(rest) || c.Bits > MaxBits || life > uint64(MaxTTL/time.Second) {
		return c, t, ErrMalformed
	}
	c.Number = number
	c.Issued = time.Unix(issued, 0)
	c.Expires = c.Issued.Add(time.Duration(life) * time.Second)
	return c, t, nil
}
