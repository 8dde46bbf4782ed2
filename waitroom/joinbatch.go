package waitroom

import (
	"context"
	"net/http"
	"time"
)

// Batched joins (a room's `join: batched`, issue 24). A join used to cost
// two scripts: decide.lua on the first request, to take a number, and
// again when the ticket came back, to take its place. In a 10:00:00 spike
// that was more than one Redis core for joins alone. Here the first
// request costs the store nothing: the instance hands out the next number
// of a block it reserved (Joiner.Reserve, one durable script per block,
// sized by the instance's joins of the last tick), answers "waiting" with
// a position that can only fall (positionBound), and the ticket comes back
// pending as before. Its return is queued on the instance and answered
// from the same bound; the instance's next tick writes every queued place
// in one Joiner.Place, before its Admit, releasing the unused tail of its
// blocks so those numbers stop counting as pending. The visitor's next
// poll picks its Decision up and its ticket is sealed placed, anchored.
//
// Order: a block lives at most one tick (takeTick detaches it), and its
// numbers come off the room's one counter, so two newcomers on different
// instances hold numbers in arrival order unless they came within one
// tick of each other (a number from an older block on one instance may
// be below a number from a newer block on another that was handed out
// earlier). That is the same fairness the line gives anyone: a tick is
// the unit of admission, and within it the order is the counter's.
//
// What is approximate at the door and exact at the place: max_waiting is
// checked against the tick's view (plus the places queued here); the join
// quota (join_limit) is charged when the place is written, as it always
// was (the place counts, not the number). The network's pending allowance
// (PendingPerNetwork, BlockFactor) is kept per instance (allowances), so
// a flood spread over N instances holds at most N times that many
// numbers per network; past it a ticket is loose (no number), as Decide
// hands one out.
//
// Everything else takes the store's Decide as before: a room not open
// (a pre-queue, a schedule before opening), with a challenge, a random
// or paused one, a store that failed or a view too old, a repair seen
// lately, a room with nobody waiting and room inside (the newcomer may go
// in at once, which the store decides exactly), an account signed in
// (its id may hold a place already).

// positionBound is the most places that may stand ahead of ticket t, plus
// one, by the tick's view: every place and pending number ahead of t lies
// in Low..t-1 (Stats.Low), and there are at most Waiting places and
// t-Floor pending numbers (Stats.Floor). Low and Floor only rise, so the
// first bound only falls; the ticket carries the smallest place told
// (its Anchor.Position while pending), which bounds the second.
func positionBound(view *progressView, t int64) int64 {
	b := t - view.low + 1
	if view.floor > 0 {
		b = min(b, view.waiting+max(t-view.floor, 0)+1)
	}
	return max(b, 1)
}

// batchable reports whether a batched join may answer a request to lr
// now, and the view it answers from (see the top of this file).
func (g *Gate) batchable(lr *liveRoom, lim Limits, ph Phase, now time.Time) (*progressView, Joiner, bool) {
	room := lr.room()
	if !room.JoinBatched || room.Challenge != nil || !anchorable(lr, lim, ph) || g.rooms.health.down.Load() {
		return nil, nil, false
	}
	j, ok := As[Joiner](g.rooms.store)
	if !ok {
		return nil, nil, false
	}
	// An older view bounds no less well (Low and Floor only rise, and a
	// place written since it was read is a number above its Floor), but
	// it may say the line is there after it emptied: a newcomer then
	// waits a tick for the place that lets it in at once. A view older
	// than two ticks (a tick that stalled, a store that slowed) asks the
	// store, as anchored polls do.
	view := lr.view.Load()
	if view == nil || view.low <= 0 || now.Sub(view.at) > 2*room.Tick+time.Second ||
		(view.mintedBy > 0 && now.Unix()-view.mintedBy < int64(anchorKeep(lim)/time.Second)) {
		return nil, nil, false
	}
	if view.waiting == 0 && lr.stats.Load().Active < int64(lim.MaxActive) {
		return nil, nil, false // room inside: the store decides who goes in at once
	}
	return view, j, true
}

// joinBatched answers a newcomer without the store when the room allows
// (batchable): the next number of the instance's block, pending, with
// the position bound sealed in its ticket. ok false: ask the store.
func (g *Gate) joinBatched(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, ph Phase, now time.Time) (visit, bool) {
	lr := vt.lr
	if vt.p.Valid || vt.account != "" {
		return vt, false
	}
	view, j, ok := g.batchable(lr, lim, ph, now)
	if !ok {
		return vt, false
	}
	if lim.MaxWaiting > 0 && view.waiting+lr.batch.queued() >= lim.MaxWaiting {
		vt.refused = AnswerFull
		g.rooms.obs.JoinRefused(lr.label(), string(RefusedFull))
		return vt, true
	}
	var t int64
	if !lr.batch.loose(vt.v, lim, now) {
		if t, ok = g.number(r.Context(), lr, j, lim, now); !ok {
			return vt, false
		}
	}
	d := Decision{State: StateWaiting, Ticket: t, Joined: true}
	var an Anchor
	if t > 0 {
		d.Position = positionBound(view, t)
		d.Line = max(view.waiting, d.Position)
		an = Anchor{Position: d.Position, At: now.Unix()}
	}
	vt.d = d
	vt.raw, vt.fresh = g.reissueAnchored(w, lr.name, vt.v, vt.p, d, an, now)
	return vt, true
}

// number hands out the next number of lr's block, reserving a block when
// it is empty: one reservation in flight per room, the others wait for
// it (within ctx). ok false: no block (the store failed or would not).
func (g *Gate) number(ctx context.Context, lr *liveRoom, j Joiner, lim Limits, now time.Time) (int64, bool) {
	b := &lr.batch
	for range 3 {
		b.mu.Lock()
		if b.next > 0 && b.next <= b.last {
			t := b.next
			b.next++
			b.handed++
			b.mu.Unlock()
			return t, true
		}
		if ch := b.reserving; ch != nil {
			b.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return 0, false
			}
		}
		ch := make(chan struct{})
		b.reserving = ch
		n := b.blockSize()
		b.mu.Unlock()
		first, err := j.Reserve(ctx, lr.name, lim, n, lr.known.hint(now, lim))
		b.mu.Lock()
		b.reserving = nil
		close(ch)
		if err != nil || first <= 0 {
			b.mu.Unlock()
			return 0, false
		}
		b.next, b.last = first, first+n-1
		b.mu.Unlock()
		g.rooms.health.answered()
		lr.known.see(first+n-1, now)
	}
	return 0, false
}

// placeBatched answers a pending ticket brought back in a batched room:
// with the place a tick wrote for it, or queued for the next tick and
// told the position bound. ok false: ask the store (settle).
func (g *Gate) placeBatched(w http.ResponseWriter, vt visit, lim Limits, ph Phase, now time.Time) (visit, bool) {
	lr, tk := vt.lr, vt.p.Ticket
	room := lr.room()
	// A numbered ticket carries the smallest place it was told (its
	// Anchor.Position, sealed by joinBatched); one minted by Decide does
	// not, so it is placed by Decide, whose exact answer cannot be larger
	// than anything it was told.
	if !room.JoinBatched || !vt.p.Valid || !tk.Pending || tk.Until != 0 || room.Challenge != nil ||
		(tk.Number == 0 && !vt.v.Loose) || (tk.Number > 0 && tk.Anchor.Position <= 0) {
		return vt, false
	}
	if res, ok := lr.batch.result(vt.v.ID); ok {
		return g.placed(w, vt, res, lim, now)
	}
	view, _, ok := g.batchable(lr, lim, ph, now)
	if !ok || !placeable(view, tk.Number, vt.v.Issued, lim, now) || !lr.batch.enqueue(vt.v) {
		return vt, false
	}
	d := Decision{State: StateWaiting, Ticket: tk.Number}
	if tk.Number > 0 {
		d.Position = positionBound(view, tk.Number)
		if told := tk.Anchor.Position; told > 0 {
			d.Position = min(d.Position, told)
		}
		d.Line = max(view.waiting, d.Position)
	}
	vt.d = d
	if d.Position > 0 && d.Position < tk.Anchor.Position {
		vt.raw, vt.fresh = g.reissueAnchored(w, lr.name, vt.v, vt.p, d, Anchor{Position: d.Position, At: now.Unix()}, now)
	}
	return vt, true
}

// placeable reports whether a pending ticket issued at issued, numbered t
// (0: loose), may be queued and told its position bound. One past its
// placement window, or below the view's Low or Floor, counts nowhere in
// the line: the store places it at the back (or not at all), so the bound,
// which only holds for a number still counted, would show it a place far
// smaller than the one it gets, and seal it as its anchor. It asks the
// store instead.
func placeable(view *progressView, t int64, issued time.Time, lim Limits, now time.Time) bool {
	if now.Sub(issued) > lim.PlacementWindow() {
		return false
	}
	return t == 0 || (t >= view.low && t >= view.floor)
}

// placed answers a ticket with the place a tick wrote for it, as settle
// answers the store's Decide. A place the ticket was told a smaller
// position than (by another instance's newer view) asks the store, whose
// exact answer is no larger.
func (g *Gate) placed(w http.ResponseWriter, vt visit, res Placed, lim Limits, now time.Time) (visit, bool) {
	lr, d := vt.lr, res.Decision
	if res.Ask || (d.State == StateWaiting && vt.p.Ticket.Anchor.Position > 0 && d.Position > vt.p.Ticket.Anchor.Position) {
		return vt, false
	}
	switch d.Refusal {
	case RefusedQuota:
		vt.refused, vt.retry = AnswerLimited, d.RetryAfter
		g.limited(lr.name, vt.network)
	case RefusedFull:
		vt.refused = AnswerFull
	}
	if vt.refused != "" {
		g.rooms.obs.JoinRefused(lr.label(), string(d.Refusal))
		return vt, true
	}
	if d.State == StateNone {
		return vt, false
	}
	lr.known.see(d.Ticket, now)
	if d.State == StateAdmitted {
		if !lim.Random {
			lr.admitted.see(d.Ticket, now)
		}
		g.rooms.sessions.Load().put(lr.name, vt.v.ID, vt.v.Client, d.Until, now)
	}
	vt.d = d
	g.noteAdmission(lr, vt, d, now)
	vt.raw, vt.fresh = g.reissue(w, lr.name, vt.v, vt.p, d, now)
	return vt, true
}

// placeJoins writes the places queued on this instance since its last
// tick, and releases its blocks' unused tails, in one Joiner.Place; the
// answers wait for their holders' next polls.
func (a *Admitter) placeJoins(ctx context.Context, lim Limits) error {
	j, ok := As[Joiner](a.rs.store)
	if !ok {
		return nil
	}
	ps, spans := a.lr.batch.takeTick(time.Now())
	if len(ps) == 0 && len(spans) == 0 {
		return nil
	}
	res, err := j.Place(ctx, a.lr.name, lim, ps, spans)
	if err != nil {
		a.lr.batch.putBack(ps, spans)
		return err
	}
	room := a.lr.room()
	a.lr.batch.settle(res, time.Now(), max(10*room.Tick, 3*room.Refresh, 10*time.Second))
	return nil
}
