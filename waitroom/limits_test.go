package waitroom

import (
	"testing"
	"time"
)

// An address counts toward session_clients for abandon_after capped at
// 20 s (an owner seen from A, B, then C ten seconds apart is served from
// C, A being quiet), never less than 5 s, and never less than three
// session caches, so an owner the cache answers is heard in time.
func TestLimits_ClientQuiet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		abandon, cache, want time.Duration
	}{
		{2 * time.Minute, time.Second, 20 * time.Second},
		{0, 0, 5 * time.Second},
		{time.Second, 0, 5 * time.Second},
		{10 * time.Second, 0, 10 * time.Second},
		{5 * time.Second, 10 * time.Second, 30 * time.Second},
		{2 * time.Minute, time.Minute, 3 * time.Minute},
	} {
		l := Limits{AbandonAfter: c.abandon, SessionCache: c.cache}
		if got := l.ClientQuiet(); got != c.want {
			t.Errorf("abandon_after %v, session_cache %v: quiet %v, want %v", c.abandon, c.cache, got, c.want)
		}
	}
}
