package storetest

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testAutopilotTimedOnly holds a store to judging the latency only on
// timed requests (waitroom.AutopilotMinSamples of them): a step of a
// hundred requests none of which was timed (new visitors' first ones, or
// sessions past waitroom.AutopilotSessionCap) is too little to judge,
// not a fast site to rise on; one whose untimed requests failed (the
// gateway's 502s) is judged on its errors.
func testAutopilotTimedOnly(t *testing.T, e *env) {
	p := waitroom.AutopilotParams{Interval: autopilotStep, Target: 500 * time.Millisecond, Percentile: 90,
		ErrorsPPM: 20_000, Min: 10, Max: 40, Pin: -1}
	e.autopilot(p, waitroom.AutopilotReport{})
	untimed := waitroom.AutopilotReport{Requests: 100, Active: 10}
	if st := e.autopilotStepWith(p, untimed); st.Limit != 10 || st.Reason != waitroom.ReasonIdle {
		t.Fatalf("100 requests, none timed, the limit in use: limit %d (reason %d), want 10 held as too little to judge; %+v", st.Limit, st.Reason, st)
	}
	failed := waitroom.AutopilotReport{Requests: 100, Errors: 50, Active: 10}
	if st := e.autopilotStepWith(p, failed); st.Reason != waitroom.ReasonFloor || st.ErrorsPPM != 250_000 {
		t.Fatalf("50 untimed errors of 100 (and the 100 carried): reason %d, errors %d ppm, want judged over the bound (at the floor), 25%%; %+v", st.Reason, st.ErrorsPPM, st)
	}
}
