package waitroom

import (
	"sync"
	"sync/atomic"
	"time"
)

// line is a room at run time: its configuration, what is in effect now
// (the configuration with the store's override on top), the latest stats
// and their recent history. The admitter refreshes all but the room.
type line struct {
	room   Room
	eff    atomic.Pointer[Effective]
	stats  atomic.Pointer[Stats]
	hist   history
	spread atomic.Pointer[rateSpread] // of the last few minutes, for honest estimates
	// shuffleSeed is the seed of the opening's shuffle, once it ran (the
	// store's record, shown by the admin API).
	shuffleSeed atomic.Pointer[string]
}

// rateSpread is the slowest and fastest admission rate (per second) seen
// over the last spreadWindow, from the history samples.
type rateSpread struct{ low, high float64 }

// spreadWindow is how far back the estimate looks for an unsteady line.
const spreadWindow = 5 * time.Minute

// unsteady is how much faster the fastest minute must be than the slowest
// for the page to give a range rather than one figure.
const unsteady = 1.5

// measureSpread recomputes the rate spread from the history; the admitter
// calls it after each sample, so answers never walk the history.
func (ln *line) measureSpread(now time.Time) {
	var sp rateSpread
	for _, s := range ln.hist.list() {
		if now.Sub(s.At) > spreadWindow || s.AdmittedPerMinute <= 0 {
			continue
		}
		r := float64(s.AdmittedPerMinute) / 60
		if sp.low == 0 || r < sp.low {
			sp.low = r
		}
		sp.high = max(sp.high, r)
	}
	ln.spread.Store(&sp)
}

// Effective is what a room runs on now: its limits and mode after the
// runtime override, and the override itself.
type Effective struct {
	Limits   Limits
	Mode     Mode
	Override Override
}

func newLine(r Room) *line {
	ln := &line{room: r}
	ln.stats.Store(&Stats{})
	ln.setOverride(Override{})
	return ln
}

func (ln *line) setOverride(o Override) {
	lim, mode := o.Apply(ln.room)
	ln.eff.Store(&Effective{Limits: lim, Mode: mode, Override: o})
}

func (ln *line) limits() Limits { return ln.eff.Load().Limits }

// admission is what the room does at now: the limits to ask the store with,
// whether a newcomer may take a ticket, and where its schedule stands.
// Before a sale opens and after it closes nobody goes in; before the
// pre-queue and after closing nobody new gets a ticket either.
func (ln *line) admission(now time.Time) (lim Limits, ph Phase, join bool) {
	eff := ln.eff.Load()
	lim, ph = eff.Limits, ln.room.Schedule.Phase(now)
	join = eff.Mode != ModeReject
	switch ph {
	case PhaseBefore, PhaseClosed:
		lim.MaxActive, join = 0, false
	case PhasePrequeue:
		lim.MaxActive = 0
	}
	return lim, ph, join
}

// message is the notice in effect: the override's, else the configured one.
func (ln *line) message() string {
	if m := ln.eff.Load().Override.Message; m != nil {
		return *m
	}
	return ln.room.Message
}

// Sample is one point of a room's recent history.
type Sample struct {
	At                time.Time `json:"t"`
	Waiting           int64     `json:"waiting"`
	Active            int64     `json:"active"`
	AdmittedPerMinute int64     `json:"admitted_per_minute"`
}

// History keeps HistorySpan of samples, one per HistoryStep.
const (
	HistoryStep = 10 * time.Second
	HistorySpan = 15 * time.Minute
)

// history is a ring of samples, one per HistoryStep at most.
type history struct {
	mu      sync.Mutex
	samples [int(HistorySpan / HistoryStep)]Sample
	next, n int
}

func (h *history) add(now time.Time, st *Stats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n > 0 {
		last := h.samples[(h.next+len(h.samples)-1)%len(h.samples)]
		if now.Sub(last.At) < HistoryStep {
			return
		}
	}
	h.samples[h.next] = Sample{At: now.UTC().Truncate(time.Second), Waiting: st.Waiting, Active: st.Active, AdmittedPerMinute: st.AdmittedLastMinute}
	h.next = (h.next + 1) % len(h.samples)
	h.n = min(h.n+1, len(h.samples))
}

// list returns the samples, oldest first.
func (h *history) list() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Sample, 0, h.n)
	for i := range h.n {
		out = append(out, h.samples[(h.next-h.n+i+2*len(h.samples))%len(h.samples)])
	}
	return out
}

// Adopt carries over from the gate a reload replaces what it knew of the
// rooms both have: the override in effect, the stats and their history, so
// the dashboard and the wait estimates do not start from nothing.
func (g *Gate) Adopt(old *Gate) {
	for name, ln := range g.rooms {
		prev := old.rooms[name]
		if prev == nil {
			continue
		}
		ln.setOverride(prev.eff.Load().Override)
		ln.shuffleSeed.Store(prev.shuffleSeed.Load())
		ln.stats.Store(prev.stats.Load())
		prev.hist.mu.Lock()
		ln.hist.samples, ln.hist.next, ln.hist.n = prev.hist.samples, prev.hist.next, prev.hist.n
		prev.hist.mu.Unlock()
	}
	if old.outage.Load() {
		g.outage.Store(true)
	}
}
