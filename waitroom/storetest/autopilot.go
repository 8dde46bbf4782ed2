package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// autopilotStep is the step of the autopilot subtests: short, since each
// phase waits one out.
const autopilotStep = 300 * time.Millisecond

// autopilot calls the store's Autopilots through the next instance.
func (e *env) autopilot(p waitroom.AutopilotParams, r waitroom.AutopilotReport) waitroom.AutopilotState {
	e.t.Helper()
	ap, ok := waitroom.As[waitroom.Autopilots](e.store())
	if !ok {
		e.t.Fatal("the store has no autopilot (waitroom.Autopilots)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	st, err := ap.Autopilot(ctx, e.room, p, r)
	if err != nil {
		e.t.Fatalf("Autopilot: %v", err)
	}
	return st
}

// autopilotStepWith reports r and waits for the step holding it to be
// judged, returning that judgement.
func (e *env) autopilotStepWith(p waitroom.AutopilotParams, r waitroom.AutopilotReport) waitroom.AutopilotState {
	e.t.Helper()
	st := e.autopilot(p, r)
	for end := time.Now().Add(deadline); !st.Decided; {
		if time.Now().After(end) {
			e.t.Fatalf("no step judged within %s of a %s step", deadline, p.Interval)
		}
		time.Sleep(p.Interval / 3)
		st = e.autopilot(p, waitroom.AutopilotReport{})
	}
	return st
}

// stepOf is a report of n requests that each took d, one in errs of them
// failed, with active sessions inside.
func stepOf(n int64, d time.Duration, errs, active int64) waitroom.AutopilotReport {
	var r waitroom.AutopilotReport
	for i, b := range waitroom.AutopilotBounds {
		if d.Microseconds() <= b {
			r.Buckets[i] = n
			break
		}
	}
	r.Requests, r.Errors, r.Active = n, errs, active
	return r
}

// testAutopilot walks the controller through every rule with figures
// worked out by hand (docs/autopilot.md): a store that merges, judges or
// rounds differently from DecideAutopilot shows here.
func testAutopilot(t *testing.T, e *env) {
	p := waitroom.AutopilotParams{Interval: autopilotStep, Target: 500 * time.Millisecond, Percentile: 90,
		ErrorsPPM: 20_000, Min: 10, Max: 40, Pin: -1}
	check := func(what string, st waitroom.AutopilotState, limit int, why waitroom.AutopilotReason) {
		t.Helper()
		if st.Limit != limit || st.Reason != why {
			t.Fatalf("%s: limit %d (reason %d), want %d (reason %d); %+v", what, st.Limit, st.Reason, limit, why, st)
		}
	}
	st := e.autopilot(p, waitroom.AutopilotReport{})
	check("first call", st, 10, waitroom.ReasonStart)
	if st.Step != 0 || st.Decided {
		t.Fatalf("first call: %+v, want step 0 not decided", st)
	}
	st = e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 0, 10))
	check("fast and in use", st, 12, waitroom.ReasonRise)
	// 100 requests in (35ms, 50ms]: the 90th is 9/10 into the bucket.
	if st.Latency != 48500*time.Microsecond || st.Samples != 100 || st.ErrorsPPM != 0 || st.Step < 1 {
		t.Fatalf("fast step: %+v, want p90 48.5ms of 100 requests, no errors", st)
	}
	// The step after a rise holds when its median is over the unloaded
	// 42.5ms (the first step's) by more than a quarter of the margin (a
	// tenth of the target, 50ms): here in (75ms, 100ms], 87.5ms.
	check("slower, the step after a rise", e.autopilotStepWith(p, stepOf(100, 80*time.Millisecond, 0, 12)), 12, waitroom.ReasonSettling)
	check("fast again", e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 0, 12)), 14, waitroom.ReasonRise)
	// Within it, and a p90 (48.5ms) under a third of the target: far
	// under the knee, the next rise at once.
	check("fast, the step after a rise", e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 0, 14)), 16, waitroom.ReasonRise)
	// The median is in (150ms, 200ms]: 175ms, past the knee (the unloaded
	// 42.5ms, the first step's median, plus the margin, a tenth of the
	// target: 92.5ms) and up from 42.5ms: backed off by a tenth, at
	// least 2: 14 (not by the gradient, 16 × 142.5/175 = 13).
	st = e.autopilotStepWith(p, stepOf(100, 180*time.Millisecond, 0, 16))
	check("median past the knee, growing", st, 14, waitroom.ReasonBackoff)
	if st.Median != 175*time.Millisecond || st.Baseline != 42500*time.Microsecond {
		t.Fatalf("past the knee: %+v, want p50 175ms against the unloaded 42.5ms", st)
	}
	// In (150ms, 200ms] again, not falling, but the step right after the
	// back-off with 16 inside, more than the 14 of the limit: its excess
	// still leaves, held.
	check("median past the knee, draining", e.autopilotStepWith(p, stepOf(100, 180*time.Millisecond, 0, 16)), 14, waitroom.ReasonKnee)
	// In (100ms, 150ms]: 125ms, still past the knee but falling: held.
	check("median past the knee, falling", e.autopilotStepWith(p, stepOf(100, 120*time.Millisecond, 0, 13)), 14, waitroom.ReasonKnee)
	// Growing again, but 16 inside against the limit's 14 (not the step
	// after a back-off): the excess still leaves, held, not cut to 12.
	check("median past the knee, growing, more inside than the limit", e.autopilotStepWith(p, stepOf(100, 180*time.Millisecond, 0, 16)), 14, waitroom.ReasonKnee)
	// 85 fast and 15 in (400ms, 500ms]: p90 433.3ms, within a quarter
	// below the 500ms target, p50 43.8ms.
	near := stepOf(85, 40*time.Millisecond, 0, 13)
	near.Buckets[11], near.Requests = 15, 100
	check("near the target", e.autopilotStepWith(p, near), 14, waitroom.ReasonAtTarget)
	check("too little traffic", e.autopilotStepWith(p, stepOf(waitroom.AutopilotMinSamples-1, 5*time.Second, 0, 8)), 14, waitroom.ReasonIdle)
	// The 9 of the step too small to judge carry into this one.
	st = e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 0, 8))
	check("limit not in use", st, 14, waitroom.ReasonUnused)
	if st.Samples != 100+waitroom.AutopilotMinSamples-1 {
		t.Fatalf("step after one too small to judge: %d requests, want its 100 and the 9 carried", st.Samples)
	}

	p.Pin = 30
	check("pinned at once", e.autopilot(p, waitroom.AutopilotReport{}), 30, waitroom.ReasonPinned)
	check("pinned over a step", e.autopilotStepWith(p, stepOf(100, 5*time.Second, 0, 30)), 30, waitroom.ReasonPinned)
	p.Pin = -1
	// p90 in (500ms, 650ms]: 635ms; 30 × 500/635 = 23.6, within a cut of
	// a fifth to a half.
	st = e.autopilotStepWith(p, stepOf(100, 600*time.Millisecond, 0, 30))
	check("released, then slow", st, 23, waitroom.ReasonSlow)
	if st.Latency != 635*time.Millisecond {
		t.Fatalf("slow step: p90 %v, want 635ms", st.Latency)
	}
	check("slow while 30 drain", e.autopilotStepWith(p, stepOf(100, 600*time.Millisecond, 0, 30)), 23, waitroom.ReasonDraining)
	// Then a tenth of requests fail, three times the bound: new strain,
	// cut from the limit while the 30 still drain: 23 × 0.9 is less than
	// the least cut, a fifth.
	check("much worse while 30 drain", e.autopilotStepWith(p, stepOf(100, 600*time.Millisecond, 10, 30)), 18, waitroom.ReasonErrors)
	p.Pin = 23
	e.autopilotStepWith(p, stepOf(100, 600*time.Millisecond, 0, 30))
	p.Pin = -1
	check("slow again while 30 drain", e.autopilotStepWith(p, stepOf(100, 600*time.Millisecond, 0, 30)), 23, waitroom.ReasonDraining)
	// 85 fast, 15 in (500ms, 650ms]: p90 550ms, over but a tenth better
	// than 635ms.
	better := stepOf(85, 40*time.Millisecond, 0, 20)
	better.Buckets[12], better.Requests = 15, 100
	check("slow but improving", e.autopilotStepWith(p, better), 23, waitroom.ReasonRecovering)
	// 3% failed of 100, 20 inside: 20 × 0.97 is less than the least cut,
	// a fifth.
	st = e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 3, 20))
	check("failing", st, 16, waitroom.ReasonErrors)
	if st.ErrorShare() != 0.03 {
		t.Fatalf("error share %v, want 0.03", st.ErrorShare())
	}
	// Far too slow, but the step after a cut: a fifth of the 14 inside,
	// not the gradient (14 × 500ms/10s); then a fifth again, to the floor.
	check("far too slow after a cut", e.autopilotStepWith(p, stepOf(100, 10*time.Second, 0, 14)), 11, waitroom.ReasonSlow)
	check("far too slow, at the floor", e.autopilotStepWith(p, stepOf(100, 10*time.Second, 0, 11)), 10, waitroom.ReasonFloor)
	p.Max = 11
	check("fast, up to a lowered ceiling", e.autopilotStepWith(p, stepOf(100, 40*time.Millisecond, 0, 10)), 11, waitroom.ReasonCeiling)
	if waitroom.AutopilotBounds[12] != 650e3 {
		t.Fatal("the buckets moved: the figures above assume (500ms, 650ms] is bucket 12")
	}
	// A site slower for good: its median 175ms reads as past the knee of
	// the unloaded 42.5ms until that drops out of the baseline's windows
	// (AutopilotBaseSteps each), then it is the new unloaded latency and
	// the limit rises again.
	p.Max = 40
	limit := 11
	for i := 0; ; i++ {
		if i > 2*waitroom.AutopilotBaseSteps+1 {
			t.Fatalf("the unloaded latency still %v after %d steps at a median of 175ms", st.Baseline, i)
		}
		st = e.autopilotStepWith(p, stepOf(100, 180*time.Millisecond, 0, int64(limit)))
		if st.Limit < p.Min {
			t.Fatalf("limit %d under the floor %d", st.Limit, p.Min)
		}
		limit = st.Limit
		if st.Reason == waitroom.ReasonRise {
			if st.Baseline != 175*time.Millisecond || i < 2 {
				t.Fatalf("rose after %d steps against the unloaded %v, want 175ms after the old one expired", i, st.Baseline)
			}
			break
		}
		if st.Reason != waitroom.ReasonBackoff && st.Reason != waitroom.ReasonKnee && st.Reason != waitroom.ReasonFloor && st.Reason != waitroom.ReasonSettling {
			t.Fatalf("step %d at a median of 175ms: %+v", i, st)
		}
	}
	p.Min, p.Max = 3, 5
	if st := e.autopilot(p, waitroom.AutopilotReport{}); st.Limit != 5 {
		t.Fatalf("after the ceiling fell to 5: limit %d", st.Limit)
	}
}

// testAutopilotMerges reports from every instance at once: each request
// reported is counted in exactly one judged step, and steps are judged at
// most once per interval whatever the number of instances.
func testAutopilotMerges(t *testing.T, e *env) {
	p := waitroom.AutopilotParams{Interval: autopilotStep, Target: time.Second, Percentile: 90,
		ErrorsPPM: 20_000, Min: 10, Max: 1000, Pin: -1}
	e.autopilot(p, waitroom.AutopilotReport{})
	start := time.Now()
	var judged, steps atomic.Int64
	var wg sync.WaitGroup
	const workers, calls = 6, 40
	for range workers {
		wg.Go(func() {
			for range calls {
				st := e.autopilot(p, stepOf(1, 10*time.Millisecond, 0, 0))
				if st.Decided {
					judged.Add(st.Samples)
					steps.Add(1)
				}
				time.Sleep(autopilotStep / 20)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	st := e.autopilotStepWith(p, waitroom.AutopilotReport{})
	judged.Add(st.Samples)
	steps.Add(1)
	if got := judged.Load(); got != workers*calls {
		t.Fatalf("steps judged %d requests, want the %d reported", got, workers*calls)
	}
	if most := int64(time.Since(start)/autopilotStep) + 1; steps.Load() > most {
		t.Fatalf("%d steps judged in %v (reports over %v), want at most one per %v", steps.Load(), time.Since(start), elapsed, autopilotStep)
	}
}
