package waitroom

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is a number of events per period, written "300/m". The zero Rate is
// unlimited.
type Rate struct {
	N   int64
	Per time.Duration
}

// Unlimited is the spelling of a rate without a limit.
const Unlimited = "unlimited"

// maxRateN bounds N so per-second arithmetic stays exact in float64 and Lua.
const maxRateN = 1_000_000_000

// ParseRate reads "<n>/s", "<n>/m", "<n>/h" (n a positive integer) or
// "unlimited".
func ParseRate(s string) (Rate, error) {
	if s == Unlimited {
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf(`want "<n>/s", "<n>/m", "<n>/h" or %q, got %q`, Unlimited, s)
	}
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		return Rate{}, fmt.Errorf(`want "<n>/s", "<n>/m" or "<n>/h", got unit %q in %q`, unit, s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > maxRateN {
		return Rate{}, fmt.Errorf("want a whole number from 1 to %d before the slash, got %q (for less than 1/s use /m or /h)", maxRateN, s)
	}
	return Rate{N: n, Per: per}, nil
}

// IsUnlimited reports whether the rate sets no limit.
func (r Rate) IsUnlimited() bool { return r.N <= 0 || r.Per <= 0 }

// PerSecond is the rate in events per second; +Inf when unlimited.
func (r Rate) PerSecond() float64 {
	if r.IsUnlimited() {
		return math.Inf(1)
	}
	return float64(r.N) / r.Per.Seconds()
}

// DefaultBurst is one second's worth of the rate, at least 1; 0 when unlimited.
func (r Rate) DefaultBurst() int {
	if r.IsUnlimited() {
		return 0
	}
	return max(1, int(math.Ceil(r.PerSecond())))
}

// String spells the rate the way ParseRate reads it.
func (r Rate) String() string {
	if r.IsUnlimited() {
		return Unlimited
	}
	unit := "s"
	switch r.Per {
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return strconv.FormatInt(r.N, 10) + "/" + unit
}
