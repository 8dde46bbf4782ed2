package challenge

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"strconv"
)

// LeadingZeroBits counts the zero bits at the start of b, big-endian: the
// bits of b[0] from the most significant down, then b[1], and so on.
func LeadingZeroBits(b []byte) int {
	n := 0
	for len(b) >= 8 {
		w := binary.BigEndian.Uint64(b)
		if w != 0 {
			return n + bits.LeadingZeros64(w)
		}
		n += 64
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return n + bits.LeadingZeros8(x)
		}
		n += 8
	}
	return n
}

// WorkBits is the work a nonce shows for prefix: the leading zero bits of
// SHA-256(prefix || nonce), the two strings' bytes with nothing between.
func WorkBits(prefix, nonce string) int {
	var buf [192]byte // a checked header's prefix and nonce fit
	b := append(append(buf[:0], prefix...), nonce...)
	sum := sha256.Sum256(b)
	return LeadingZeroBits(sum[:])
}

// Solve finds a nonce, a decimal counter from 0, for which
// SHA-256(prefix || nonce) has at least bits leading zero bits (clamped to
// 0..MaxBits). It takes 2^bits hashes on average, with no limit: it is for
// tests, the docs and the load generator, which choose small bits.
func Solve(prefix string, bits int) string {
	bits = min(max(bits, 0), MaxBits)
	buf := make([]byte, 0, len(prefix)+20)
	buf = append(buf, prefix...)
	for i := uint64(0); ; i++ {
		b := strconv.AppendUint(buf, i, 10)
		sum := sha256.Sum256(b)
		if LeadingZeroBits(sum[:]) >= bits {
			return string(b[len(prefix):])
		}
	}
}
