package waitroom

import (
	"sync"
	"sync/atomic"
	"time"
)

// liveRoom is a room as it runs: its configuration (replaced by a reload),
// what is in effect now (the configuration with the store's override on
// top), the latest stats and their recent history. It belongs to Rooms and
// outlives reloads, so nothing is handed over between configurations; the
// admitter refreshes all but the configuration.
type liveRoom struct {
	name   string
	cfg    atomic.Pointer[Room]
	eff    atomic.Pointer[Effective]
	stats  atomic.Pointer[Stats]
	hist   history
	spread atomic.Pointer[rateSpread] // of the last few minutes, for honest estimates
	// start is the store's last answer on autopilot.start_above
	// (autopilot_start.go); nil until the first.
	start atomic.Pointer[StartState]
	// noticed is the limit last sent to the webhook as this instance
	// last heard from the store, plus one (0: not yet heard);
	// autopilot_notice.go.
	noticed atomic.Int64
	// shuffleSeed is the seed of the opening's shuffle, once it ran (the
	// store's record, shown by the admin API); nil until the admitter has
	// asked the store.
	shuffleSeed atomic.Pointer[string]
	// lastVisit is when this instance last served a request for the room,
	// lastUse when it last told the store a filled room is in use (unix
	// nanoseconds); see sweepTemplates.
	lastVisit, lastUse atomic.Int64
	// waits are the waits of the visitors this instance let in lately.
	waits waitRing
	// ticked is set once a tick has read the room's stats: before that,
	// the empty stats it starts with say nothing about the line.
	ticked atomic.Bool
	// overrideRead is set once a tick has read the store's override: the
	// first read is no change of mode, only news to this instance.
	overrideRead atomic.Bool
	// view is the last tick's progress, which anchored polls are answered
	// from; marks are those polls' marks for the next tick (anchored.go).
	view  atomic.Pointer[progressView]
	marks touches
	// batch is the room's batched joins on this instance (joinbatch.go).
	batch joinBatch
	// asleep, visits and wake let a filled room with nobody in line and
	// nobody inside skip the store (sleep.go); counted is set once the
	// store counts the room toward its template's max_rooms (template.go).
	asleep, counted atomic.Bool
	visits          atomic.Uint64
	wake            chan struct{}
	// meter and auto are the room's autopilot on this instance: what it
	// measured since its last report, and the store's last answer
	// (autopilot_room.go).
	meter autopilotMeter
	auto  atomic.Pointer[AutopilotView]
	// known is the highest ticket this instance saw in the room lately,
	// told to the store as Visitor.Known (repair.go); admitted the
	// highest it saw admitted, told as Visitor.KnownAdmitted.
	known, admitted knownTickets
}

// Effective is what a room runs on now: its limits and mode after the
// runtime override, and the override itself.
type Effective struct {
	Limits   Limits
	Mode     Mode
	Override Override
	// Autopilot is where the room's autopilot stands (nil without one);
	// its limit is Limits.MaxActive unless the mode or a pin sets that.
	Autopilot *AutopilotView
}

// AdmitsNobody reports a room that lets nobody in now: paused, or a
// max_active of 0 (the configuration's or an override's). Its line gets no
// estimate (Answer.Stopped): a rate measured before the stop would promise
// a turn that is not coming.
func (e *Effective) AdmitsNobody() bool {
	return e.Mode == ModePaused || e.Limits.MaxActive <= 0
}

func newLiveRoom(r Room) *liveRoom {
	lr := &liveRoom{name: r.Name, wake: make(chan struct{}, 1)}
	lr.cfg.Store(&r)
	lr.stats.Store(&Stats{})
	lr.setOverride(Override{})
	return lr
}

// room is the room's configuration in service.
func (lr *liveRoom) room() *Room { return lr.cfg.Load() }

// configure puts a reloaded configuration in service, keeping the override
// in effect, and forgets the opening's shuffle when the opening moved.
func (lr *liveRoom) configure(r Room) {
	old := lr.cfg.Swap(&r)
	lr.setOverride(lr.eff.Load().Override)
	if old.Schedule.ShuffleKey() != r.Schedule.ShuffleKey() {
		lr.shuffleSeed.Store(nil)
	}
}

func (lr *liveRoom) setOverride(o Override) {
	lim, mode := o.Apply(*lr.room())
	lim, auto := lr.autopiloted(lim, mode, o)
	lr.eff.Store(&Effective{Limits: lim, Mode: mode, Override: o, Autopilot: auto})
}

func (lr *liveRoom) limits() Limits { return lr.eff.Load().Limits }

// admission is what the room does at now: the limits to ask the store with,
// whether a newcomer may take a ticket, and where its schedule stands.
// Before a sale opens and after it closes nobody goes in; before the
// pre-queue and after closing nobody new gets a ticket either.
func (lr *liveRoom) admission(now time.Time) (lim Limits, ph Phase, join bool) {
	eff := lr.eff.Load()
	lim, ph = eff.Limits, lr.room().Schedule.Phase(now)
	join = eff.Mode != ModeReject
	switch ph {
	case PhaseBefore, PhaseClosed:
		lim.MaxActive, join = 0, false
	case PhasePrequeue:
		lim.MaxActive, lim.Prequeue = 0, true
	}
	return lim, ph, join
}

// message is the notice in effect: the override's, else the configured one.
func (lr *liveRoom) message() string {
	if m := lr.eff.Load().Override.Message; m != nil {
		return *m
	}
	return lr.room().Message
}

// sampled records a tick's stats: the snapshot answers read, a point of the
// history, and the rate spread recomputed from it, so answers never walk
// the history.
func (lr *liveRoom) sampled(now time.Time, st Stats) {
	lr.stats.Store(&st)
	lr.hist.add(now, &st)
	lr.measureSpread(now)
}

// measureSpread recomputes the rate spread from the history.
func (lr *liveRoom) measureSpread(now time.Time) {
	var sp rateSpread
	for _, s := range lr.hist.list() {
		if now.Sub(s.At) > spreadWindow || s.AdmittedPerMinute <= 0 {
			continue
		}
		r := float64(s.AdmittedPerMinute) / 60
		if sp.low == 0 || r < sp.low {
			sp.low = r
		}
		sp.high = max(sp.high, r)
	}
	lr.spread.Store(&sp)
}

// pressure is how many times faster people joined the line than the room
// let them in over about the last minute, from the history: 1 or less
// when the line is not growing, 0 before there is a minute to look at.
func (lr *liveRoom) pressure() float64 {
	samples := lr.hist.list()
	if len(samples) < 2 {
		return 0
	}
	last := samples[len(samples)-1]
	for i := len(samples) - 2; i >= 0; i-- {
		age := last.At.Sub(samples[i].At)
		if age < time.Minute {
			continue
		}
		joined := float64(last.Joined-samples[i].Joined) * float64(time.Minute) / float64(age)
		return joined / float64(max(last.AdmittedPerMinute, 1))
	}
	return 0
}

// rateSpread is the slowest and fastest admission rate (per second) seen
// over the last spreadWindow, from the history samples.
type rateSpread struct{ low, high float64 }

// spreadWindow is how far back the estimate looks for an unsteady line.
const spreadWindow = 5 * time.Minute

// unsteady is how much faster the fastest minute must be than the slowest
// for the page to give a range rather than one figure.
const unsteady = 1.5

// Sample is one point of a room's recent history.
type Sample struct {
	At                time.Time `json:"t"`
	Waiting           int64     `json:"waiting"`
	Active            int64     `json:"active"`
	AdmittedPerMinute int64     `json:"admitted_per_minute"`
	Joined            int64     `json:"joined"` // every place or session so far, for the line's pressure
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
	h.samples[h.next] = Sample{At: now.UTC().Truncate(time.Second), Waiting: st.Waiting, Active: st.Active,
		AdmittedPerMinute: st.AdmittedLastMinute, Joined: st.Joined}
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
