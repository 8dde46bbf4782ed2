package waitroom

import "context"

// A room filled from a template sleeps while nobody is in its line and
// nobody is inside: its admitter skips the store until a request for the
// room wakes it, so the hundreds of rooms a platform keeps for past and
// future events cost Redis nothing between their visitors. A plain room
// never sleeps: there are few, and an operator's change through another
// instance shows on this one's admin API within a tick.
//
// The tick decides from its own Stats, read after Admit: nothing waits
// and nothing is inside. Visits are counted (liveRoom.visits) so a
// request that arrives while the tick decides keeps the room awake: the
// tick sets asleep, then looks at visits; a visit bumps visits, then
// clears asleep. Whichever comes second sees the other's write, so a room
// never sleeps through a visit it did not see.

// rest puts the room to sleep after a tick that found it empty, unless a
// request came since the tick began (seen).
func (a *Admitter) rest(seen uint64, st Stats) {
	lr := a.lr
	if !lr.filled() || st.Waiting != 0 || st.Active != 0 || lr.batch.busy() {
		return
	}
	lr.asleep.Store(true)
	if lr.visits.Load() != seen {
		lr.asleep.Store(false)
		return
	}
	// Nobody inside, and no tick will turn the autopilot's window: free
	// its per-session sketch now (thousands of template rooms asleep).
	lr.meter.rest()
}

// visit notes a request for the room on this instance and wakes the room
// if it slept. The override may have changed while nobody asked (the site
// closed the event through another instance), so a waking request reads
// it first: a closed room must not hand out a ticket on an old word.
func (rs *Rooms) visit(ctx context.Context, lr *liveRoom) {
	lr.visited()
	if !lr.asleep.Swap(false) {
		return
	}
	if o, err := rs.store.Override(ctx, lr.name); err == nil {
		lr.setOverride(o)
	}
	lr.nudge()
}

// stir wakes a sleeping room after a decision that left someone in its
// line or inside: the decision may have reached the store after the
// tick that put the room to sleep had read its stats.
func (rs *Rooms) stir(lr *liveRoom) {
	if lr.asleep.Swap(false) {
		lr.nudge()
	}
}

// nudge asks the room's admitter for a tick now.
func (lr *liveRoom) nudge() {
	select {
	case lr.wake <- struct{}{}:
	default: // a tick is due already
	}
}
