package memstore

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// room is one room's line, sessions and counters, behind one mutex.
type room struct {
	mu sync.Mutex

	// last is the latest time the room has seen. A clock that steps back
	// is read as standing still, so the seen list stays ordered and the
	// bucket never refills by a negative amount.
	last time.Time
	// seed is the clock in microseconds when the room was created; tickets
	// below it come from an earlier incarnation of the store.
	seed int64
	seq  int64 // last ticket handed out

	line    *queue
	seen    seenList
	waiting map[string]*waiter
	active  *sessions
	// restored holds the visitors put back at an old ticket, so that a
	// cookie carrying that ticket restores its holder once, not after every
	// session or place it goes on to lose.
	restored map[string]struct{}
	// graceUntil ends the recovery grace: zero until the first restore of
	// this incarnation starts it, and never restarted after that, so a late
	// straggler with an old ticket cannot hold newcomers back again.
	graceUntil time.Time
	// mend, lost and skip are the last repair's (learn): the counter it
	// set, when, and the highest ticket known then; started and repaired
	// what the current Decide's learn did.
	mend, skip        int64
	lost              time.Time
	started, repaired bool

	bucket bucket
	minute minute
	totals waitroom.Stats // only the running totals are kept here

	// win knows which tickets handed out lately were used and which may
	// still come back to take their place (see window).
	win window
	// quota is each client network's GCRA time (see charge); spent holds
	// solved challenges until they expire; preqMin and preqMax are the
	// first and last tickets handed out in a pre-queue.
	quota            map[string]time.Time
	spent            map[string]time.Time
	preqMin, preqMax int64

	// override is the room's runtime override (Store.SetOverride); its
	// pointers are the room's own, never the caller's.
	override waitroom.Override
	// shuffleKey and shuffleSeed record the last Store.Shuffle, which runs
	// once per key.
	shuffleKey, shuffleSeed string

	// sockets are each admitted visitor's open sockets with the time each
	// was last held (Store.Socket).
	sockets map[string]map[string]time.Time

	// idle is Limits.Idle as the last call that carried the room's limits
	// gave it, and used the time of that call; gone marks a room the store
	// dropped for it (see sweep), so a call that found it just before
	// looks again.
	idle time.Duration
	used time.Time
	gone bool

	// lefts are the tickets of the last visitors who left the line
	// (Stats.LeftTickets).
	lefts []int64
}

func newRoom(now time.Time) *room {
	seed := now.UnixMicro()
	return &room{
		last:     now,
		seed:     seed,
		seq:      seed,
		line:     newQueue(),
		waiting:  make(map[string]*waiter),
		active:   newSessions(),
		restored: make(map[string]struct{}),
		win:      newWindow(seed, now),
		quota:    make(map[string]time.Time),
		spent:    make(map[string]time.Time),
		sockets:  make(map[string]map[string]time.Time),
	}
}

// now turns a clock reading into the room's time; see last.
func (r *room) now(t time.Time) time.Time {
	if t.Before(r.last) {
		return r.last
	}
	r.last = t
	return t
}

// expire drops the sessions that ran out; every method calls it first, so
// no answer counts or honours a session that is over.
func (r *room) expire(now time.Time) int {
	n := r.active.expire(now)
	r.totals.Expired += int64(n)
	return n
}

func (r *room) decide(now time.Time, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) waitroom.Decision {
	r.started, r.repaired = false, false
	d := r.decideFor(now, lim, v, join)
	d.GraceStarted = d.GraceStarted || r.started
	d.Repaired = r.repaired
	if d.Joined && d.State == waitroom.StateAdmitted {
		if s := r.active.get(v.ID); s != nil {
			s.use(now, lim, v.Client) // an admission at once: its first client
		}
	}
	return d
}

func (r *room) decideFor(now time.Time, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) waitroom.Decision {
	r.expire(now)
	if s := r.active.get(v.ID); s != nil {
		return r.inside(s, now, lim, v)
	}
	if w := r.waiting[v.ID]; w != nil {
		r.learn(now, lim, v.Known, w.ticket) // its ticket is the store's, not the cookie's word
		r.seen.touch(w, now)
		return r.waitingDecision(w, false)
	}
	r.learn(now, lim, v.Known, v.Ticket)
	if v.Ticket > 0 && v.Ticket < r.seed {
		if d, ok := r.restore(now, lim, v, time.UnixMicro(r.seed), true); ok {
			return d
		}
	} else if r.mend > 0 && v.Ticket > 0 && v.Ticket <= r.mend && lostBy(now, lim, v, r.lost) {
		if d, ok := r.restore(now, lim, v, r.lost, false); ok {
			return d
		}
	} else if (v.Ticket > 0 || v.Challenge != "") && !v.Placed {
		if d, ok := r.place(now, lim, v); ok {
			return d
		}
	} else if v.Ticket == 0 && !v.Placed && v.Loose {
		if d, ok := r.placeLoose(now, lim, v); ok {
			return d
		}
	}
	switch join {
	case waitroom.JoinTicket:
		return r.issue(now, lim, v)
	case waitroom.JoinNumber:
		return r.number(now, lim, v)
	}
	return waitroom.Decision{}
}

// lostBy tells whether the repair at lost could have lost v's session or
// place: only the last waitroom.LossWindow of writes can be lost, so the
// cookie must be sealed before the repair (give or take SealSkew) and its admission begun
// (Visitor.Entered), or its place possibly written (issued within the
// placement window), at most LossWindow before it; a place also comes
// back only within AbandonAfter of the repair. Any other ended on a
// replica (released, left, revoked): a copy of its cookie gets nothing.
func lostBy(now time.Time, lim waitroom.Limits, v waitroom.Visitor, lost time.Time) bool {
	if v.Seen.After(lost.Add(waitroom.SealSkew)) {
		return false
	}
	since := lost.Add(-waitroom.LossWindow)
	if v.Until.After(now) {
		return !v.Entered.Before(since)
	}
	return v.Placed && !v.Issued.Before(since.Add(-lim.PlacementWindow())) &&
		(lim.AbandonAfter <= 0 || !now.After(lost.Add(lim.AbandonAfter)))
}

// inside answers an admitted visitor: its session slides forward, at most
// once per renew interval and never past SessionMax from its first use; a
// request from a client beyond the SessionClients heard within ClientQuiet
// is refused, and the session goes on for those.
func (r *room) inside(s *session, now time.Time, lim waitroom.Limits, v waitroom.Visitor) waitroom.Decision {
	if s.started.IsZero() {
		s.started = now
	}
	end := now.Add(lim.SessionTTL)
	if lim.SessionMax > 0 {
		if !now.Before(s.started.Add(lim.SessionMax)) {
			r.active.remove(s)
			r.totals.Expired++
			return waitroom.Decision{Refusal: waitroom.RefusedSessionMax}
		}
		end = minTime(end, s.started.Add(lim.SessionMax))
	}
	if wait, ok := s.use(now, lim, v.Client); !ok {
		return waitroom.Decision{Refusal: waitroom.RefusedShared, RetryAfter: wait}
	}
	d := waitroom.Decision{State: waitroom.StateAdmitted, Ticket: s.ticket, Placed: true}
	switch {
	case s.until.After(end) && lim.SessionMax > 0:
		r.active.extend(s, end) // a first session longer than the cap
		d.Renewed = true
	case s.until.Before(end) && s.until.Sub(now) < lim.SessionTTL-lim.RenewInterval():
		r.active.extend(s, end)
		d.Renewed = true
	}
	d.Until = s.until
	return d
}

// waitingDecision is a placed visitor's standing. Its position counts the
// pending tickets ahead of it (handed out, not yet brought back, still
// able to be), so it never grows when one of them comes back.
func (r *room) waitingDecision(w *waiter, joined bool) waitroom.Decision {
	pending := r.win.pendingBelow(w.ticket)
	return waitroom.Decision{
		State:    waitroom.StateWaiting,
		Ticket:   w.ticket,
		Position: int64(r.line.rank(w)) + pending,
		Line:     int64(r.line.len()) + r.win.pendingBelow(r.seq+1),
		Joined:   joined,
		Placed:   true,
		Progress: waitroom.Progress{Epoch: r.seed, Admitted: r.totals.AdmittedTotal,
			Departed: r.totals.Abandoned + r.totals.Left, Pending: pending},
	}
}

// admitAtOnce lets a visitor straight in when nobody placed waits, no
// recovery grace runs and both limits allow, with the first session a tick
// gives (firstSession): a visitor who never comes back frees the slot as
// soon as an abandoned place would. Its fourth argument (the client's
// network) is not kept: decide records the session's first client.
func (r *room) admitAtOnce(now time.Time, lim waitroom.Limits, id, _ string, ticket int64) (waitroom.Decision, bool) {
	if r.inGrace(now) || r.line.len() > 0 || r.win.pendingBelow(ticket) > 0 || r.active.len() >= lim.MaxActive {
		return waitroom.Decision{}, false
	}
	r.bucket.refill(now, lim)
	if !r.bucket.take(lim) {
		return waitroom.Decision{}, false
	}
	s := r.admit(id, ticket, now, firstSession(lim))
	// In use from now, by this client (decide records it): its first
	// request is this one.
	s.started = now
	r.totals.Joined++
	return waitroom.Decision{State: waitroom.StateAdmitted, Ticket: ticket, Until: s.until, Joined: true, Placed: true}, true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// inGrace reports whether the recovery grace runs: the store lost its data
// and lets the holders of older tickets retake their places first. Nobody
// goes in at once, and ticks let in only restored tickets.
func (r *room) inGrace(now time.Time) bool {
	return now.Before(r.graceUntil)
}

func (r *room) admit(id string, ticket int64, now time.Time, d time.Duration) *session {
	r.totals.AdmittedTotal++
	r.minute.add(now)
	s := r.active.add(id, ticket, now.Add(d))
	s.began = now
	return s
}

// firstSession is the session a tick gives: short enough that a visitor who
// never comes to use it frees the slot as soon as an abandoned place would.
func firstSession(lim waitroom.Limits) time.Duration {
	if lim.AbandonAfter > 0 && lim.AbandonAfter < lim.SessionTTL {
		return lim.AbandonAfter
	}
	return lim.SessionTTL
}

// tick is one admission round: as many as MaxActive and the token bucket
// allow.
func (r *room) tick(now time.Time, lim waitroom.Limits) waitroom.Admitted {
	return r.pass(now, lim, -1, true)
}

// admitN lets up to n in, within MaxActive but whatever the bucket holds,
// and spends no token (Store.AdmitN).
func (r *room) admitN(now time.Time, lim waitroom.Limits, n int) waitroom.Admitted {
	if n <= 0 {
		return waitroom.Admitted{}
	}
	return r.pass(now, lim, n, false)
}

// pass moves visitors from the line into the active set: at most n of them
// (n < 0: no bound of its own), within MaxActive, and, when bucket is set,
// one token each. The order of its steps is the contract's: sessions that
// ran out free their slots first, stale visitors go before anyone is let
// in, so no slot or token is spent on someone who left.
func (r *room) pass(now time.Time, lim waitroom.Limits, n int, bucket bool) waitroom.Admitted {
	var a waitroom.Admitted
	r.pruneMarks(now, lim)
	a.Expired = r.expire(now)
	a.Abandoned = r.prune(now, lim.AbandonAfter)
	// During the grace only restored tickets go in. They are all older than
	// the first ticket of this incarnation, so they are the line's first
	// eligible visitors.
	eligible := r.line.len()
	if r.inGrace(now) {
		eligible = r.line.below(r.seed)
	}
	if eligible == 0 || r.active.len() >= lim.MaxActive {
		return a
	}
	if bucket {
		r.bucket.refill(now, lim)
	}
	for ; eligible > 0 && a.Admitted != n && r.active.len() < lim.MaxActive; eligible-- {
		if bucket && !r.bucket.take(lim) {
			break
		}
		w := r.line.front()
		if lim.Random {
			w = r.line.at(1 + rand.IntN(eligible))
		}
		r.drop(w)
		r.admit(w.id, w.ticket, now, firstSession(lim))
		a.Admitted++
		if !lim.Random {
			a.Highest = max(a.Highest, w.ticket) // as redisstore's; never lost here, so never a hint
		}
	}
	return a
}

// prune drops the visitors unseen for longer than after, wherever they stand
// in line. after <= 0 keeps everyone.
func (r *room) prune(now time.Time, after time.Duration) int {
	if after <= 0 {
		return 0
	}
	n := 0
	for w := r.seen.oldest; w != nil && now.Sub(w.seen) > after; w = r.seen.oldest {
		r.drop(w)
		n++
	}
	r.totals.Abandoned += int64(n)
	return n
}

// drop takes a visitor out of line.
func (r *room) drop(w *waiter) {
	r.line.remove(w)
	r.seen.remove(w)
	delete(r.waiting, w.id)
}

// release ends the visitor's session or gives up its place.
func (r *room) release(now time.Time, id string, began time.Time) bool {
	r.expire(now)
	if s := r.active.get(id); s != nil {
		if !began.IsZero() && s.began.After(began) {
			return false // a later session than the release replayed: nobody released it
		}
		r.active.remove(s)
		if r.mend > 0 {
			// Ended after a repair: a copy of its cookie sealed before the
			// repair would pass for a session the failover lost (lostBy),
			// so it counts as put back already.
			r.restored[id] = struct{}{}
		}
	} else if w := r.waiting[id]; w != nil {
		r.drop(w)
		r.totals.Left++
		if len(r.lefts) >= waitroom.MaxLeftTickets {
			r.lefts = append(r.lefts[:0], r.lefts[1:]...)
		}
		r.lefts = append(r.lefts, w.ticket)
	} else {
		return false
	}
	r.totals.Released++
	return true
}

func (r *room) stats(now time.Time) waitroom.Stats {
	r.expire(now)
	st := r.totals
	st.Waiting = int64(r.line.len())
	st.Active = int64(r.active.len())
	st.AdmittedLastMinute = r.minute.sum(now)
	st.MeasuredOver = min(time.Minute, now.Sub(time.UnixMicro(r.seed)))
	st.Epoch = r.seed
	copy(st.LeftTickets[:], r.lefts)
	r.head(&st)
	st.Low = max(r.win.floor+1, r.win.base)
	st.Floor = st.Low
	if w := r.line.front(); w != nil && w.ticket < st.Low {
		st.Low = w.ticket
	}
	return st
}

// head fills st.Head with the line's first tickets, unless a pending
// ticket below the last of them counts ahead of it (Stats.Head).
func (r *room) head(st *waitroom.Stats) {
	n := 0
	for w := r.line.front(); w != nil && n < waitroom.MaxHead; w = w.links[0].next {
		st.Head[n] = w.ticket
		n++
	}
	if n > 0 && r.win.pendingBelow(st.Head[n-1]) > 0 {
		st.Head = [waitroom.MaxHead]int64{}
	}
}

// touch marks the placed visitors vs as seen now (Store.Touch); one no
// longer in line, or at another ticket, is skipped.
func (r *room) touch(now time.Time, vs []waitroom.Visitor) {
	for _, v := range vs {
		if w := r.waiting[v.ID]; w != nil && w.ticket == v.Ticket {
			r.seen.touch(w, now)
		}
	}
}
