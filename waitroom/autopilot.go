package waitroom

import (
	"context"
	"time"
)

// The controller's constants.
const (
	// AutopilotMinSamples is the fewest timed requests a step must have
	// measured across instances for the controller to judge the site (or
	// as many errors, over the bound, to judge it on those): with fewer it
	// holds the limit, and the step's counts carry into the next (up to
	// AutopilotMaxCarry steps), so a small room is judged over a longer
	// window instead of sitting on the line between judged and not.
	AutopilotMinSamples = 10
	// AutopilotMaxCarry is how many steps too small to judge carry their
	// counts into the next before they are dropped as stale: a window of at
	// most four steps.
	AutopilotMaxCarry = 3
	// AutopilotBaseSteps is the half-window of the unloaded latency: the
	// lowest median of the judged steps of the last AutopilotBaseSteps to
	// twice that (two windows, the older dropped as a new one fills), so
	// a site that became slower for good (its service time tripled) sets
	// a new baseline within two windows instead of being held to the old.
	AutopilotBaseSteps = 8
)

// AutopilotBounds are the upper bounds of the latency buckets an instance
// counts its requests in, in microseconds; a last bucket holds the rest.
// Fixed, so the counts of every instance add up in the store. Also spelled
// in redisstore/lua/autopilot.lua.
var AutopilotBounds = [...]int64{
	5e3, 10e3, 20e3, 35e3, 50e3, 75e3, 100e3, 150e3, 200e3, 300e3, 400e3, 500e3, 650e3, 800e3,
	1e6, 1.3e6, 1.6e6, 2e6, 2.5e6, 3.2e6, 4e6, 5e6, 6.5e6, 8e6, 10e6, 15e6, 20e6, 30e6, 60e6,
}

// AutopilotBuckets is the number of buckets: one past the last bound.
const AutopilotBuckets = len(AutopilotBounds) + 1

// bucketOf is the bucket of a request that took d.
func bucketOf(d time.Duration) int {
	us := d.Microseconds()
	for i, b := range AutopilotBounds {
		if us <= b {
			return i
		}
	}
	return len(AutopilotBounds)
}

// AutopilotReport is what one instance measured since its last report,
// which the store adds to the step's: requests timed per latency bucket
// (not the excluded nor a new visitor's first ones), requests that failed,
// every request, and the sessions inside as its last tick saw them.
type AutopilotReport struct {
	Buckets  [AutopilotBuckets]int64
	Errors   int64
	Requests int64
	Active   int64
}

// AutopilotParams is what the store decides with: the room's autopilot
// and its bounds now, and the operator's pin (-1 for none).
type AutopilotParams struct {
	Interval   time.Duration
	Target     time.Duration
	Percentile int
	ErrorsPPM  int64
	Min, Max   int
	Pin        int
}

// AutopilotReason says why the limit is what it is.
type AutopilotReason int

// The reasons, as the stores answer them (autopilot.lua's R_ codes).
const (
	ReasonStart      AutopilotReason = iota // no step judged yet: the limit starts at the floor
	ReasonIdle                              // too little traffic to judge: held
	ReasonRise                              // within target and the limit in use: raised
	ReasonUnused                            // within target but the limit not in use: held
	ReasonSlow                              // over the latency target: cut
	ReasonErrors                            // over the error bound: cut
	ReasonDraining                          // over, but a rush admitted earlier still drains: held
	ReasonPinned                            // the operator pinned max_active
	ReasonCeiling                           // within target at max_active
	ReasonFloor                             // over, at min_active
	ReasonFrozen                            // the store is unreachable: held (Go only)
	ReasonRecovering                        // over, but improving since the last cut: held
	ReasonAtTarget                          // within the last quarter below the target: held
	ReasonSettling                          // within target, raised the step before: held a step to see the rise's effect
	ReasonBackoff                           // within target, but the median past the knee and not falling: backed off
	ReasonKnee                              // within target, the median past the knee but falling: held
)

// AutopilotState is the limit the store decided and what it decided on.
type AutopilotState struct {
	Limit   int
	Step    int64         // how many steps were judged
	Latency time.Duration // the last step's percentile
	Median  time.Duration // the last step's p50
	// Baseline is the site's latency unloaded, as the controller judged
	// the last step: the lowest median of recent steps (0: none yet).
	Baseline  time.Duration
	ErrorsPPM int64 // the last step's error share, parts per million
	Samples   int64 // the requests the last step measured
	Active    int64 // the most sessions inside a report of the last step saw
	Reason    AutopilotReason
	Decided   bool // this call closed a step
}

// ErrorShare is the last step's error share, 0 to 1.
func (s AutopilotState) ErrorShare() float64 { return float64(s.ErrorsPPM) / 1e6 }

// Autopilots is the store side of the autopilot, an optional ability of a
// Store (found with As): every instance reports its measurements, and the
// store closes a step at most once per p.Interval by its own clock,
// deciding the limit from the step's merged measurements, so every
// instance applies the same limit. Errors: ErrUnavailable, ErrClosed.
type Autopilots interface {
	Autopilot(ctx context.Context, room string, p AutopilotParams, r AutopilotReport) (AutopilotState, error)
}

// AutopilotStep holds a step's merged measurements in a store.
type AutopilotStep struct {
	Buckets  [AutopilotBuckets]int64
	Errors   int64
	Requests int64
	Active   int64
	// Carried is how many steps before this one were too small to judge
	// and are counted in it (AutopilotMaxCarry).
	Carried int
}

// Add merges an instance's report into the step.
func (s *AutopilotStep) Add(r AutopilotReport) {
	for i, n := range r.Buckets {
		s.Buckets[i] += max(n, 0)
	}
	s.Errors += max(r.Errors, 0)
	s.Requests += max(r.Requests, 0)
	s.Active = max(s.Active, r.Active)
}

// Percentile is the latency at pct percent of the step's timed requests,
// interpolated within its bucket, in microseconds; ok is false with none.
// Integer arithmetic, as autopilot.lua does it, so both stores agree.
func (s *AutopilotStep) Percentile(pct int) (us int64, timed int64) {
	for _, n := range s.Buckets {
		timed += n
	}
	if timed == 0 {
		return 0, 0
	}
	rank := (int64(pct)*timed + 99) / 100
	var cum, lo int64
	for i, n := range s.Buckets {
		hi := 2 * AutopilotBounds[len(AutopilotBounds)-1]
		if i < len(AutopilotBounds) {
			hi = AutopilotBounds[i]
		}
		if n > 0 && cum+n >= rank {
			return lo + (hi-lo)*(rank-cum)/n, timed
		}
		cum += n
		lo = hi
	}
	return lo, timed
}

// DecideAutopilot is the controller, one step: the limit after the step
// measured s, from limit, with last the step before's judgement and base
// the site's unloaded latency (the lowest median of recent steps,
// microseconds; 0: none yet). It answers the limit, why, and the step's
// percentile, median and error share (ppm). The memory store runs it;
// autopilot.lua is the same rule in Lua (the conformance suite holds both
// to it).
//
// Over the target or the error bound, the limit falls at once, by at least
// a fifth and at most half, in proportion to how far over it is: by
// target/latency (the gradient of Netflix's and Envoy's limiters, with
// the operator's target standing for their unloaded latency) and by the
// share that failed, the deeper of the two; from the sessions actually
// inside when fewer than the limit.
// But it holds while more sessions are inside than the limit (a rush
// admitted earlier, which cannot be evicted, still drains) unless the
// site got much worse than the step before, and in the
// step after a cut or such a hold while what was over improves by a tenth
// (the site works off the backlog the rush left): cutting again would
// only punish the line for the past. A cut in the step after a cut (or a
// hold while recovering) is a fifth, not the gradient's: the latency then
// still carries the backlog the first cut is draining.
//
// Within both bounds the target is too late a signal: past the knee of
// the site's curve (its workers all busy) a queue grows every second by
// the load over the capacity, so the percentile integrates the excess and
// passes the target steps after the limit passed the knee. The median
// leaves the unloaded latency as soon as the queue forms, so it is the
// knee signal (the gradient limiters' and Vegas's, compared with the
// unloaded latency rather than the target): with the median more than a
// margin (half the baseline, at least a tenth of the target) over the
// baseline, the limit backs off while the median is not falling (the
// queue still grows: the limit is past the knee): by a tenth (at least 2),
// never by the latency's gradient: within the target a queue a tenth
// fewer sessions drain is no emergency, and a gradient read off a median
// that still carries the queue cut a 3-gateway simulation from 21 to 10
// in two steps with its p90 under the target. It holds while
// the median falls (the queue drains), and while more sessions are inside
// than the limit (a cut's excess still leaving: sessions cannot be
// evicted, so the queue they keep is not a sign the limit is too high; a
// back-off then only cut a simulated room from 16 to 12 under its ideal
// 20 while 21 inside drained). Over the target, the cut still comes
// (the draining hold there needs the latency no worse than half again).
// Under the knee it rises when
// the limit is in use (at least 80% of it inside): by a tenth (at least
// 2) while the percentile is under half the target, then by a twentieth
// (at least 1); it holds within the last quarter below the target, holds
// when the limit is not in use (a limit nobody reaches proves nothing
// about the site), and holds the step after a rise (ReasonSettling): the
// visitors a rise lets in come in over the next step, so a rise is judged
// by a step with the raised limit in effect throughout; but not while the
// median stays within a quarter of the margin of the baseline and the
// percentile under a third of the target, far under the knee (a capacity
// doubled is followed up at a rise a step, not every other step). With fewer than
// AutopilotMinSamples timed requests it holds unless as many errors are
// over the bound (and the store carries the step's counts into the next).
func DecideAutopilot(p AutopilotParams, limit int, s *AutopilotStep, last AutopilotState, base int64) (int, AutopilotReason, int64, int64, int64) {
	lat, timed := s.Percentile(p.Percentile)
	med, _ := s.Percentile(50)
	var errPPM int64
	if s.Requests > 0 {
		errPPM = s.Errors * 1_000_000 / s.Requests
	}
	// Only timed requests tell the latency (not a new visitor's first
	// ones, nor a session's past AutopilotSessionCap); with too few, the
	// step is judged on its errors alone, and only when they are enough
	// and over the bound: the gateway's 502s are not timed, and a site
	// that fails every request must still have its limit cut.
	failing := s.Errors*1_000_000 > p.ErrorsPPM*s.Requests
	if timed < AutopilotMinSamples && (s.Errors < AutopilotMinSamples || !failing) {
		return limit, ReasonIdle, lat, med, errPPM
	}
	target := p.Target.Microseconds()
	slow := timed >= AutopilotMinSamples && lat > target
	L, active := int64(limit), s.Active
	switch {
	case slow || failing:
		// Much worse than the step before (half as slow again, half as
		// many errors again): new strain, not the drain; cut from the
		// limit even while more than it are inside.
		worse := slow && lat*2 > last.Latency.Microseconds()*3 || failing && errPPM*2 > last.ErrorsPPM*3
		if active > L && !worse {
			return limit, ReasonDraining, lat, med, errPPM
		}
		switch last.Reason {
		case ReasonSlow, ReasonErrors, ReasonDraining, ReasonRecovering:
			better := (!slow || lat*10 < last.Latency.Microseconds()*9) && (!failing || errPPM*10 < last.ErrorsPPM*9)
			if better {
				return limit, ReasonRecovering, lat, med, errPPM
			}
		}
		from := L
		if active > 0 && active < L {
			from = active
		}
		// The cut is the deeper of the two: target/latency, and the share
		// that did not fail (a site failing 25% of requests was asked a
		// third more than it serves); by a fifth to a half.
		next, why := from*4/5, ReasonSlow
		again := last.Reason == ReasonSlow || last.Reason == ReasonErrors || last.Reason == ReasonFloor || last.Reason == ReasonRecovering
		if slow && !again {
			next = min(next, from*target/lat)
		}
		if failing {
			why = ReasonErrors
			if !again {
				next = min(next, from*(1_000_000-errPPM)/1_000_000)
			}
		}
		next = max(next, from/2)
		if next < int64(p.Min) {
			next, why = int64(p.Min), ReasonFloor
		}
		return int(next), why, lat, med, errPPM
	case active*10 < L*8:
		return limit, ReasonUnused, lat, med, errPPM
	}
	margin := max(base/2, target/10)
	switch {
	case base > 0 && timed >= AutopilotMinSamples && med > base+margin:
		if med >= last.Median.Microseconds() && active <= L {
			// By a tenth (at least 2); the target's cut is the fast fall.
			next := L - max(2, L/10)
			return int(max(next, int64(p.Min))), ReasonBackoff, lat, med, errPPM
		}
		return limit, ReasonKnee, lat, med, errPPM
	case lat*4 > target*3:
		return limit, ReasonAtTarget, lat, med, errPPM
	case last.Reason == ReasonRise && (base == 0 || timed < AutopilotMinSamples || med > base+margin/4 || lat*3 > target):
		// Far under the knee (the median within a quarter of the margin of
		// the baseline, the percentile under a third of the target) the
		// next rise needs no step to see the last.
		return limit, ReasonSettling, lat, med, errPPM
	}
	step := max(1, L/20)
	if lat*2 <= target {
		step = max(2, L/10)
	}
	next := L + step
	if next >= int64(p.Max) {
		return p.Max, ReasonCeiling, lat, med, errPPM
	}
	return int(next), ReasonRise, lat, med, errPPM
}

// AutopilotRecord is a room's autopilot as a store keeps it: the limit,
// when the step running began, and what it has measured so far.
type AutopilotRecord struct {
	Limit   int
	Started time.Time
	Step    AutopilotStep
	Last    AutopilotState
	// Lows are the lowest medians (microseconds, 0: none) of the judged
	// steps of the current baseline window and of the one before
	// (AutopilotBaseSteps each).
	Lows [2]int64
}

// Baseline is the unloaded latency the controller compares the median
// with: the lower of the two windows' lowest medians (0: none yet).
func (rec *AutopilotRecord) Baseline() int64 {
	switch {
	case rec.Lows[0] == 0:
		return rec.Lows[1]
	case rec.Lows[1] == 0:
		return rec.Lows[0]
	}
	return min(rec.Lows[0], rec.Lows[1])
}

// AutopilotBaseStep tells whether a step whose limit was limit, with
// active sessions inside at most and timed requests timed, may set the
// baseline: the limit in use (at least 80% of it inside, as a rise needs)
// and its timed requests at least AutopilotMinSamples and a quarter of
// the limit. A quiet step's median is not the site's unloaded latency
// under the room's traffic: two sessions' instant 404s just before a sale
// would set it at a few milliseconds, and every honest median after
// would read as past the knee until the windows rotate.
func AutopilotBaseStep(limit int, active, timed int64) bool {
	L := int64(limit)
	return active*10 >= L*8 && timed >= AutopilotMinSamples && timed*4 >= L
}

// Clamp keeps a limit within p's bounds (a reload may have moved them).
func (p AutopilotParams) Clamp(limit int) int {
	return max(p.Min, min(p.Max, limit))
}

// Report is the store's side of Autopilots.Autopilot for a store that
// keeps rec itself (the memory store): rec nil (Limit 0) starts at p.Min.
// It merges r into the step running; once p.Interval has passed since the
// step began, by the store's clock now, it judges the step (or applies the
// pin) and starts the next.
func (rec *AutopilotRecord) Report(now time.Time, p AutopilotParams, r AutopilotReport) AutopilotState {
	if rec.Started.IsZero() {
		rec.Limit, rec.Started = p.Min, now
		rec.Last = AutopilotState{Reason: ReasonStart}
		if p.Pin >= 0 {
			rec.Limit, rec.Last.Reason = p.Pin, ReasonPinned
		}
	}
	rec.Step.Add(r)
	out := rec.Last
	if now.Sub(rec.Started) >= p.Interval {
		var why AutopilotReason
		var lat, med, errPPM int64
		base := rec.Baseline()
		inEffect := p.Clamp(rec.Limit)
		if p.Pin >= 0 {
			inEffect = p.Pin
		}
		if p.Pin >= 0 {
			lat, _ = rec.Step.Percentile(p.Percentile)
			med, _ = rec.Step.Percentile(50)
			if rec.Step.Requests > 0 {
				errPPM = rec.Step.Errors * 1_000_000 / rec.Step.Requests
			}
			rec.Limit, why = p.Pin, ReasonPinned
		} else {
			rec.Limit, why, lat, med, errPPM = DecideAutopilot(p, p.Clamp(rec.Limit), &rec.Step, rec.Last, base)
		}
		out = AutopilotState{Step: rec.Last.Step + 1, Latency: time.Duration(lat) * time.Microsecond,
			Median: time.Duration(med) * time.Microsecond, Baseline: time.Duration(base) * time.Microsecond,
			ErrorsPPM: errPPM, Samples: rec.Step.Requests, Active: rec.Step.Active, Reason: why, Decided: true}
		rec.Last = out
		rec.Last.Decided = false
		// The step's median joins the baseline when the limit was in use
		// and enough requests were timed to trust it (AutopilotBaseStep);
		// every AutopilotBaseSteps steps the older window is dropped.
		if _, timed := rec.Step.Percentile(50); AutopilotBaseStep(inEffect, rec.Step.Active, timed) && (rec.Lows[0] == 0 || med < rec.Lows[0]) {
			rec.Lows[0] = max(med, 1)
		}
		if out.Step%AutopilotBaseSteps == 0 {
			rec.Lows = [2]int64{0, rec.Lows[0]}
		}
		carried := rec.Step.Carried
		if why == ReasonIdle && carried < AutopilotMaxCarry {
			// Too few to judge: the counts carry into the next step.
			rec.Step.Carried++
		} else {
			rec.Step = AutopilotStep{}
		}
		rec.Started = now
	}
	if p.Pin >= 0 {
		rec.Limit = p.Pin
		out.Reason = ReasonPinned
	} else {
		rec.Limit = p.Clamp(rec.Limit)
	}
	out.Limit = rec.Limit
	return out
}
