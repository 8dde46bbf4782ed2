package challenge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"
)

// Bounds of the header Check reads. A prefix Issue writes is 71 to 100
// bytes, so a header is at most 165 bytes; the rest is slack for a later
// version.
const (
	MaxHeader = 256 // bytes of <prefix>:<nonce>
	MaxNonce  = 64  // bytes of nonce, at least one, base64url alphabet
	MaxTTL    = 24 * time.Hour
	minKey    = 32 // bytes of an HMAC key

	maxPooledInput = 4096
)

// Issuer signs challenges with its first key and checks them with every key,
// so keys can rotate: add the new key first, and remove the old one once the
// challenges it signed have expired. An Issuer is safe for concurrent use.
type Issuer struct {
	keys []*macKey
}

// macKey keeps keyed HMAC states for reuse: hmac.New costs two key
// schedules and allocations, Reset only a copy.
type macKey struct{ pool sync.Pool }

// macState is one reusable HMAC with room for its input and output, so a
// sum allocates nothing.
type macState struct {
	h   hash.Hash
	in  []byte
	out [sha256.Size]byte
}

// New returns an Issuer over keys, each at least 32 bytes, the first signing.
// Derive them from secrets the operator already keeps with DeriveKey.
func New(keys ...[]byte) (*Issuer, error) {
	if len(keys) == 0 {
		return nil, errors.New("building challenge issuer: no key")
	}
	is := &Issuer{}
	for i, k := range keys {
		if len(k) < minKey {
			return nil, fmt.Errorf("building challenge issuer: key %d has %d bytes, want at least %d", i, len(k), minKey)
		}
		k := append([]byte(nil), k...)
		is.keys = append(is.keys, &macKey{pool: sync.Pool{New: func() any {
			return &macState{h: hmac.New(sha256.New, k), in: make([]byte, 0, 128)}
		}}})
	}
	return is, nil
}

// DeriveKey derives a 32-byte key for one purpose from an operator's secret,
// as HMAC-SHA256(secret, "waitroom/" + label). A label per purpose (say
// "challenge") keeps a key used here from ever equalling the secret or a key
// derived for anything else.
func DeriveKey(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("waitroom/" + label))
	return m.Sum(nil)
}

// Domain bytes: the first byte each HMAC input starts with, so a tag can
// never be replayed as a signature or the other tag.
const (
	domainSign    = 'S'
	domainRoom    = 'R'
	domainNetwork = 'N'
)

// macSum appends HMAC(key, domain || data) truncated to n bytes to dst.
func macSum[T ~string | ~[]byte](k *macKey, dst []byte, n int, domain byte, data T) []byte {
	st := k.pool.Get().(*macState)
	st.in = append(append(st.in[:0], domain), data...)
	st.h.Reset()
	st.h.Write(st.in)
	dst = append(dst, st.h.Sum(st.out[:0])[:n]...)
	if cap(st.in) > maxPooledInput { // a huge room name must not stay pinned
		st.in = make([]byte, 0, 128)
	}
	k.pool.Put(st)
	return dst
}

// Issue returns the signed prefix of c: base64url, 71 to 100 bytes, never a
// ':'. A zero c.ID is replaced by 128 random bits; c.Bits is clamped to
// 0..MaxBits and the lifetime c.Expires-c.Issued to 0..MaxTTL.
func (is *Issuer) Issue(c Challenge) string {
	if c.ID == (ID{}) {
		rand.Read(c.ID[:]) // never fails since Go 1.24
	}
	k := is.keys[0]
	var buf [maxRaw]byte
	raw := appendPayload(buf[:0], c, k)
	raw = macSum(k, raw, macBytes, domainSign, raw)
	var out [maxPrefix]byte
	return string(encoding.AppendEncode(out[:0], raw))
}

// Check verifies header, "<prefix>:<nonce>", for room and network at now,
// and returns the challenge the prefix carries. The checks run in this order
// and the first failure is returned: ErrMalformed, ErrBadMAC, ErrWrongRoom,
// ErrWrongNetwork, ErrExpired, ErrNotEnoughWork. Check does not make a
// challenge single use: the caller spends c.ID until c.Expires in its store.
func (is *Issuer) Check(header, room, network string, now time.Time) (Challenge, error) {
	prefix, nonce, ok := splitHeader(header)
	if !ok {
		return Challenge{}, ErrMalformed
	}
	var buf [maxRaw]byte
	raw, err := decodePrefix(buf[:0], prefix)
	if err != nil {
		return Challenge{}, err
	}
	payload, mac := raw[:len(raw)-macBytes], raw[len(raw)-macBytes:]
	k := is.verify(payload, mac)
	if k == nil {
		return Challenge{}, ErrBadMAC
	}
	c, tags, err := parsePayload(payload)
	if err != nil {
		return Challenge{}, err
	}
	var want [2 * tagBytes]byte
	if subtle.ConstantTimeCompare(tags.room[:], macSum(k, want[:0], tagBytes, domainRoom, room)) != 1 {
		return Challenge{}, ErrWrongRoom
	}
	if subtle.ConstantTimeCompare(tags.network[:], macSum(k, want[:0], tagBytes, domainNetwork, network)) != 1 {
		return Challenge{}, ErrWrongNetwork
	}
	if !now.Before(c.Expires) {
		return Challenge{}, ErrExpired
	}
	if WorkBits(prefix, nonce) < c.Bits {
		return Challenge{}, ErrNotEnoughWork
	}
	c.Room, c.Network = room, network
	return c, nil
}

// verify returns the key whose MAC of payload is mac, or nil. Every key is
// tried, so the time taken does not depend on which one matches.
func (is *Issuer) verify(payload, mac []byte) *macKey {
	var found *macKey
	var sum [macBytes]byte
	for _, k := range is.keys {
		if subtle.ConstantTimeCompare(mac, macSum(k, sum[:0], macBytes, domainSign, payload)) == 1 {
			found = k
		}
	}
	return found
}

// splitHeader splits at the header's only ':' and bounds both halves. The
// nonce is 1..MaxNonce bytes of the base64url alphabet; the prefix's own
// alphabet is checked when it is decoded.
func splitHeader(h string) (prefix, nonce string, ok bool) {
	if len(h) > MaxHeader {
		return "", "", false
	}
	prefix, nonce, ok = strings.Cut(h, ":")
	if !ok || len(nonce) == 0 || len(nonce) > MaxNonce || prefix == "" {
		return "", "", false
	}
	for i := 0; i < len(nonce); i++ {
		if !base64URLByte(nonce[i]) {
			return "", "", false
		}
	}
	return prefix, nonce, true
}

// base64URLByte reports whether b is in the base64url alphabet, A-Z a-z 0-9
// - _, the only bytes of a prefix or a nonce.
func base64URLByte(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_'
}
