package waitroom

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The autopilot as a room runs it: every admitted request this instance
// forwards is measured (Rooms.Measure), each tick reports what was
// measured since the last to the store (Autopilots), which judges the
// limit once per step for every instance, and the limit the store
// answers becomes the room's MaxActive (and its admission rate, scaled
// alike) in Effective, the one place both the tick and the gate read their
// limits from. See docs/autopilot.md.

// AutopilotView is where a room's autopilot stands on this instance: the
// store's last answer, the limit and rate it puts in effect, and whether
// it is frozen (the store did not answer the last tick).
type AutopilotView struct {
	AutopilotState
	// Rate is the admission rate in effect with Limit.
	Rate Rate
	// Frozen: the store could not be asked; Limit is the last it said.
	Frozen bool
	// Target, Percentile and the error bound (ppm), for the reason's
	// wording; Min and Max the bounds.
	Target     time.Duration
	Percentile int
	BoundPPM   int64
	Min, Max   int
	// StartAbove is autopilot.start_above (unlimited: none) and Arrivals
	// the rate judged against it, per second (NaN: not yet); Quiet says
	// the room lets everyone straight in up to Max (arrivals under it,
	// the site healthy).
	StartAbove Rate
	Arrivals   float64
	Quiet      bool
}

// ReasonText says why the limit is what it is, for the admin API and the
// dashboard: "p90 1.4s > 800ms".
func (v *AutopilotView) ReasonText() string {
	if v.Frozen {
		return "store unreachable: frozen"
	}
	if v.Quiet {
		return fmt.Sprintf("arrivals %s <= start_above %s, site healthy: straight in up to max_active", arrivalsText(v.Arrivals), v.StartAbove)
	}
	p := fmt.Sprintf("p%d %s", v.Percentile, roundLatency(v.Latency))
	errs := fmt.Sprintf("errors %.1f%%", float64(v.AutopilotState.ErrorsPPM)/1e4)
	switch v.Reason {
	case ReasonStart:
		return "starting at min_active"
	case ReasonIdle:
		return fmt.Sprintf("too little traffic to judge (%d requests, under %d timed): holding", v.Samples, AutopilotMinSamples)
	case ReasonRise:
		return fmt.Sprintf("%s <= %s: rising", p, v.Target)
	case ReasonUnused:
		return fmt.Sprintf("%s <= %s, limit not in use (%d inside): holding", p, v.Target, v.Active)
	case ReasonSlow:
		return fmt.Sprintf("%s > %s", p, v.Target)
	case ReasonErrors:
		return fmt.Sprintf("%s > %.1f%%", errs, float64(v.BoundPPM)/1e4)
	case ReasonDraining:
		return fmt.Sprintf("%s or %s over, %d inside still draining: holding", p, errs, v.Active)
	case ReasonPinned:
		return "pinned"
	case ReasonCeiling:
		return fmt.Sprintf("%s <= %s: at max_active", p, v.Target)
	case ReasonRecovering:
		return fmt.Sprintf("%s / %s over but improving since the cut: holding", p, errs)
	case ReasonAtTarget:
		return fmt.Sprintf("%s, within a quarter of %s: holding", p, v.Target)
	case ReasonBackoff:
		return fmt.Sprintf("%s <= %s, but p50 %s past the unloaded %s and not falling: backing off", p, v.Target, roundLatency(v.Median), roundLatency(v.Baseline))
	case ReasonKnee:
		return fmt.Sprintf("%s <= %s, p50 %s past the unloaded %s but falling or draining (%d inside): holding", p, v.Target, roundLatency(v.Median), roundLatency(v.Baseline), v.Active)
	case ReasonSettling:
		return fmt.Sprintf("%s <= %s, raised the step before: holding a step to see it", p, v.Target)
	case ReasonFloor:
		return fmt.Sprintf("%s / %s over: at min_active", p, errs)
	}
	return "unknown"
}

// roundLatency keeps three significant figures at most.
func roundLatency(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// autopilotMeter counts this instance's measurements since its last
// report, lock-free: Measure runs on every admitted request.
type autopilotMeter struct {
	buckets          [AutopilotBuckets]atomic.Int64
	errors, requests atomic.Int64
	// perSession counts each session's measured requests in the window
	// since capSince (unix ns): see sessionCap.
	perSession atomic.Pointer[sessionCap]
	capSince   atomic.Int64
}

// take empties the meter into a report, and starts a new window of the
// per-session cap once interval has passed since the last.
func (m *autopilotMeter) take(interval time.Duration) AutopilotReport {
	var r AutopilotReport
	for i := range m.buckets {
		r.Buckets[i] = m.buckets[i].Swap(0)
	}
	r.Errors, r.Requests = m.errors.Swap(0), m.requests.Swap(0)
	now := time.Now().UnixNano()
	if since := m.capSince.Load(); now-since >= int64(interval) {
		m.capSince.Store(now)
		m.perSession.Store(nil) // allocated again by the next Measure
	}
	return r
}

// AutopilotSessionCap is how many requests of one session an instance
// measures in one autopilot interval (a window of its own clock, which a
// store's step may straddle: twice this at most per step and instance).
// Past it the session's requests are not measured at all, neither timed
// nor counted: one visitor firing thousands of cheap requests (the site's
// fast 404s) would otherwise be most of the step's sample and steer the
// limit up, or dilute the error share. A visitor who browses asks a page
// and its calls every few seconds; eight in a 15 s step is most of them.
const AutopilotSessionCap = 8

// AutopilotSessionErrors is how many of a session's measured requests in
// a window may count as errors: past it, its errors are not measured at
// all (neither an error nor a request). One visitor who makes the site
// fail on purpose (a request that sets off its 5xx) would otherwise count
// its whole cap as errors, enough against some fifty browsing sessions to
// pass the 2% bound and cut the limit step after step. A site that fails
// for everyone still reads its whole share: every session's first errors
// count, and the ones dropped are not counted as requests either.
const AutopilotSessionErrors = 2

// A sessionCap's rows are sized to the room: sessionCapPerSession counters
// a row for each of max_active's sessions (a session shares both its
// counters with another's rarely at that load), a power of two between
// sessionCapMinSlots and sessionCapMaxSlots: two rows of byte counters,
// 1 KiB to 32 KiB a room whatever the number of sessions. Template rooms
// (max_rooms up to 100,000) would otherwise hold 32 KiB each.
const (
	sessionCapPerSession = 8
	sessionCapMinSlots   = 1 << 9
	sessionCapMaxSlots   = 1 << 14
)

// sessionCapSlots is the row width for a room of maxActive sessions.
func sessionCapSlots(maxActive int) int {
	n := sessionCapMinSlots
	for n < sessionCapMaxSlots && n/sessionCapPerSession < maxActive {
		n <<= 1
	}
	return n
}

// sessionCap counts measured requests, and errors, per session in bounded
// memory: a count-min sketch (two rows of counters, a session's count the
// smaller of its two), so it never undercounts a session. A session that
// shares both its counters with busy ones may be capped early, which loses
// some of its samples but does not bias them (with 2,000 sessions asking
// the cap each in a window of a 32 KiB sketch, about 0.5% of their
// requests go unmeasured so, with 5,000 about 3%:
// TestAutopilotMeter_SessionCap); a sprayer caps only the few that share
// its counters. A session's errors are counted in the same rows under a
// key of their own (errorKey). The hash is seeded per window, so which
// sessions share counters cannot be planned. Counters are bytes, four to a
// word, stopping at 255.
type sessionCap struct {
	seed  maphash.Seed
	slots uint64 // a power of two
	// cells holds the two rows, slots counters each.
	cells []atomic.Uint32
}

func newSessionCap(slots int) *sessionCap {
	return &sessionCap{seed: maphash.MakeSeed(), slots: uint64(slots), cells: make([]atomic.Uint32, 2*slots/4)}
}

// bytes is the sketch's size.
func (c *sessionCap) bytes() int { return 4 * len(c.cells) }

// admit counts one request of the session id and says whether it is
// within AutopilotSessionCap.
func (c *sessionCap) admit(id string) bool {
	return c.count(maphash.String(c.seed, id)) <= AutopilotSessionCap
}

// admitError counts one error of the session id and says whether it is
// within AutopilotSessionErrors.
func (c *sessionCap) admitError(id string) bool {
	return c.count(errorKey(maphash.String(c.seed, id))) <= AutopilotSessionErrors
}

// errorKey is the hash a session's errors are counted under: a bijection
// of its requests' hash (so two sessions share it no more often) whose
// counters are others (the low bits and those past 32 change).
func errorKey(h uint64) uint64 {
	return bits.RotateLeft64(h, 17) * 0x9e3779b97f4a7c15
}

// count bumps the key h's counter in each row and returns the smaller.
func (c *sessionCap) count(h uint64) uint32 {
	a := c.bump(h % c.slots)
	b := c.bump(c.slots + (h>>32)%c.slots)
	return min(a, b)
}

// bump adds one to the counter at slot (of both rows' slots), unless it
// stands at 255, and returns its count.
func (c *sessionCap) bump(slot uint64) uint32 {
	w, shift := &c.cells[slot/4], slot%4*8
	for {
		old := w.Load()
		n := old >> shift & 0xff
		if n == 0xff || w.CompareAndSwap(old, old+1<<shift) {
			return min(n+1, 0xff)
		}
	}
}

// window is the sessionCap of the window in effect, made on first use
// with rows of slots counters.
func (m *autopilotMeter) window(slots int) *sessionCap {
	c := m.perSession.Load()
	if c != nil {
		return c
	}
	fresh := newSessionCap(slots)
	if m.perSession.CompareAndSwap(nil, fresh) {
		m.capSince.CompareAndSwap(0, time.Now().UnixNano()) // the first window starts now
		return fresh
	}
	if c = m.perSession.Load(); c == nil { // the window turned meanwhile: count in the new one
		c = fresh
	}
	return c
}

// rest frees the window's sketch: the room has nobody inside and its ticks
// stop (sleep.go), so no window would turn to free it. The next measured
// request makes a fresh one.
func (m *autopilotMeter) rest() {
	m.perSession.Store(nil)
}

// Measurement is what the proxy learned of the site from one admitted
// request (proxy.Timing), for Rooms.Measure.
type Measurement struct {
	Room    string
	Visitor string // the session, for AutopilotSessionCap
	Path    string
	// Status is the status sent: the site's, the gateway's 502 or 504, or
	// 499 (the client went away first).
	Status int
	// FirstByte is the time from the request written whole to the site
	// to the first byte of its answer (a 499's: the time waited), when
	// Timed.
	FirstByte time.Duration
	Timed     bool
	// Entered is when the session began; zero: unknown.
	Entered time.Time
}

// Measure records the site's answer to an admitted request of room: its
// status (a 5xx, the gateway's own 502 and 504 included, is an error) and
// its time to the first byte. Not measured: paths the room's autopilot
// excludes, an upgraded connection (101), and a session's requests past
// AutopilotSessionCap in the window, and its errors past
// AutopilotSessionErrors. A client that went away (499) is a
// timed sample at the time it waited if that was longer than the target
// (it gave up on a slow site), and nothing otherwise. The first
// Warmup of a session (AutopilotWarmup by default) counts toward errors only; so does an
// answer with no time (Timed false: the site could not be reached).
// Cheap: a few atomic adds. A room without an autopilot ignores it.
func (rs *Rooms) Measure(m Measurement) {
	lr := rs.get(m.Room)
	if lr == nil {
		return
	}
	ap := lr.room().Autopilot
	if ap == nil || m.Status == http.StatusSwitchingProtocols || ap.Excluded(m.Path) {
		return
	}
	warm := !m.Entered.IsZero() && time.Since(m.Entered) < ap.Warmup
	if m.Status == 499 && (!m.Timed || m.FirstByte <= ap.Target || warm) {
		return
	}
	c := lr.meter.window(sessionCapSlots(lr.room().Limits.MaxActive))
	if !c.admit(m.Visitor) {
		return
	}
	failed := m.Status >= 500
	if failed && !c.admitError(m.Visitor) {
		return
	}
	lr.meter.requests.Add(1)
	if failed {
		lr.meter.errors.Add(1)
	}
	if !m.Timed || warm {
		return
	}
	lr.meter.buckets[bucketOf(m.FirstByte)].Add(1)
}

// autopiloted puts the autopilot's limit into lim, the room's limits under
// the override o in mode: not while the operator pins max_active (o's own
// applies), nor in a mode that sets the limits itself (paused, reject,
// passthrough). Before the store's first answer the limit is min_active.
func (lr *liveRoom) autopiloted(lim Limits, mode Mode, o Override) (Limits, *AutopilotView) {
	r := lr.room()
	ap := r.Autopilot
	if ap == nil {
		return lim, nil
	}
	v := lr.auto.Load()
	if v == nil {
		v = &AutopilotView{AutopilotState: AutopilotState{Limit: ap.MinActive, Reason: ReasonStart}}
	}
	c := *v
	c.Target, c.Percentile, c.BoundPPM, c.Min, c.Max = ap.Target, ap.Percentile, ap.ErrorsPPM, ap.MinActive, r.Limits.MaxActive
	if o.MaxActive != nil {
		c.Limit, c.Reason = *o.MaxActive, ReasonPinned
	} else {
		c.Limit = max(ap.MinActive, min(r.Limits.MaxActive, c.Limit))
	}
	if !ap.StartAbove.IsUnlimited() {
		s := lr.start.Load()
		c.StartAbove, c.Arrivals = ap.StartAbove, s.PerSecond()
		// While the store says the room is quiet (autopilot_start.go) it
		// stays out of the way: the ceiling applies. The store's
		// controller goes on judging (its limit rises while the site keeps
		// up with the crowd inside), and takes over once the room is on.
		// No answer yet: on.
		if o.MaxActive == nil && s != nil && !s.On {
			c.Limit, c.Quiet = r.Limits.MaxActive, true
		}
	}
	c.Rate = scaleRate(r.Limits.AdmitRate, c.Limit, r.Limits.MaxActive)
	if o.AdmitRate != nil {
		c.Rate = *o.AdmitRate
	}
	if mode != ModeFIFO && mode != ModeRandom || o.MaxActive != nil {
		return lim, &c
	}
	lim.MaxActive = c.Limit
	if o.AdmitRate == nil {
		lim.AdmitRate, lim.AdmitBurst = c.Rate, scaleBurst(r.Limits.AdmitBurst, c.Limit, r.Limits.MaxActive)
	}
	return lim, &c
}

// scaleRate is the admission rate that goes with limit: admit_rate (the
// ceiling's) scaled by limit/ceiling, at least 1 per its period; an
// unlimited admit_rate stays unlimited (max_active alone bounds the room).
func scaleRate(ceil Rate, limit, ceiling int) Rate {
	if ceil.IsUnlimited() || ceiling <= 0 || limit >= ceiling {
		return ceil
	}
	return Rate{N: max(1, ceil.N*int64(limit)/int64(ceiling)), Per: ceil.Per}
}

// scaleBurst scales the token bucket alike, at least 1.
func scaleBurst(burst, limit, ceiling int) int {
	if ceiling <= 0 || limit >= ceiling {
		return burst
	}
	return max(1, burst*limit/ceiling)
}

// autopilot reports this instance's measurements to the store and puts the
// limit it answers in effect, under the override o just read. A store that
// fails leaves the last limit in effect, frozen (the tick reports the
// failure itself).
func (a *Admitter) autopilot(ctx context.Context, o Override) {
	lr := a.lr
	room := lr.room()
	ap := room.Autopilot
	if ap == nil {
		lr.auto.Store(nil)
		return
	}
	aps, ok := As[Autopilots](a.rs.store)
	if !ok {
		return
	}
	rep := lr.meter.take(ap.Interval)
	rep.Active = lr.stats.Load().Active
	pin := -1
	if o.MaxActive != nil {
		pin = *o.MaxActive
	}
	p := AutopilotParams{Interval: ap.Interval, Target: ap.Target, Percentile: ap.Percentile, ErrorsPPM: ap.ErrorsPPM,
		Min: ap.MinActive, Max: room.Limits.MaxActive, Pin: pin}
	st, err := aps.Autopilot(ctx, lr.name, p, rep)
	if err != nil {
		// A tick that ran out of its time keeps the limit as it is; a
		// store that fails freezes it, and says so.
		if !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			a.freeze()
		}
		return
	}
	a.startAbove(ctx, ap, st)
	prev := lr.auto.Load()
	lr.auto.Store(&AutopilotView{AutopilotState: st})
	// The override in effect now: an operator's change that came in
	// while the store answered (Rooms.Refresh) must not be undone by o.
	lr.setOverride(lr.eff.Load().Override)
	v := lr.eff.Load().Autopilot
	if v == nil {
		return
	}
	a.rs.publishAutopilot(lr, v)
	// The autopilot's own moves: a pin is the operator's, not news to them.
	// Nor the controller's moves while the room is quiet (start_above):
	// the ceiling is in effect, and the line's start says when it is not.
	if st.Decided && st.Reason != ReasonPinned && !v.Quiet && (prev == nil || prev.Limit != st.Limit) {
		from := ap.MinActive
		if prev != nil {
			from = prev.Limit
		}
		a.log.Info("autopilot moved the limit", zap.Int("from", from), zap.Int("to", st.Limit), zap.String("reason", v.ReasonText()))
	}
	// The webhook: the limit in effect, coalesced in the store
	// (autopilot_notice.go).
	a.notifyAutopilot(ctx, v)
}

// declareAutopilots publishes the autopilot of every room that has one
// as it stands (its start before the first tick), so its series read the
// limit in effect from the start, not "No data".
func (rs *Rooms) declareAutopilots(live map[string]*liveRoom) {
	for _, lr := range live {
		if v := lr.eff.Load().Autopilot; v != nil {
			rs.publishAutopilot(lr, v)
		}
	}
}

// freeze freezes the room's autopilot and publishes it so.
func (a *Admitter) freeze() {
	a.lr.freezeAutopilot()
	if v := a.lr.eff.Load().Autopilot; v != nil {
		a.rs.publishAutopilot(a.lr, v)
	}
}

// freezeAutopilot marks the room's autopilot frozen: the store did not
// answer, so its limit stays as it was (and shows so).
func (lr *liveRoom) freezeAutopilot() {
	v := lr.auto.Load()
	if v == nil || lr.room().Autopilot == nil {
		return
	}
	c := *v
	c.Frozen = true
	lr.auto.Store(&c)
	lr.setOverride(lr.eff.Load().Override)
}

// AutopilotObserver is an Observer that publishes a room's autopilot
// (metrics.Metrics: waitroom_autopilot_limit and the figures beside it).
type AutopilotObserver interface {
	Autopilot(room string, v *AutopilotView)
}

// AutopilotNotifier is a Notifier that tells of the limit the autopilot
// moved (the webhook room.autopilot_changed), from the limit last told
// (autopilot_notice.go); AutopilotWanted says whether anyone listens.
type AutopilotNotifier interface {
	AutopilotChanged(room string, from int, v *AutopilotView)
	AutopilotWanted() bool
}

// Measures reports whether a request to path in room would be measured:
// the room has an autopilot that does not exclude path.
func (rs *Rooms) Measures(room, path string) bool {
	lr := rs.get(room)
	if lr == nil {
		return false
	}
	ap := lr.room().Autopilot
	return ap != nil && !ap.Excluded(path)
}
