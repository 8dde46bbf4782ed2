package waitroom

import (
	"testing"
	"time"
)

func TestAdmissionRate(t *testing.T) {
	t.Parallel()
	sixPerMinute, _ := ParseRate("6/m")
	cases := []struct {
		name string
		st   Stats
		lim  Rate
		want float64
	}{
		{"too young to tell", Stats{AdmittedLastMinute: 5, MeasuredOver: 5 * time.Second}, Rate{}, 0},
		{"nothing admitted", Stats{MeasuredOver: time.Minute}, Rate{}, 0},
		{"a full minute", Stats{AdmittedLastMinute: 30, MeasuredOver: time.Minute}, Rate{}, 0.5},
		{"a young room", Stats{AdmittedLastMinute: 10, MeasuredOver: 20 * time.Second}, Rate{}, 0.5},
		{"capped by the bucket", Stats{AdmittedLastMinute: 12, MeasuredOver: 20 * time.Second}, sixPerMinute, 0.1},
	}
	for _, c := range cases {
		if got := admissionRate(&c.st, c.lim); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestEtaRange(t *testing.T) {
	t.Parallel()
	if eta, most := etaRange(60, 1, nil); eta != time.Minute || most != 0 {
		t.Errorf("no history: %v %v", eta, most)
	}
	if eta, most := etaRange(60, 1, &rateSpread{low: 0.9, high: 1.2}); eta != time.Minute || most != 0 {
		t.Errorf("a steady line must give one figure: %v %v", eta, most)
	}
	// The last minutes ran at 0.5 to 2 a second: 60 places take 30 s to 2 min.
	if eta, most := etaRange(60, 1, &rateSpread{low: 0.5, high: 2}); eta != 30*time.Second || most != 2*time.Minute {
		t.Errorf("an uneven line: %v to %v, want 30s to 2m", eta, most)
	}
}

func TestLiveRoom_MeasureSpread(t *testing.T) {
	t.Parallel()
	ln := newLiveRoom(Room{Name: "r"})
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, perMin := range []int64{600, 60, 120, 0, 30} { // the first is too old to count
		at := now.Add(-spreadWindow - time.Minute + time.Duration(i)*time.Minute)
		if i > 0 {
			at = now.Add(-time.Duration(5-i) * time.Minute)
		}
		ln.hist.add(at, &Stats{AdmittedLastMinute: perMin})
	}
	ln.measureSpread(now)
	if sp := ln.spread.Load(); sp.low != 0.5 || sp.high != 2 {
		t.Fatalf("spread %+v, want 0.5 to 2 a second (idle minutes and old samples left out)", *sp)
	}
}
