package waitroom

import (
	"testing"
	"time"
)

func TestRefreshHint_GrowsWithPositionAndIsBounded(t *testing.T) {
	t.Parallel()
	r := Room{Refresh: 5 * time.Second, RefreshMax: 30 * time.Second}
	for _, p := range []int64{1, 5, 10} {
		if d := refreshHint(r, p, time.Hour, true); d != r.Refresh {
			t.Errorf("position %d polls after %v, want the shortest %v", p, d, r.Refresh)
		}
	}
	last := time.Duration(0)
	for _, p := range []int64{11, 100, 300, 1000, 100_000} {
		var sum time.Duration
		for range 200 { // jitter: look at the mean, and every value's bounds
			d := refreshHint(r, p, 0, false)
			if d < r.Refresh || d > r.RefreshMax {
				t.Fatalf("position %d: %v outside [%v, %v]", p, d, r.Refresh, r.RefreshMax)
			}
			sum += d
		}
		// Jitter moves a mean of 200 by a few percent; growth is far more.
		if mean := sum / 200; mean < last*9/10 {
			t.Errorf("position %d polls more often (%v) than a nearer one (%v)", p, mean, last)
		} else {
			last = max(last, mean)
		}
	}
	if last < 24*time.Second {
		t.Errorf("far back the mean interval is %v, want near the 30s bound", last)
	}
	// With a known wait, a tenth of it, within the bounds.
	if d := refreshHint(r, 500, 150*time.Second, true); d < 12*time.Second || d > 18*time.Second {
		t.Errorf("150s ahead: %v, want about 15s", d)
	}
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[refreshHint(r, 5000, 0, false).Round(time.Millisecond)] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d different intervals among 50 pages far back: no jitter", len(seen))
	}
}

// A thousand waiting pages following the hints for a minute ask far less
// often than the same pages polling every 5 seconds.
func TestRefreshHint_FewerPollsThanFixedInterval(t *testing.T) {
	t.Parallel()
	r := Room{Refresh: 5 * time.Second, RefreshMax: 30 * time.Second}
	const clients, minute = 1000, time.Minute
	fixed, hinted := 0, 0
	for pos := int64(1); pos <= clients; pos++ {
		fixed += int(minute / (5 * time.Second))
		for at := time.Duration(0); at < minute; at += refreshHint(r, pos, 0, false) {
			hinted++
		}
	}
	t.Logf("1,000 waiting pages over one minute: %d polls following the hints, %d polling every 5s", hinted, fixed)
	if hinted*2 > fixed {
		t.Fatalf("hints gave %d polls against %d fixed; want less than half", hinted, fixed)
	}
}
