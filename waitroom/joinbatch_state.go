package waitroom

import (
	"sync"
	"time"
)

// An instance's side of the batched joins (joinbatch.go): its block, the
// places queued for its next tick, the answers kept for their holders'
// polls, and the networks' pending allowances.

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
