package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// The batched joins (waitroom.Joiner): numbers from a reserved block,
// places written in one call per gateway per tick.

// joinerOf is store i's Joiner; the test fails when the store has none.
func (e *env) joinerOf(i int) waitroom.Joiner {
	e.t.Helper()
	j, ok := waitroom.As[waitroom.Joiner](e.stores[i%len(e.stores)])
	if !ok {
		e.t.Fatalf("store %d offers no Joiner", i)
	}
	return j
}

// reserve takes n numbers through store i.
func (e *env) reserve(i int, lim waitroom.Limits, n, known int64) int64 {
	e.t.Helper()
	first, err := e.joinerOf(i).Reserve(context.Background(), e.room, lim, n, known)
	if err != nil || first == 0 {
		e.t.Fatalf("Reserve(%d, known %d) through store %d: %d, %v; want a block", n, known, i, first, err)
	}
	return first
}

// placeAll places vs through store i, releasing spans, and returns the
// answers by visitor id.
func (e *env) placeAll(i int, lim waitroom.Limits, vs []waitroom.Visitor, spans ...waitroom.Span) map[string]waitroom.Placed {
	e.t.Helper()
	ps := make([]waitroom.Placement, len(vs))
	for j, v := range vs {
		ps[j] = waitroom.Placement{Visitor: v}
	}
	got, err := e.joinerOf(i).Place(context.Background(), e.room, lim, ps, spans)
	if err != nil {
		e.t.Fatalf("Place(%d tickets) through store %d: %v", len(vs), i, err)
	}
	if len(got) != len(vs) {
		e.t.Fatalf("Place(%d tickets): %d answers", len(vs), len(got))
	}
	out := make(map[string]waitroom.Placed, len(got))
	for j, p := range got {
		if p.ID != vs[j].ID {
			e.t.Fatalf("Place: answer %d is %q's, want %q's", j, p.ID, vs[j].ID)
		}
		out[p.ID] = p
	}
	return out
}

// pendingVisitor is a visitor holding number t from a block, brought back.
func pendingVisitor(t int64, network string) waitroom.Visitor {
	now := time.Now()
	return waitroom.Visitor{ID: newVisitorID(), Ticket: t, Issued: now, Seen: now, Network: network}
}

// testBatchedOrder: two gateways reserve blocks one after the other and
// hand out numbers; whatever order and gateway the places are written
// through, the line is in number order, and each answer's position is
// its place in it.
func testBatchedOrder(t *testing.T, e *env) {
	lim := limits(0)
	a := e.reserve(0, lim, 4, 0)
	b := e.reserve(1, lim, 4, 0)
	if b < a+4 {
		t.Fatalf("second block starts at %d, inside the first (%d..%d)", b, a, a+3)
	}
	var vs []waitroom.Visitor
	for i := range int64(3) {
		vs = append(vs, pendingVisitor(a+i, ""), pendingVisitor(b+i, ""))
	}
	// Gateway 1 places its tickets first, releasing its tail; then
	// gateway 0 its own, releasing its tail too.
	got := e.placeAll(1, lim, []waitroom.Visitor{vs[5], vs[3], vs[1]}, waitroom.Span{First: b + 3, Last: b + 3})
	for _, p := range got {
		if p.Ask || p.Decision.State != waitroom.StateWaiting || !p.Decision.Placed {
			t.Fatalf("gateway 1's places: %+v, want waiting and placed", p)
		}
		// The three of block a are pending ahead, and released a+3 too
		// until gateway 0 releases it: positions are bounds here.
		if p.Decision.Position < 4 || p.Decision.Position > 7 {
			t.Fatalf("a place of block b: %+v, want position 4 to 7", p.Decision)
		}
	}
	for k, p := range e.placeAll(0, lim, []waitroom.Visitor{vs[4], vs[2], vs[0]}, waitroom.Span{First: a + 3, Last: a + 3}) {
		got[k] = p
	}
	for i, v := range vs {
		want := int64(1 + i/2 + 3*(i%2))
		d := got[v.ID].Decision
		if i%2 == 1 {
			// Gateway 1's answers were written before block a's tail was
			// released: ask again for the exact place.
			d = e.decide(lim, waitroom.Visitor{ID: v.ID, Ticket: v.Ticket, Placed: true}, false)
		}
		if d.Ticket != v.Ticket || d.Position != want {
			t.Fatalf("ticket %d: %+v, want position %d", v.Ticket, d, want)
		}
	}
	if st := e.stats(); st.Waiting != 6 {
		t.Fatalf("stats after six places: %+v, want six waiting", st)
	}
}

// testBatchedRelease: the unused tail of a block stops counting as
// pending once released; the places behind it move forward, never back.
func testBatchedRelease(t *testing.T, e *env) {
	lim := limits(0)
	first := e.reserve(0, lim, 10, 0)
	late := e.reserve(0, lim, 1, 0)
	v := pendingVisitor(first, "")
	w := pendingVisitor(late, "")
	got := e.placeAll(0, lim, []waitroom.Visitor{v, w})
	before := got[w.ID].Decision.Position
	if before != 11 {
		t.Fatalf("the ticket behind a block of 10 with one placed: %+v, want position 11 (9 pending ahead)", got[w.ID].Decision)
	}
	got = e.placeAll(len(e.stores)-1, lim, []waitroom.Visitor{w}, waitroom.Span{First: first + 1, Last: first + 9})
	if d := got[w.ID].Decision; d.Position != 2 || d.Joined {
		t.Fatalf("after the tail's release: %+v, want position 2, its standing", d)
	}
	if d := e.decide(lim, waitroom.Visitor{ID: w.ID, Ticket: w.Ticket, Placed: true}, false); d.Position != 2 {
		t.Fatalf("asked again: %+v, want position 2", d)
	}
	// A released number buys no place.
	if p := e.placeAll(0, lim, []waitroom.Visitor{pendingVisitor(first+3, "")}); !firstOf(p).Ask {
		t.Fatalf("a released number brought back: %+v, want it left to Decide", firstOf(p))
	}
}

func firstOf(m map[string]waitroom.Placed) waitroom.Placed {
	for _, p := range m {
		return p
	}
	return waitroom.Placed{}
}

// testBatchedIdempotent: one visitor placed through two gateways, in two
// batches, holds one place; the second answer is its standing.
func testBatchedIdempotent(t *testing.T, e *env) {
	lim := limits(0)
	first := e.reserve(0, lim, 2, 0)
	v := pendingVisitor(first+1, "")
	a := e.placeAll(0, lim, []waitroom.Visitor{v})[v.ID]
	b := e.placeAll(len(e.stores)-1, lim, []waitroom.Visitor{v})[v.ID]
	if a.Decision.State != waitroom.StateWaiting || !a.Decision.Joined {
		t.Fatalf("first placement: %+v, want a new place", a)
	}
	if b.Decision.State != waitroom.StateWaiting || b.Decision.Joined || b.Decision.Ticket != v.Ticket ||
		b.Decision.Position != a.Decision.Position {
		t.Fatalf("second placement: %+v, want the first's standing %+v", b, a)
	}
	if st := e.stats(); st.Waiting != 1 || st.Joined != 1 {
		t.Fatalf("stats: %+v, want one waiting, one joined", st)
	}
}

// testBatchedQuota: the quota counts the places written, not the numbers:
// a network past join_limit is refused in the batch, another is not.
func testBatchedQuota(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 2, Per: time.Hour}
	first := e.reserve(0, lim, 4, 0)
	vs := []waitroom.Visitor{pendingVisitor(first, "net-q"), pendingVisitor(first+1, "net-q"),
		pendingVisitor(first+2, "net-q"), pendingVisitor(first+3, "net-other")}
	got := e.placeAll(0, lim, vs)
	for i, v := range vs {
		d := got[v.ID].Decision
		refused := i == 2
		if refused != (d.Refusal == waitroom.RefusedQuota) || (!refused && d.State != waitroom.StateWaiting) {
			t.Fatalf("ticket %d of network %s: %+v, want refused %t", i, v.Network, d, refused)
		}
		if refused && d.RetryAfter <= 0 {
			t.Fatalf("a refusal without a wait: %+v", d)
		}
	}
	// The network's quota is the store's, whoever asks: Decide refuses it too.
	v := waitroom.Visitor{ID: newVisitorID(), Network: "net-q", Issued: time.Now(), Seen: time.Now()}
	nv, d := e.issueAs(lim, v)
	if d.Refusal == "" {
		if _, d = e.tryPlace(lim, nv); d.Refusal != waitroom.RefusedQuota {
			t.Fatalf("network past its quota through Decide: %+v, want refused", d)
		}
	}
}

// issueAs is Decide with JoinTicket for v; tryPlace brings its ticket back.
func (e *env) issueAs(lim waitroom.Limits, v waitroom.Visitor) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	d, err := e.store().Decide(context.Background(), e.room, lim, v, waitroom.JoinTicket)
	if err != nil {
		e.t.Fatal(err)
	}
	v.Ticket = d.Ticket
	return v, d
}

func (e *env) tryPlace(lim waitroom.Limits, v waitroom.Visitor) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	d, err := e.store().Decide(context.Background(), e.room, lim, v, waitroom.JoinNone)
	if err != nil {
		e.t.Fatal(err)
	}
	return v, d
}

// testBatchedLoose: a loose ticket (no number) takes a new one at the
// back, behind every number handed out before it; a full room refuses.
func testBatchedLoose(t *testing.T, e *env) {
	lim := limits(0)
	first := e.reserve(0, lim, 3, 0)
	now := time.Now()
	loose := waitroom.Visitor{ID: newVisitorID(), Loose: true, Issued: now, Seen: now}
	vs := []waitroom.Visitor{loose, pendingVisitor(first+2, ""), pendingVisitor(first, "")}
	got := e.placeAll(0, lim, vs, waitroom.Span{First: first + 1, Last: first + 1})
	d := got[loose.ID].Decision
	if d.State != waitroom.StateWaiting || d.Ticket <= first+2 || d.Position != 3 {
		t.Fatalf("the loose ticket: %+v, want a number past %d at position 3", d, first+2)
	}
	lim.MaxWaiting = 3
	late := e.reserve(0, lim, 1, 0)
	got = e.placeAll(0, lim, []waitroom.Visitor{pendingVisitor(late, "")}, waitroom.Span{})
	if d := firstOf(got).Decision; d.Refusal != waitroom.RefusedFull {
		t.Fatalf("a place past max_waiting: %+v, want refused full", d)
	}
}

// testBatchedKnownMoves: a gateway's word of a ticket above the counter
// (a failover lost the last reservation) moves it before the block is
// taken, so no number is handed out twice.
func testBatchedKnownMoves(t *testing.T, e *env) {
	lim := limits(0)
	first := e.reserve(0, lim, 1, 0)
	known := first + 50
	next := e.reserve(len(e.stores)-1, lim, 5, known)
	if next <= known {
		t.Fatalf("block after known %d starts at %d, want past it", known, next)
	}
	// The ticket the gateway knew of is placed by number through Decide,
	// which holds the repair's rules; Place leaves it there.
	if p := firstOf(e.placeAll(0, lim, []waitroom.Visitor{pendingVisitor(known, "")})); !p.Ask {
		t.Fatalf("a ticket up to the repair's counter: %+v, want it left to Decide", p)
	}
	if p := firstOf(e.placeAll(0, lim, []waitroom.Visitor{pendingVisitor(next, "")})); p.Ask || p.Decision.State != waitroom.StateWaiting {
		t.Fatalf("a number of the new block: %+v, want its place", p)
	}
}

// testBatchedAtOnce: a ticket placed while nobody waits and the room has
// room goes in at once, as Decide's placement would, within max_active.
func testBatchedAtOnce(t *testing.T, e *env) {
	lim := limits(1)
	first := e.reserve(0, lim, 2, 0)
	a, b := pendingVisitor(first, ""), pendingVisitor(first+1, "")
	got := e.placeAll(0, lim, []waitroom.Visitor{b, a})
	if d := got[a.ID].Decision; d.State != waitroom.StateAdmitted {
		t.Fatalf("the lower ticket: %+v, want admitted at once", d)
	}
	if d := got[b.ID].Decision; d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("the higher ticket: %+v, want waiting at 1 (max_active 1)", d)
	}
	if st := e.stats(); st.Active != 1 || st.Waiting != 1 {
		t.Fatalf("stats: %+v, want one inside and one waiting", st)
	}
}

// testBatchedFarApart: a batch with one ticket far below the rest (an old
// pending cookie replayed, more than 65,536 numbers down) is given every
// position exactly, as Decide counts it: the places and the pending
// numbers below each ticket, across the gap.
func testBatchedFarApart(t *testing.T, e *env) {
	lim := limits(0)
	old := e.reserve(0, lim, 1, 0)
	const span = 70_000
	mid := e.reserve(0, lim, span, 0)
	near := e.reserve(0, lim, 4, 0)
	m := pendingVisitor(mid+500, "")
	if p := e.placeAll(0, lim, []waitroom.Visitor{m})[m.ID]; p.Ask || p.Decision.State != waitroom.StateWaiting {
		t.Fatalf("the place in the middle: %+v", p)
	}
	// The middle block released but for two numbers, still pending; near's
	// last number released, near+1 left pending.
	release := []waitroom.Span{{First: mid, Last: mid + 499}, {First: mid + 501, Last: mid + 999},
		{First: mid + 1001, Last: mid + 39_999}, {First: mid + 40_001, Last: mid + span - 1}, {First: near + 3, Last: near + 3}}
	vs := []waitroom.Visitor{pendingVisitor(near+2, ""), pendingVisitor(old, ""), pendingVisitor(near, "")}
	got := e.placeAll(len(e.stores)-1, lim, vs, release...)
	for i, want := range []int64{7, 1, 5} {
		v := vs[i]
		d := got[v.ID].Decision
		if got[v.ID].Ask || d.State != waitroom.StateWaiting || d.Ticket != v.Ticket || d.Position != want {
			t.Fatalf("ticket %d: %+v, want waiting at %d", v.Ticket, got[v.ID], want)
		}
		if asked := e.decide(lim, waitroom.Visitor{ID: v.ID, Ticket: v.Ticket, Placed: true}, false); asked.Position != want {
			t.Fatalf("ticket %d asked again: %+v, want position %d", v.Ticket, asked, want)
		}
	}
	if d := e.decide(lim, waitroom.Visitor{ID: m.ID, Ticket: m.Ticket, Placed: true}, false); d.Position != 2 {
		t.Fatalf("the middle place: %+v, want position 2", d)
	}
}
