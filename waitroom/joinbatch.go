package waitroom

import (
	"context"
	"net/http"
	"sync"
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

const (
	// maxPlacements bounds the places queued and the answers kept on an
	// instance; past it a ticket asks the store as before.
	maxPlacements = 100_000
	// minBlock and maxBlock bound a reserved block.
	minBlock, maxBlock = 16, 4096
	// maxTails bounds the released spans waiting for the next tick; any
	// past it stop counting as pending once the placement window passes.
	maxTails = 64
	// maxAllowances bounds the networks and blocks whose pending
	// allowance an instance keeps.
	maxAllowances = 65_536
)

// joinBatch is a room's batched joins on one instance.
type joinBatch struct {
	mu sync.Mutex
	// next and last are the block being handed out (next > last: none);
	// reserving is closed when the reservation in flight ends.
	next, last int64
	reserving  chan struct{}
	// handed counts the numbers handed out since the last tick, last the
	// ones of the tick before: the next block's size.
	handed, lastHanded int64
	tails              []Span
	queue              map[string]Visitor
	// results are the ticks' answers by visitor id, kept for the keep
	// period (settle) after they are first picked up too: a replayed
	// pending cookie is answered from its entry, sealed placed, instead of
	// queued again. order is their ids oldest first, to forget the
	// expired and, when full, the oldest.
	results map[string]placedAt
	order   []resultAt
	allow   map[string]time.Time // GCRA times of the pending allowances
}

// placedAt is a place the tick wrote, kept for its holder's next poll.
type placedAt struct {
	Placed
	at time.Time
}

// resultAt is an entry of joinBatch.order: results[id] when its at is at.
type resultAt struct {
	id string
	at time.Time
}

// blockSize is the next block's size: twice the joins of the last tick,
// or of this one so far when more (a spike's first tick doubles its
// blocks as it goes).
func (b *joinBatch) blockSize() int64 {
	return min(max(2*b.lastHanded, 2*b.handed, minBlock), maxBlock)
}

// queued counts the places waiting for the next tick.
func (b *joinBatch) queued() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(len(b.queue))
}

// busy reports whether the next tick has places to write or numbers to
// release: a room that sleeps (sleep.go) must tick first.
func (b *joinBatch) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) > 0 || len(b.tails) > 0 || b.next > 0
}

// enqueue queues v's place for the next tick, once per visitor; false
// when the queue is full.
func (b *joinBatch) enqueue(v Visitor) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.queue[v.ID]; ok {
		return true
	}
	if len(b.queue) >= maxPlacements {
		return false
	}
	if b.queue == nil {
		b.queue = make(map[string]Visitor)
	}
	b.queue[v.ID] = Visitor{ID: v.ID, Ticket: v.Ticket, Issued: v.Issued, Network: v.Network, Block: v.Block,
		Client: v.Client, Loose: v.Loose}
	return true
}

// result is the answer the last ticks kept for visitor id. It stays until
// settle forgets it, so a pending cookie replayed after its holder picked
// it up is answered the same (and sealed placed), not queued again.
func (b *joinBatch) result(id string) (Placed, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.results[id]
	return p.Placed, ok
}

// takeTick detaches the block (its unused tail goes with this tick's
// places, so a block lives at most a tick), forgets the pending
// allowances spent by now, and returns the queued places and the spans
// to release.
func (b *joinBatch) takeTick(now time.Time) ([]Placement, []Span) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The allowances whose time has passed hold nothing: forget them here,
	// once a tick, so loose never sweeps on a join.
	for k, tat := range b.allow {
		if !tat.After(now) {
			delete(b.allow, k)
		}
	}
	if b.next > 0 && b.next <= b.last && len(b.tails) < maxTails {
		b.tails = append(b.tails, Span{First: b.next, Last: b.last})
	}
	b.next, b.last = 0, 0
	b.lastHanded, b.handed = b.handed, 0
	ps := make([]Placement, 0, len(b.queue))
	for _, v := range b.queue {
		ps = append(ps, Placement{Visitor: v})
	}
	clear(b.queue)
	spans := b.tails
	b.tails = nil
	return ps, spans
}

// putBack returns what a failed Place did not write, as far as there is
// room.
func (b *joinBatch) putBack(ps []Placement, spans []Span) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range ps {
		if _, ok := b.queue[p.Visitor.ID]; !ok && len(b.queue) < maxPlacements {
			if b.queue == nil {
				b.queue = make(map[string]Visitor)
			}
			b.queue[p.Visitor.ID] = p.Visitor
		}
	}
	for _, sp := range spans {
		if len(b.tails) < maxTails {
			b.tails = append(b.tails, sp)
		}
	}
}

// settle keeps a tick's answers for their holders' next polls, and
// forgets those older than keep; past maxPlacements it forgets the oldest
// (whose holders ask the store), so a tick's answers are always kept.
func (b *joinBatch) settle(res []Placed, now time.Time, keep time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.order) > 0 && now.Sub(b.order[0].at) > keep {
		b.forgetOldest()
	}
	if b.results == nil {
		b.results = make(map[string]placedAt)
	}
	for _, p := range res {
		if _, ok := b.results[p.ID]; !ok {
			for len(b.results) >= maxPlacements && len(b.order) > 0 {
				b.forgetOldest()
			}
		}
		b.results[p.ID] = placedAt{Placed: p, at: now}
		b.order = append(b.order, resultAt{id: p.ID, at: now})
	}
	if len(b.order) == 0 {
		b.order = nil // let the drained backing array go
	}
}

// forgetOldest drops the oldest entry of order, and its result unless a
// later tick answered the same id again. Callers hold b.mu.
func (b *joinBatch) forgetOldest() {
	o := b.order[0]
	b.order[0] = resultAt{}
	b.order = b.order[1:]
	if p, ok := b.results[o.id]; ok && p.at.Equal(o.at) {
		delete(b.results, o.id)
	}
}

// loose spends a unit of v's network's pending allowance and its block's
// on this instance (PendingPerNetwork a placement window, BlockFactor
// times that for the block), as decide.lua's loose does in the store:
// past either, nothing is spent and the ticket is loose. Only with a
// join_limit, as there.
func (b *joinBatch) loose(v Visitor, lim Limits, now time.Time) bool {
	if v.Network == "" || lim.JoinLimit.IsUnlimited() {
		return false
	}
	per := lim.PlacementWindow()
	type allowance struct {
		key string
		n   int64
	}
	all := []allowance{{"n\x01" + v.Network, PendingPerNetwork}}
	if v.Block != "" {
		all = append(all, allowance{"b\x01" + v.Block, PendingPerNetwork * BlockFactor})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A full table is swept once a tick (takeTick), never here: a join
	// costs the same however many networks the table holds. Meanwhile the
	// networks it holds are counted as ever; a new one is loose.
	fresh := 0
	for _, a := range all {
		if _, ok := b.allow[a.key]; !ok {
			fresh++
		}
	}
	if fresh > 0 && len(b.allow)+fresh > maxAllowances {
		return true
	}
	if b.allow == nil {
		b.allow = make(map[string]time.Time)
	}
	tats := make([]time.Time, len(all))
	for i, a := range all {
		every := per / time.Duration(a.n)
		tat := b.allow[a.key]
		if tat.Before(now) {
			tat = now
		}
		if tat.Sub(now) > every*time.Duration(a.n-1) {
			return true
		}
		tats[i] = tat.Add(every)
	}
	for i, a := range all {
		b.allow[a.key] = tats[i]
	}
	return false
}

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
