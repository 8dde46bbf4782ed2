package waitroom

import (
	"context"
	"fmt"
	"math"
	"time"

	"go.uber.org/zap"
)

// The room that turns itself on (autopilot.start_above). Whether the room
// is quiet (everyone straight in up to max_active) or on (the autopilot's
// limit applies, the line forms) is one decision the store keeps for
// every instance, by its own clock (StartRecord.Judge; the same rule in
// redisstore/lua/autostart.lua), latched:
//
//   - it turns on at once when the arrivals, the store's count of every
//     visitor who joined the room (Stats.Joined) over the last
//     ArrivalWindow of store time, pass start_above, or when the
//     controller's last step showed strain (strained);
//   - it turns quiet only when the arrivals are back at or under
//     start_above, the line is empty and the controller shows no strain,
//     all three without a break for the hold (StartHold, or two steps
//     of the controller if longer).
//
// So a gateway started mid-rush reads the room's state from the store at
// its first tick instead of judging from a window of its own, two
// gateways never disagree for longer than a tick, and a room that just
// turned on stays on for a hold at least: it does not flap between quiet
// and on while a rush hovers around start_above or the controller's
// strain comes and goes. A gateway that has no answer from the store yet
// applies the controller's limit (on); a store that stops answering
// leaves the last state in effect (frozen), as it does the limit.

// ArrivalWindow is the span of store time arrivals are judged over; they
// are judged once half of it is seen.
const ArrivalWindow = 10 * time.Second

// StartHold is the least time the conditions for quiet must hold without
// a break before an on room turns quiet (two of the controller's steps if
// longer: see startHold).
const StartHold = 30 * time.Second

// startSlots is how many samples of the join count a StartRecord keeps:
// one per tenth of the window, the first of each, and two spare, so the
// oldest in the window is at most a tenth of it younger than its start.
const startSlots = 12

// StartParams is what the store judges a room's start_above with.
type StartParams struct {
	// AboveMilli is start_above in thousandths of an arrival per second
	// (startMilli): integers, so both stores compare alike.
	AboveMilli int64
	// Window is ArrivalWindow (shorter in tests), Hold the hold.
	Window, Hold time.Duration
	// Strained: the controller's last step showed strain (strained).
	Strained bool
}

// StartState is the store's decision on a room's start_above.
type StartState struct {
	// On: the autopilot's limit applies; otherwise the room is quiet.
	On bool
	// Judged: the arrivals were measured over at least half the window;
	// ArrivalsMilli is their rate then, thousandths per second.
	Judged        bool
	ArrivalsMilli int64
	// Calm is how long the conditions for quiet have held, on an on room.
	Calm time.Duration
	// Switched: this call turned the room on or quiet.
	Switched bool
}

// PerSecond is the arrival rate judged, NaN before the first judgement.
func (s *StartState) PerSecond() float64 {
	if s == nil || !s.Judged {
		return math.NaN()
	}
	return float64(s.ArrivalsMilli) / 1000
}

// startSample is the join count at a time of the store's.
type startSample struct {
	At     time.Time
	Joined int64
}

// StartRecord is a room's start_above as a store keeps it (the memory
// store; redisstore keeps the same fields in a hash).
type StartRecord struct {
	Known   bool      // judged at least once
	On      bool      // the state
	Calm    time.Time // since when the conditions for quiet hold; zero: they do not
	Samples [startSlots]startSample
}

// startMilli is a rate in thousandths per second, rounded down.
func startMilli(r Rate) int64 {
	if r.IsUnlimited() {
		return 0
	}
	return int64(float64(r.N) * 1e9 / float64(r.Per.Microseconds()))
}

// Judge is the store's side of AutopilotStarts.AutopilotStart: the room's
// join count is joined and its line waiting, by the store at now. It
// keeps the first sample of each tenth of the window, measures the
// arrivals from the oldest sample within the window (judged once it is
// at least half the window old; a count that went back, the room made
// again, starts the samples over), and moves the latch. A record seen for
// the first time starts on if the line is not empty or the site strained
// (a store that lost the record mid-rush must not open the door), quiet
// otherwise. Integer microseconds throughout, as autostart.lua.
func (rec *StartRecord) Judge(now time.Time, joined, waiting int64, p StartParams) StartState {
	win := p.Window.Microseconds()
	width := max(win/10, 1)
	nowUS := now.UnixMicro()
	for _, s := range rec.Samples {
		if s.At.IsZero() || s.Joined <= joined {
			continue
		}
		rec.Samples = [startSlots]startSample{} // the count went back
		break
	}
	slot := &rec.Samples[(nowUS/width)%startSlots]
	if slot.At.IsZero() || slot.At.UnixMicro()/width != nowUS/width {
		*slot = startSample{At: now, Joined: joined}
	}
	var base *startSample
	for i := range rec.Samples {
		s := &rec.Samples[i]
		if s.At.IsZero() || nowUS-s.At.UnixMicro() > win || s.At.After(now) {
			continue
		}
		if base == nil || s.At.Before(base.At) {
			base = s
		}
	}
	var out StartState
	span := nowUS - base.At.UnixMicro()
	if span*2 >= win && span > 0 {
		out.Judged = true
		out.ArrivalsMilli = (joined - base.Joined) * 1_000_000_000 / span
	}
	over := out.Judged && out.ArrivalsMilli > p.AboveMilli
	if !rec.Known {
		rec.Known, rec.On = true, waiting > 0 || p.Strained
	}
	switch {
	case !rec.On:
		if over || p.Strained {
			rec.On, rec.Calm, out.Switched = true, time.Time{}, true
		}
	case out.Judged && !over && waiting == 0 && !p.Strained:
		if rec.Calm.IsZero() {
			rec.Calm = now
		}
		if now.Sub(rec.Calm) >= p.Hold {
			rec.On, rec.Calm, out.Switched = false, time.Time{}, true
		}
	default:
		rec.Calm = time.Time{}
	}
	out.On = rec.On
	if rec.On && !rec.Calm.IsZero() {
		out.Calm = now.Sub(rec.Calm)
	}
	return out
}

// AutopilotStarts is the store side of start_above, an optional ability
// of a Store (found with As): the store reads the room's join count and
// line itself, and keeps the room's quiet/on state for every instance
// (StartRecord.Judge). Errors: ErrUnavailable, ErrClosed.
type AutopilotStarts interface {
	AutopilotStart(ctx context.Context, room string, p StartParams) (StartState, error)
}

// strained reports a reason that says the site showed strain: the room
// turns on then whatever the arrivals. The knee's back-off and hold count:
// a quiet room whose median is past the site's knee lets everyone in up to
// max_active, over the limit the controller is backing off to.
func strained(r AutopilotReason) bool {
	switch r {
	case ReasonSlow, ReasonErrors, ReasonDraining, ReasonFloor, ReasonRecovering, ReasonBackoff, ReasonKnee:
		return true
	}
	return false
}

// startHold is the hold of a room whose controller steps every interval:
// StartHold, or two steps if longer, so the controller has judged the
// quiet conditions twice before the door opens.
func startHold(interval time.Duration) time.Duration {
	return max(StartHold, 2*interval)
}

// startAbove asks the store where the room's start_above stands, after
// the controller's answer st this tick, and keeps the answer for
// autopiloted. A store that fails, or one without AutopilotStarts, leaves
// the last answer in effect (none yet: on).
func (a *Admitter) startAbove(ctx context.Context, ap *Autopilot, st AutopilotState) {
	lr := a.lr
	if ap.StartAbove.IsUnlimited() {
		lr.start.Store(nil)
		return
	}
	ss, ok := As[AutopilotStarts](a.rs.store)
	if !ok {
		return
	}
	p := StartParams{AboveMilli: startMilli(ap.StartAbove), Window: ArrivalWindow, Hold: startHold(ap.Interval),
		Strained: strained(st.Reason)}
	s, err := ss.AutopilotStart(ctx, lr.name, p)
	if err != nil {
		return // frozen: the last state stands
	}
	lr.start.Store(&s)
	if s.Switched {
		state := "quiet"
		if s.On {
			state = "on"
		}
		a.log.Info("autopilot start_above turned the room "+state, zap.String("arrivals", arrivalsText(s.PerSecond())),
			zap.String("start_above", ap.StartAbove.String()), zap.Bool("strained", p.Strained))
	}
}

// arrivalsText writes a rate per second for the reason: "12.5/s".
func arrivalsText(perSecond float64) string {
	if math.IsNaN(perSecond) {
		return "not yet measured"
	}
	return fmt.Sprintf("%.3g/s", perSecond)
}
