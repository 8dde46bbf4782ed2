package redisstore

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// TestLimitArgs_IdleShortensAllButTheOverride: with an Idle the data and
// meta keys live Idle, in whole milliseconds and at least one; the
// override's lifetime stays the month either way.
func TestLimitArgs_IdleShortensAllButTheOverride(t *testing.T) {
	t.Parallel()
	base := waitroom.Limits{MaxActive: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
	tests := []struct {
		idle       time.Duration
		data, meta int64
	}{
		{0, dataTTL(base).Milliseconds(), metaTTL.Milliseconds()},
		{90 * time.Second, 90_000, 90_000},
		{time.Microsecond, 1, 1},
	}
	for _, tc := range tests {
		var c cache
		lim := base
		lim.Idle = tc.idle
		args := c.limitArgs(lim)
		if args[0] != tc.data || args[1] != tc.meta || args[18] != metaTTL.Milliseconds() {
			t.Errorf("idle %v: lifetimes data %v meta %v override %v; want %d, %d and %d",
				tc.idle, args[0], args[1], args[18], tc.data, tc.meta, metaTTL.Milliseconds())
		}
	}
}
