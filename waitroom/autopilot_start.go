package waitroom

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The room that turns itself on (autopilot.start_above): arrivals are
// judged from the store's count of every visitor who joined the room
// (Stats.Joined, which every instance's tick reads alike) over the last
// ArrivalWindow of this instance's ticks, so every instance computes the
// same rate from the same numbers, give or take a tick. While the rate
// stays at or under start_above and the site is healthy, the room lets
// everyone straight in up to max_active; once it passes, the autopilot's
// limit applies and the line forms; it turns off again when arrivals are
// back under start_above and the line is empty.

// ArrivalWindow is the span arrivals are judged over.
const ArrivalWindow = 10 * time.Second

// arrivalSample is one tick's count of joins so far.
type arrivalSample struct {
	at     time.Time
	joined int64
}

// arrivals keeps the ticks of the last ArrivalWindow and what they say.
type arrivals struct {
	mu      sync.Mutex
	samples []arrivalSample // oldest first, spanning just over the window
	rate    atomic.Uint64   // math.Float64bits of arrivals per second, once measured
	judged  atomic.Bool     // rate was measured over at least half the window
	on      atomic.Bool     // the room queues: arrivals passed start_above
}

// note records a tick's stats; above is start_above (unlimited: off).
func (w *arrivals) note(now time.Time, st *Stats, above Rate) {
	if above.IsUnlimited() {
		w.on.Store(false)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// A count that went back (the room was made again) starts over.
	if n := len(w.samples); n > 0 && st.Joined < w.samples[n-1].joined {
		w.samples = w.samples[:0]
	}
	w.samples = append(w.samples, arrivalSample{now, st.Joined})
	// Keep one sample at or before the window's start, so the rate spans it.
	drop := 0
	for drop+1 < len(w.samples) && now.Sub(w.samples[drop+1].at) >= ArrivalWindow {
		drop++
	}
	w.samples = w.samples[drop:]
	first := w.samples[0]
	span := now.Sub(first.at)
	if span < ArrivalWindow/2 {
		return // too short a span to judge (a new gateway): as it was
	}
	rate := float64(st.Joined-first.joined) / span.Seconds()
	w.rate.Store(math.Float64bits(rate))
	w.judged.Store(true)
	switch {
	case rate > above.PerSecond():
		w.on.Store(true)
	case st.Waiting == 0:
		w.on.Store(false)
	}
}

// perSecond is the arrival rate last judged; NaN before the first.
func (w *arrivals) perSecond() float64 {
	if !w.judged.Load() {
		return math.NaN()
	}
	return math.Float64frombits(w.rate.Load())
}

// strained reports a reason that says the site showed strain: the line
// forms then whatever the arrivals.
func strained(r AutopilotReason) bool {
	switch r {
	case ReasonSlow, ReasonErrors, ReasonDraining, ReasonFloor, ReasonRecovering:
		return true
	}
	return false
}

// arrivalsText writes a rate per second for the reason: "12.5/s".
func arrivalsText(perSecond float64) string {
	if math.IsNaN(perSecond) {
		return "not yet measured"
	}
	return fmt.Sprintf("%.3g/s", perSecond)
}
