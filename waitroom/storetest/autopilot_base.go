package storetest

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testAutopilotBaseInUse holds a store to setting the baseline (the
// unloaded latency) only from steps where the limit was in use and timed
// a quarter of it (waitroom.AutopilotBaseStep). Two sessions' instant
// 404s in the quiet step before a sale, or a full room's handful of
// requests, must not set it: against a 2.5ms baseline the sale's honest
// 262.5ms median would read as past the knee and back the limit off,
// step after step, until the windows rotate.
func testAutopilotBaseInUse(t *testing.T, e *env) {
	p := waitroom.AutopilotParams{Interval: autopilotStep, Target: 800 * time.Millisecond, Percentile: 90,
		ErrorsPPM: 20_000, Min: 100, Max: 400, Pin: -1}
	e.autopilot(p, waitroom.AutopilotReport{})
	// 20 requests in (0, 5ms] with 2 of the 100 inside: not in use.
	if st := e.autopilotStepWith(p, stepOf(20, 4*time.Millisecond, 0, 2)); st.Reason != waitroom.ReasonUnused || st.Limit != 100 {
		t.Fatalf("two sessions' 404s: %+v, want the limit 100 held as not in use", st)
	}
	// The limit in use, but 20 timed requests are under a quarter of it:
	// a rise (p90 4.5ms), still no baseline.
	if st := e.autopilotStepWith(p, stepOf(20, 4*time.Millisecond, 0, 100)); st.Reason != waitroom.ReasonRise || st.Limit != 110 {
		t.Fatalf("a full room's 20 requests: %+v, want a rise to 110", st)
	}
	// The sale: 400 requests in (200ms, 300ms] and 100 in (300ms, 400ms]
	// with the 110 inside; p50 262.5ms, p90 350ms.
	sale := func(active int64) waitroom.AutopilotReport {
		r := stepOf(400, 290*time.Millisecond, 0, active)
		r.Buckets[10], r.Requests = 100, 500
		return r
	}
	if waitroom.AutopilotBounds[9] != 300e3 || waitroom.AutopilotBounds[10] != 400e3 {
		t.Fatal("the buckets moved: the figures here assume (300ms, 400ms] is bucket 10")
	}
	st := e.autopilotStepWith(p, sale(110))
	if st.Baseline != 0 || st.Median != 262500*time.Microsecond || st.Reason != waitroom.ReasonSettling || st.Limit != 110 {
		t.Fatalf("the sale's first step: %+v, want judged against no baseline (the quiet steps set none), p50 262.5ms, settling at 110", st)
	}
	st = e.autopilotStepWith(p, sale(110))
	if st.Baseline != 262500*time.Microsecond || st.Reason != waitroom.ReasonRise || st.Limit != 121 {
		t.Fatalf("the sale's second step: %+v, want the baseline 262.5ms (the first sale step's median) and a rise to 121", st)
	}
}
