package metrics

import (
	"fmt"
	"math"
	"testing"
)

// The sketch counts distinct ids within its error (1.04/sqrt(1024), 3.3%:
// the bound checked is four times that), however often each one repeats.
func TestSketch_Distinct(t *testing.T) {
	for _, n := range []int{1, 10, 100, 1000, 20000, 200000} {
		var s sketch
		for i := range n {
			for range 3 { // repeats count once
				s.add(visitorHash(fmt.Sprintf("visitor-%d", i)))
			}
		}
		got := s.estimate()
		if rel := math.Abs(got-float64(n)) / float64(n); rel > 4*0.033 {
			t.Errorf("%d distinct: estimate %.0f (%.1f%% off)", n, got, 100*rel)
		}
	}
}

// The last whole minute's estimate is published when the next begins; a
// minute with nobody in between reads 0, not the one before.
func TestVisitors_Roll(t *testing.T) {
	var v visitors
	for i := range 50 {
		v.roll(100).add(visitorHash(fmt.Sprint(i)))
	}
	if v.lastMinute() != 0 {
		t.Fatalf("before the minute ends: %v", v.lastMinute())
	}
	v.roll(101)
	if got := v.lastMinute(); got < 45 || got > 55 {
		t.Fatalf("50 visitors in minute 100 read %v", got)
	}
	v.roll(101).add(visitorHash("a"))
	v.roll(103)
	if got := v.lastMinute(); got != 0 {
		t.Fatalf("after an idle minute: %v, want 0", got)
	}
}
