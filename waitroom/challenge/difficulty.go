package challenge

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Policy decides how many bits a challenge asks for: Base for everyone, one
// more per doubling of the network's recent challenges beyond Free, one more
// per doubling of the line's pressure up to PressureMax, and never more than
// Max. A network taking n > Free challenges a minute pays at least n/Free
// times Base's work for each, so its total grows with n squared, while a
// person pays Base. Bits is pure: the caller counts, Policy only decides.
type Policy struct {
	// Base is the bits everyone pays: 2^Base hashes expected. Default 14,
	// about half a second for a phone with WebCrypto (docs/challenge.md).
	Base int
	// Max caps the bits, Base..MaxBits. Default 24.
	Max int
	// Free is how many challenges a network may take ahead of its pace at
	// Base. Default 30, a PC-bang at a sale; at least 1.
	Free int
	// PressureMax is the most bits the line's pressure adds, 0..8; it falls
	// on everyone alike. Default 2.
	PressureMax int
	// TTL is how long a challenge may be solved, MinPolicyTTL to
	// MaxPolicyTTL: long enough for a slow phone at the bits real people
	// get. Default 5m.
	TTL time.Duration
}

// The bounds of Policy.TTL (the format allows up to MaxTTL).
const (
	MinPolicyTTL = 30 * time.Second
	MaxPolicyTTL = time.Hour
)

// Load is what the caller knows when it issues a challenge.
type Load struct {
	// Recent is the number of challenges issued to the client's network in
	// the last minute, this one included. Count issued challenges, not
	// solved ones: the bits are fixed at issue, so a farm that fetched many
	// prefixes before solving any would otherwise pay Base for all of them.
	Recent int
	// Pressure is how many times faster people join the line than the room
	// lets them in, over the last minute: joins per minute ÷ admissions per
	// minute. 1 or less (the line is not growing) adds nothing; NaN counts
	// as 0 and +Inf as the most.
	Pressure float64
}

// DefaultPolicy returns the defaults the docs propose.
func DefaultPolicy() Policy {
	return Policy{Base: 14, Max: 24, Free: 30, PressureMax: 2, TTL: 5 * time.Minute}
}

// Bits is the difficulty for a challenge issued under l.
func (p Policy) Bits(l Load) int {
	b := p.Base + networkBits(l.Recent, p.Free) + pressureBits(l.Pressure, p.PressureMax)
	return min(max(b, 0), p.Max, MaxBits)
}

// networkBits is ceil(log2(n / free)) for n > free, else 0.
func networkBits(n, free int) int {
	free = max(free, 1)
	if n <= free {
		return 0
	}
	return bits.Len64(uint64((n - 1) / free)) // n ≤ free·2^k ⇔ (n-1)/free < 2^k
}

// pressureBits is floor(log2(p)), between 0 and most.
func pressureBits(p float64, most int) int {
	if most <= 0 || math.IsNaN(p) || p < 2 {
		return 0
	}
	if math.IsInf(p, 1) {
		return most
	}
	_, exp := math.Frexp(p) // p = f·2^exp, 0.5 ≤ f < 1
	return min(exp-1, most)
}

// Validate returns every problem of p, each named by the room key the docs
// propose for it.
func (p Policy) Validate() error {
	var errs []error
	if p.Base < 0 || p.Base > MaxBits {
		errs = append(errs, fmt.Errorf("challenge_bits: must be 0..%d, got %d", MaxBits, p.Base))
	}
	if p.Max < p.Base || p.Max > MaxBits {
		errs = append(errs, fmt.Errorf("challenge_max_bits: must be challenge_bits (%d)..%d, got %d", p.Base, MaxBits, p.Max))
	}
	if p.Free < 1 {
		errs = append(errs, fmt.Errorf("challenge_free: must be >= 1 a minute, got %d", p.Free))
	}
	if p.TTL < MinPolicyTTL || p.TTL > MaxPolicyTTL {
		errs = append(errs, fmt.Errorf("challenge_ttl: must be from %v to %v, got %v", MinPolicyTTL, MaxPolicyTTL, p.TTL))
	}
	if p.PressureMax < 0 || p.PressureMax > 8 {
		errs = append(errs, fmt.Errorf("challenge_pressure_bits: must be 0..8, got %d", p.PressureMax))
	}
	return errors.Join(errs...)
}
