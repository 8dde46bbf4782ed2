package waitroom

import (
	"sync"
	"time"
)

// Anchored polls. In a spike nearly every request is a waiting visitor's
// poll, and each used to cost a store round trip. Most need none: the
// ticket carries the store's last answer (Ticket.Anchor), every tick
// refreshes the room's Progress on every instance, and in a room that
// admits from the head of its line the position then follows (see
// Progress): at most the anchored one less the admissions since, and
// lower by no more than the departures since plus the pending it counted.
// A poll is answered from that when the bound is tight (anchorSlack), the
// visitor is far from the front (exactFront), the anchor is recent
// (no older than a seal may get, Gate.resealAfter, so the seal the next
// anchor renews keeps the ticket's right to its place after a data loss)
// and the tick's view is fresh; anything else asks the store,
// which anchors the ticket again. A ticket whose holder left the line
// (/.waitroom/leave, through any instance) is never answered from its
// anchor once this instance's next tick read it among Stats.LeftTickets
// (or, when more left than the list holds, its anchor predates them; see
// leftTickets): a copy of it asks the store, and learns the place is gone. The poll's mark, which keeps its place
// from being abandoned, goes to the store with the tick's others in one
// Store.Touch before the tick's Admit.
//
// Polls near the front, where positions must be exact, are answered from
// the line's first places as the instance's last tick read them
// (Stats.Head, fromHead): exact as of that tick, and the view is never
// older than headMaxAge (a tick and a quarter, at least 250 ms) when it
// answers. Admission stays the store's: the tick's Admit lets the head in
// and makes the session in one script (max_active and the rate exact
// across instances), and a ticket no longer among the first places asks
// the store, which answers "admitted": one store call per admission. So a
// visitor let in by another instance's tick is told "waiting" by this
// one until this one's next tick reads the line: at most headMaxAge.
//
// Instances tick unaligned, so two views of the line differ by a tick's
// admissions, and a visitor behind a load balancer must still never see
// its position grow (DESIGN). Every answer that moves a visitor is sealed
// into its ticket's anchor (nextAnchor: the place told and the view's
// progress, as of the view's read), so the next instance knows what it
// was last told: a view older than the anchor (read in an earlier
// second, or in the same one with fewer admissions or departures:
// viewBehind) shows the anchor's place, a newer one no more than the
// anchor's place less the admissions since, and an older anchor ahead of
// a newer view (progress a failover lost: preRepair) asks the store. Near the front the
// store's own answers are anchored too (anchorOf), for that bound only.
// The cost is an encoding per answer that moves a visitor: once per poll
// while its place moves, at most once per tick of each instance that
// answers it (the ticket then carries the view's place), none for one
// that does not (BenchmarkTicketsEncode). Positions may still grow in
// two cases this cannot see: during a recovery grace, holders restored
// after a failover return ahead of the visitor (no anchor counts them),
// and a client that does not send back the newest cookie presents an
// older anchor, which bounds nothing it was told since.
//
// Either answer, once its seal or anchor is half the way to
// Gate.resealAfter, carries a new ticket sealed and anchored by the gate
// (renewAnchor), so a visitor who keeps polling never needs the store to
// anchor it again; the slack the bound allows is carried over in the new
// anchor's Progress.Pending, so it never resets without the store.

const (
	// exactFront is where positions are always the store's own: the
	// first places are exact, and a visitor about to go in learns it at
	// the next poll.
	exactFront = 100
	// maxTouches bounds a room's marks waiting for the next tick on one
	// instance; past it polls ask the store as before.
	maxTouches = 100_000
)

// anchorSlack is how far above the true position a shown one may be:
// 1%, or 10 places near the front.
func anchorSlack(position int64) int64 { return max(10, position/100) }

// progressView is a tick's Stats as polls read them, and when it was read
// on this instance.
type progressView struct {
	progress Progress
	waiting  int64
	at       time.Time
	left     *leftTickets
	// mintedBy: anchors minted (Anchor.At) at or before this second ask
	// the store. Set when a tick finds the store repaired the room (a
	// failover lost its last writes): its Progress is then the promoted
	// replica's, behind the one the older anchors were minted against, so
	// the admissions since would come out short (even negative, which an
	// anchor's own check catches, or small but short, which it cannot)
	// and their positions grow. Each such visitor asks the store once and
	// carries a fresh anchor.
	mintedBy int64
	// head is Stats.Head by ticket: the position of each of the line's
	// first places (fromHead).
	head map[int64]int64
	// low and floor are Stats.Low and Stats.Floor: a batched join's
	// position bound (positionBound).
	low, floor int64
}

// headOf indexes st.Head by ticket; nil when the store gave none.
func headOf(st Stats) map[int64]int64 {
	if st.Head[0] == 0 {
		return nil
	}
	m := make(map[int64]int64, MaxHead)
	for i, t := range st.Head {
		if t == 0 {
			break
		}
		m[t] = int64(i + 1)
	}
	return m
}

// nextMintedBy is the view's mintedBy after a tick read st, prev being
// the last tick's stats: now's second when the store was repaired or its
// admissions went backwards within one epoch, else the last view's.
func nextMintedBy(last *progressView, prev, st Stats, first bool, now time.Time) int64 {
	var m int64
	if last != nil {
		m = last.mintedBy
	}
	if !first && st.Epoch == prev.Epoch && (st.Repairs > prev.Repairs || st.AdmittedTotal < prev.AdmittedTotal) {
		m = now.Unix()
	}
	return m
}

// leftTickets is what an instance learned from its ticks of the tickets
// whose holders left the line: each with when a tick first saw it, kept
// for keep, longer than any anchor is answered (anchorKeep). When more
// left between two ticks than Stats.LeftTickets holds (or before this
// instance's first look), the instance cannot tell whose: it trusts no
// anchor minted before those leaves, that is none whose
// Progress.Departed is below the store's Departed when the tick saw
// them (distrust). A copy's anchor is older than its holder's leave (a
// left ticket is never anchored again), so it asks the store; a ticket
// still in line asks once and carries a fresh anchor, which is trusted.
// No clock and no blind period: a farm leaving 65 places a second makes
// each waiting visitor ask the store once per tick it re-anchors over,
// not every poll for minutes.
//
// One leftTickets serves a room for an epoch: each tick adds to it and
// evicts the entries older than keep from the front of order (time
// order), in place, under mu, so a tick costs what changed, not a copy
// of every entry.
type leftTickets struct {
	mu       sync.RWMutex
	at       map[int64]time.Time
	order    []leftAt // oldest first
	total    int64    // Stats.Left when read
	epoch    int64
	distrust int64 // anchors with Progress.Departed below this ask the store
}

// leftAt is one ticket of leftTickets.order.
type leftAt struct {
	ticket int64
	at     time.Time
}

// gone reports whether a poll of ticket anchored at a must ask the store.
func (l *leftTickets) gone(ticket int64, a Progress) bool {
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if a.Departed < l.distrust {
		return true
	}
	_, ok := l.at[ticket]
	return ok
}

// anchorKeep is how long an instance remembers a ticket that left, and
// the oldest anchor it answers from: a room's abandon_after, at least a
// minute (anchors are renewed sooner, see Gate.resealAfter).
func anchorKeep(lim Limits) time.Duration { return max(lim.AbandonAfter, time.Minute) }

// nextLeft is the tickets known to have left after a tick read st: prev
// (nil at first) with those older than keep evicted and st's added, or a
// new set when the room's epoch changed.
func nextLeft(prev *leftTickets, st Stats, keep time.Duration, now time.Time) *leftTickets {
	listed := 0
	for _, t := range st.LeftTickets {
		if t != 0 {
			listed++
		}
	}
	l := prev
	if l == nil || l.epoch != st.Epoch {
		// What left before this instance's first look is known only as
		// far as the list goes.
		l = &leftTickets{at: make(map[int64]time.Time, listed), epoch: st.Epoch}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st.Left-l.total > int64(listed) {
		l.distrust = st.Progress().Departed
	}
	l.total = st.Left
	n := 0
	for n < len(l.order) && now.Sub(l.order[n].at) >= keep {
		if l.at[l.order[n].ticket].Equal(l.order[n].at) {
			delete(l.at, l.order[n].ticket)
		}
		n++
	}
	if n > 0 {
		clear(l.order[:n]) // nothing to keep alive, but tidy
		l.order = l.order[n:]
	}
	for _, t := range st.LeftTickets[:listed] {
		if _, ok := l.at[t]; !ok {
			l.at[t] = now
			l.order = append(l.order, leftAt{ticket: t, at: now})
		}
	}
	return l
}

// anchorable reports whether a room admits from the head of its line now,
// the only case Progress describes. A room with a pre-queue is never:
// its opening's shuffle gives the pre-queue's tickets new numbers, which
// an anchor (and a mark sent by number) would not know.
func anchorable(lr *liveRoom, lim Limits, ph Phase) bool {
	eff := lr.eff.Load()
	return ph == PhaseOpen && eff.Mode == ModeFIFO && !lim.Random && !lim.Prequeue &&
		lr.room().Schedule.PrequeueFrom.IsZero()
}

// fromAnchor answers a placed ticket's poll from its anchor and the room's
// view when both allow (see above), with the anchor the answer's ticket
// carries (nextAnchor); ok false means ask the store.
func fromAnchor(lr *liveRoom, p Presented, lim Limits, ph Phase, now time.Time, every int64) (Decision, Anchor, bool) {
	tk := p.Ticket
	a := tk.Anchor
	if !p.Valid || tk.Pending || tk.Until != 0 || a.Position <= 0 || !anchorable(lr, lim, ph) {
		return Decision{}, Anchor{}, false
	}
	view := lr.view.Load()
	tick := lr.room().Tick
	if view == nil || now.Sub(view.at) > 2*tick+time.Second || !anchorUsable(view, a, lim, now, every) {
		return Decision{}, Anchor{}, false
	}
	if view.left.gone(tk.Number, a.Progress) {
		return Decision{}, Anchor{}, false // its holder left: the store says where it stands
	}
	admitted := view.progress.Admitted - a.Progress.Admitted
	departed := view.progress.Departed - a.Progress.Departed
	if viewBehind(view, a, admitted, departed) {
		// A view older than the anchor (another instance, whose tick
		// came later, or the store, anchored it): the anchor's own place
		// is the newer word, and answering the view's would move the
		// visitor back (DESIGN: a refresh never worsens a position).
		// Nothing is subtracted: a view read before a failover may count
		// admissions the store's anchor, minted after it, never saw.
		if preRepair(view, a, admitted, departed) || a.Position <= exactFront || a.Progress.Pending > anchorSlack(a.Position) {
			return Decision{}, Anchor{}, false
		}
		return Decision{State: StateWaiting, Ticket: tk.Number, Position: a.Position, Line: max(view.waiting, a.Position),
			Placed: true, Progress: a.Progress}, a, true
	}
	pos := a.Position - admitted
	if pos <= exactFront || departed+a.Progress.Pending > anchorSlack(pos) {
		return Decision{}, Anchor{}, false
	}
	// The progress the answer may be anchored at again: the view's, with
	// the departures since counted as pending, so the bound the next
	// answers check carries all the slack gathered since the store's own
	// answer.
	again := view.progress
	again.Pending = a.Progress.Pending + departed
	d := Decision{State: StateWaiting, Ticket: tk.Number, Position: pos, Line: max(view.waiting, pos), Placed: true,
		Progress: again}
	return d, nextAnchor(tk, d, view, now, every), true
}

// viewBehind reports whether view is older than the anchor a, admitted
// and departed being the view's progress less the anchor's: minted in a
// later second than the view was read (whatever the progress says: a
// view read before a failover counts admissions the promoted replica
// lost, so an anchor the store minted after it has fewer, and
// subtracting would show the visitor a place it later loses, 40, 30,
// 38), or, in the same second, behind it in admissions or departures.
// Such a view shows the anchor's place, the newer word.
func viewBehind(view *progressView, a Anchor, admitted, departed int64) bool {
	return a.At > view.at.Unix() || admitted < 0 || departed < 0
}

// preRepair reports whether the anchor a, ahead of view in progress
// (admitted or departed below 0), was minted in an earlier second than
// the view was read: the store's progress went back since, which only a
// failover that lost the last writes does, so the anchor was minted
// against progress the store lost. The store anchors it again at once,
// even on an instance whose first tick of the room came after the
// failover (mintedBy unset: it saw no repair happen), rather than show
// the anchor's place, frozen, until the anchor ages out. Within one
// second the order is unknown, and the anchor's place is shown; clocks
// skewed by a second or more cost a store call here, never a larger
// place.
func preRepair(view *progressView, a Anchor, admitted, departed int64) bool {
	return a.At < view.at.Unix() && (admitted < 0 || departed < 0)
}

// anchorUsable reports whether a view may answer from (or bound by) the
// anchor a: the same epoch, minted after the last repair this instance
// saw (mintedBy), and no older than a seal may get (every) or an
// instance remembers who left (anchorKeep).
func anchorUsable(view *progressView, a Anchor, lim Limits, now time.Time, every int64) bool {
	if view.progress.Epoch != a.Progress.Epoch || a.At <= view.mintedBy {
		return false // another incarnation, or minted against progress the store lost
	}
	age := now.Unix() - a.At
	return age >= 0 && age < every && time.Duration(age)*time.Second < anchorKeep(lim)
}

// nextAnchor is the anchor the ticket of a poll answered from view (d)
// carries: the one it has while its place is unchanged and the anchor is
// not halfway to every (so a poll whose place did not move costs no
// encoding), else d's place and progress as of the view's read
// (progressView.at, not now: an anchor renewed from a view read before a
// repair predates the repair, and mintedBy rejects it). Every answer that
// moves a visitor forward is sealed into its ticket, so whichever instance
// answers next, with an older view or a newer one, knows the place the
// visitor was last told and never shows a larger one (fromHead, fromAnchor).
func nextAnchor(tk Ticket, d Decision, view *progressView, now time.Time, every int64) Anchor {
	if tk.Anchor.Position == d.Position && !renewAnchor(tk, now, every) {
		return tk.Anchor
	}
	return Anchor{Position: d.Position, At: view.at.Unix(), Progress: d.Progress}
}

// renewAnchor reports whether a poll answered from the view (fromAnchor,
// fromHead) should carry a new ticket: its anchor or seal is half the way
// to every. The gate then seals the answer's anchor (nextAnchor): the place
// it was just told, the view's progress and the slack gathered since the
// store's last answer (Progress.Pending). So a visitor who keeps polling
// never needs the store to anchor or seal it again, however long it waits:
// the seal stays recent enough to get its place back after a data loss
// (Gate.resealAfter), and the bound stays the store's, within 1%. A
// visitor who stopped for longer than every asks the store, which knows
// whether the place is still held.
func renewAnchor(tk Ticket, now time.Time, every int64) bool {
	half := max(every/2, 1)
	return now.Unix()-tk.Sealed >= half || (tk.Anchor.Position > 0 && now.Unix()-tk.Anchor.At >= half)
}

// fromHead answers a placed ticket's poll near the front from the line's
// first places as this instance's last tick read them (Stats.Head), where
// an anchor cannot (positions there must be exact): the position is the
// store's own as of that tick, and the answer carries it as the ticket's
// anchor (nextAnchor). A ticket anchored later than the view (by another
// instance's newer view, or by the store) is told no more than its
// anchor's place less the admissions since: gateways tick unaligned, and
// a visitor behind a load balancer must not see 40, 47, 40. A view older
// than the anchor (viewBehind) shows the anchor's place, nothing
// subtracted; an older anchor ahead of the view (preRepair) asks the
// store. A visitor the tick let in is not among the head, so its next
// poll asks the store and learns it is inside (the session was made,
// atomically, by the tick's Admit); one let in by another instance's tick
// is told "waiting" until this instance's next tick reads the line, at
// most headMaxAge after the last (anchored.go's note). A seal older than
// every asks the store, which seals it again, as an anchor of that age
// does; one half as old is sealed again by the gate (renewAnchor). ok
// false means ask the store.
func fromHead(lr *liveRoom, p Presented, lim Limits, ph Phase, now time.Time, every int64) (Decision, Anchor, bool) {
	tk := p.Ticket
	if !p.Valid || tk.Pending || tk.Until != 0 || tk.Number == 0 || !anchorable(lr, lim, ph) {
		return Decision{}, Anchor{}, false
	}
	view := lr.view.Load()
	if view == nil || view.head == nil || now.Sub(view.at) > headMaxAge(lr.room().Tick) {
		return Decision{}, Anchor{}, false
	}
	if age := now.Unix() - tk.Sealed; age < 0 || age >= every {
		return Decision{}, Anchor{}, false
	}
	pos, ok := view.head[tk.Number]
	if !ok {
		return Decision{}, Anchor{}, false
	}
	d := Decision{State: StateWaiting, Ticket: tk.Number, Position: pos, Line: max(view.waiting, pos), Placed: true,
		Progress: view.progress}
	if a := tk.Anchor; a.Position > 0 {
		if !anchorUsable(view, a, lim, now, every) {
			return Decision{}, Anchor{}, false // the store anchors it again
		}
		admitted := view.progress.Admitted - a.Progress.Admitted
		departed := view.progress.Departed - a.Progress.Departed
		if viewBehind(view, a, admitted, departed) {
			if preRepair(view, a, admitted, departed) {
				return Decision{}, Anchor{}, false // the store anchors it again
			}
			// A view older than the ticket's anchor: its place as the
			// anchor says, the newer word, and the ticket as it is; no
			// admissions subtracted (viewBehind).
			d.Position = min(pos, a.Position)
			d.Line, d.Progress = max(view.waiting, d.Position), a.Progress
			return d, a, true
		}
		bound := a.Position - admitted
		if bound < 1 {
			// More admitted since than stood ahead of it, and it is
			// still in line: the anchor's place and progress are not of
			// this store's line (a repair's readmits do not cause it:
			// the store counts them in Readmitted, not Admitted), e.g.
			// clocks skewed past viewBehind's second. Defensive: the
			// store answers rather than a place below 1.
			return Decision{}, Anchor{}, false
		}
		d.Position = min(pos, bound)
		d.Line = max(view.waiting, d.Position)
	}
	return d, nextAnchor(tk, d, view, now, every), true
}

// headMaxAge is how old a view fromHead answers from may be: one tick and
// a quarter of one (at least 250 ms), the slack a busy instance's ticker
// needs; an older view asks the store. So a position near the front is
// the store's as of at most that long ago, and a visitor let in by
// another instance's tick hears so from this one within it.
func headMaxAge(tick time.Duration) time.Duration { return tick + max(tick/4, 250*time.Millisecond) }

// anchorOf is the anchor a ticket gets from the store's answer d: one the
// next polls can be answered from (fromAnchor) or, within exactFront,
// bounded by (fromHead: a view older than the store's answer must not
// show a larger place), or none.
func anchorOf(lr *liveRoom, d Decision, now time.Time) Anchor {
	if lr == nil || d.State != StateWaiting || !d.Placed || d.Progress.Epoch == 0 || d.Position <= 0 {
		return Anchor{}
	}
	lim, ph, _ := lr.admission(now)
	if !anchorable(lr, lim, ph) {
		return Anchor{}
	}
	return Anchor{Position: d.Position, At: now.Unix(), Progress: d.Progress}
}

// touches are the marks of the polls a room answered from anchors since
// its last tick on this instance, one a ticket: a holder polling a
// hundred thousand times a tick takes one place in the batch, so it cannot
// fill maxTouches and send every other visitor's poll to the store
// (ticket numbers are unique to their holders: docs/reliability.md).
type touches struct {
	mu   sync.Mutex
	vs   []Visitor
	seen map[int64]struct{} // the tickets in vs
}

// add queues v's mark, once a batch; false when the batch is full.
func (t *touches) add(v Visitor) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[v.Ticket]; ok {
		return true
	}
	if len(t.vs) >= maxTouches {
		return false
	}
	t.put(v)
	return true
}

// put adds v's mark; t.mu is held and the batch has room.
func (t *touches) put(v Visitor) {
	if t.seen == nil {
		t.seen = make(map[int64]struct{})
	}
	t.seen[v.Ticket] = struct{}{}
	t.vs = append(t.vs, Visitor{ID: v.ID, Ticket: v.Ticket, Placed: true})
}

// take empties the batch.
func (t *touches) take() []Visitor {
	t.mu.Lock()
	defer t.mu.Unlock()
	vs := t.vs
	t.vs = nil
	clear(t.seen)
	return vs
}

// putBack returns marks a failed Touch did not deliver, as far as the
// batch has room: the next tick sends them.
func (t *touches) putBack(vs []Visitor) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vs {
		if len(t.vs) >= maxTouches {
			return
		}
		if _, ok := t.seen[v.Ticket]; !ok {
			t.put(v)
		}
	}
}
