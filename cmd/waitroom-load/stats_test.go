package main

import (
	"slices"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", []time.Duration{7}, 99, 7},
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p90 of 1..100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 100, 100 * time.Millisecond},
		{"p0 is the min", hundred, 0, time.Millisecond},
		{"nearest rank rounds up", []time.Duration{1, 2, 3}, 50, 2},
		{"p99 of two is the larger", []time.Duration{1, 2}, 99, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d samples, %v) = %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestSamples_Latency(t *testing.T) {
	t.Parallel()
	var s samples
	for i := 100; i >= 1; i-- { // unsorted on purpose
		s.add(time.Duration(i) * time.Millisecond)
	}
	want := latency{Samples: 100, P50: 50, P90: 90, P99: 99, Max: 100}
	if got := s.latency(); got != want {
		t.Errorf("latency() = %+v, want %+v", got, want)
	}
}

// A long run keeps a bounded reservoir; the count and the max stay exact.
func TestSamples_Bounded(t *testing.T) {
	t.Parallel()
	s := samples{limit: 64}
	for i := range 10_000 {
		s.add(time.Duration(i) * time.Microsecond)
	}
	s.add(time.Second)
	if len(s.d) != 64 || s.n != 10_001 || s.max != time.Second {
		t.Errorf("kept %d samples of %d, max %v; want 64 of 10001, max 1s", len(s.d), s.n, s.max)
	}
	if l := s.latency(); l.Max != 1000 || l.Samples != 10_001 {
		t.Errorf("latency() = %+v", l)
	}
}

func TestArrivals(t *testing.T) {
	t.Parallel()
	ramp := arrivals(config{profile: "ramp", visitors: 4, ramp: 2 * time.Second})
	if want := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}; !slices.Equal(ramp, want) {
		t.Errorf("ramp: %v, want %v", ramp, want)
	}
	if n := len(arrivals(config{profile: "steady", rate: 10, ramp: 3 * time.Second})); n != 30 {
		t.Errorf("steady 10/s for 3s: %d arrivals, want 30", n)
	}
	if n := len(arrivals(config{profile: "steady", rate: 10, ramp: 3 * time.Second, visitors: 7})); n != 7 {
		t.Errorf("steady capped at 7: %d arrivals", n)
	}
	// Steps of 1s at 10, 20 and 30 per second.
	step := arrivals(config{profile: "step", rate: 30, steps: 3, ramp: 3 * time.Second})
	if len(step) != 60 || step[10] != time.Second || step[30] != 2*time.Second {
		t.Errorf("step: %d arrivals, [10]=%v, [30]=%v; want 60, 1s, 2s", len(step), step[10], step[30])
	}
	for i := 1; i < len(step); i++ {
		if step[i] < step[i-1] {
			t.Fatalf("step arrivals out of order at %d: %v", i, step)
		}
	}
}
