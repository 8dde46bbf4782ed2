package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var _ waitroom.Joiner = (*Store)(nil)

// Reserve implements waitroom.Joiner: n numbers off the room's counter,
// after a known above it moved it (learn). The numbers are pending (above
// the window's floor, unused) until placed or released. A known below
// the room's seed (the caller saw tickets this store lost) answers 0:
// the caller's newcomers ask Decide, which starts the recovery grace.
// Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Reserve(ctx context.Context, room string, lim waitroom.Limits, n, known int64) (int64, error) {
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return 0, err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	if n <= 0 || (known > 0 && known < r.seed) || r.inGrace(now) {
		return 0, nil
	}
	r.started, r.repaired = false, false
	r.learn(now, lim, known, 0)
	first := r.seq + 1
	for range n {
		r.next(lim)
	}
	return first, nil
}

// Place implements waitroom.Joiner with the placement Decide makes of an
// unplaced ticket (place, placeLoose), in ticket order, loose tickets
// last, after the spans are released. Errors: waitroom.ErrClosed, ctx's
// error.
func (s *Store) Place(ctx context.Context, room string, lim waitroom.Limits, ps []waitroom.Placement, release []waitroom.Span) ([]waitroom.Placed, error) {
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	r.expire(now)
	for _, sp := range release {
		// Bounded by the counter: a span is numbers reserved here.
		for t := max(sp.First, r.win.floor+1, r.win.base); t <= min(sp.Last, r.seq); t++ {
			r.win.use(t)
		}
	}
	out := make([]waitroom.Placed, len(ps))
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return placeOrder(ps[a].Visitor, ps[b].Visitor) })
	for _, i := range order {
		v := ps[i].Visitor
		out[i] = waitroom.Placed{ID: v.ID}
		out[i].Decision, out[i].Ask = r.placeOne(now, lim, v)
	}
	return out, nil
}

// placeOrder sorts a batch: numbered tickets by number, then loose ones,
// which take the next numbers in the batch's order.
func placeOrder(a, b waitroom.Visitor) int {
	if a.Loose != b.Loose {
		if a.Loose {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.Ticket, b.Ticket)
}

// placeOne is one ticket of Place: its standing when it has one, else
// its place (or a refusal), or ask when only Decide can say.
func (r *room) placeOne(now time.Time, lim waitroom.Limits, v waitroom.Visitor) (waitroom.Decision, bool) {
	if s := r.active.get(v.ID); s != nil {
		return waitroom.Decision{State: waitroom.StateAdmitted, Ticket: s.ticket, Until: s.until, Placed: true}, false
	}
	if w := r.waiting[v.ID]; w != nil {
		r.seen.touch(w, now)
		return r.waitingDecision(w, false), false
	}
	if v.Challenge != "" || (!v.Loose && (v.Ticket <= 0 || v.Ticket < r.seed || v.Ticket > r.seq)) ||
		(r.mend > 0 && v.Ticket > 0 && v.Ticket <= r.mend) {
		return waitroom.Decision{}, true
	}
	if lim.MaxWaiting > 0 && int64(r.line.len()) >= lim.MaxWaiting {
		r.totals.Full++
		return waitroom.Decision{Refusal: waitroom.RefusedFull}, false
	}
	r.started, r.repaired = false, false
	var d waitroom.Decision
	var ok bool
	if v.Loose {
		d, ok = r.placeLoose(now, lim, v)
	} else {
		d, ok = r.place(now, lim, v)
	}
	if !ok {
		return waitroom.Decision{}, true
	}
	if d.Joined && d.State == waitroom.StateAdmitted {
		if s := r.active.get(v.ID); s != nil {
			s.use(now, lim, v.Client) // an admission at once: its first client
		}
	}
	return d, false
}
