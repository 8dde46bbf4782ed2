package waitroom

import (
	"fmt"
	"testing"
	"time"
)

// A tick takes the queued places once each and the block's unused tail,
// so a block lives one tick at most; the next block is sized by the
// joins of the tick before.
func TestJoinBatch_TickDetachesTheBlock(t *testing.T) {
	var b joinBatch
	b.next, b.last, b.handed = 110, 119, 40
	for _, id := range []string{"a", "b", "a"} {
		if !b.enqueue(Visitor{ID: id, Ticket: 101}) {
			t.Fatalf("enqueue %s refused", id)
		}
	}
	if !b.busy() {
		t.Fatal("a batch with places and a block is not busy")
	}
	ps, spans := b.takeTick(time.Now())
	if len(ps) != 2 || len(spans) != 1 || spans[0] != (Span{First: 110, Last: 119}) {
		t.Fatalf("takeTick: %d places, spans %v; want 2 and 110..119", len(ps), spans)
	}
	if b.next != 0 || b.busy() {
		t.Fatalf("after the tick: block %d..%d, busy %t; want none", b.next, b.last, b.busy())
	}
	if got := b.blockSize(); got != 80 {
		t.Fatalf("next block: %d, want 80 (twice the last tick's 40 joins)", got)
	}
	b.putBack(ps, spans)
	if ps2, spans2 := b.takeTick(time.Now()); len(ps2) != 2 || len(spans2) != 1 {
		t.Fatalf("after a failed Place: %d places, %d spans; want them back", len(ps2), len(spans2))
	}
	b.settle([]Placed{{ID: "a", Decision: Decision{State: StateWaiting, Position: 3}}}, time.Now(), time.Minute)
	if p, ok := b.result("a"); !ok || p.Decision.Position != 3 {
		t.Fatalf("result: %+v, %t", p, ok)
	}
	if p, ok := b.result("a"); !ok || p.Decision.Position != 3 {
		t.Fatalf("a result picked up again (a replayed pending cookie): %+v, %t; want the same answer", p, ok)
	}
}

// The answers are kept for the keep period, picked up or not (a replayed
// pending cookie is answered from them); past maxPlacements the oldest go
// first, so a tick's answers are always kept; the queue does not depend
// on how many answers are kept.
func TestJoinBatch_ResultsKeptAndEvicted(t *testing.T) {
	var b joinBatch
	now := time.Now()
	res := make([]Placed, maxPlacements)
	for i := range res {
		res[i] = Placed{ID: fmt.Sprintf("old%d", i), Decision: Decision{State: StateWaiting, Position: int64(i + 1)}}
	}
	b.settle(res, now, time.Minute)
	if !b.enqueue(Visitor{ID: "newcomer", Ticket: 7}) {
		t.Fatal("enqueue refused with the answers full; want it independent of them")
	}
	b.settle([]Placed{{ID: "new", Decision: Decision{State: StateWaiting, Position: 1}}}, now.Add(time.Second), time.Minute)
	if _, ok := b.result("new"); !ok {
		t.Fatal("a tick's answer with the table full: dropped, want kept")
	}
	if _, ok := b.result("old0"); ok {
		t.Fatal("the oldest answer: kept, want evicted for the new one")
	}
	if len(b.results) != maxPlacements {
		t.Fatalf("%d answers kept, want %d", len(b.results), maxPlacements)
	}
	if _, ok := b.result("old1"); !ok {
		t.Fatal("the second oldest: evicted, want kept")
	}
	b.settle(nil, now.Add(time.Minute+2*time.Second), time.Minute)
	if len(b.results) != 0 || len(b.order) != 0 {
		t.Fatalf("past the keep period: %d answers, %d in order; want none", len(b.results), len(b.order))
	}
}

// The position bound: every place and pending number ahead of t lies in
// Low..t-1, at most Waiting places and t-Floor pending numbers.
func TestPositionBound(t *testing.T) {
	for _, tc := range []struct {
		low, floor, waiting, t, want int64
	}{
		{low: 100, floor: 100, waiting: 5, t: 110, want: 11},   // a young line: Low is the floor
		{low: 10, floor: 1000, waiting: 50, t: 1020, want: 71}, // an old head far back: Waiting and the window
		{low: 10, floor: 0, waiting: 50, t: 1020, want: 1011},  // no floor known: Low alone
		{low: 200, floor: 200, waiting: 0, t: 150, want: 1},    // never below 1
	} {
		v := &progressView{low: tc.low, floor: tc.floor, waiting: tc.waiting}
		if got := positionBound(v, tc.t); got != tc.want {
			t.Errorf("positionBound(%+v, %d) = %d, want %d", tc, tc.t, got, tc.want)
		}
	}
}

// The pending allowance kept per instance: PendingPerNetwork numbers a
// placement window per network, then loose; another network is counted;
// without a join_limit nothing is loose.
func TestJoinBatch_PendingAllowance(t *testing.T) {
	var b joinBatch
	lim := Limits{JoinLimit: Rate{N: 10, Per: time.Minute}, PlaceWithin: time.Minute}
	now := time.Now()
	v := Visitor{Network: "n1"}
	for i := range PendingPerNetwork {
		if b.loose(v, lim, now) {
			t.Fatalf("ticket %d of a network: loose, want counted", i+1)
		}
	}
	if !b.loose(v, lim, now) {
		t.Fatal("a network past PendingPerNetwork: counted, want loose")
	}
	if b.loose(Visitor{Network: "n2"}, lim, now) {
		t.Fatal("another network: loose, want counted")
	}
	if b.loose(v, lim, now.Add(lim.PlaceWithin/PendingPerNetwork+time.Millisecond)) {
		t.Fatal("a network a fifth of a window later: loose, want one more counted")
	}
	if b.loose(v, Limits{}, now) {
		t.Fatal("no join_limit: loose, want counted")
	}
}

// A full allowance table: the networks it holds are counted as ever, a
// new one is loose, and the join path never sweeps it (the spent entries
// stay until the tick's takeTick forgets them, then a new network counts).
func TestJoinBatch_AllowanceTableFull(t *testing.T) {
	var b joinBatch
	lim := Limits{JoinLimit: Rate{N: 10, Per: time.Minute}, PlaceWithin: time.Minute}
	now := time.Now()
	if b.loose(Visitor{Network: "held"}, lim, now) {
		t.Fatal("the first network: loose, want counted")
	}
	for i := range maxAllowances - 1 {
		b.allow[fmt.Sprintf("n\x01spent%d", i)] = now.Add(-time.Second) // spent: sweepable
	}
	if b.loose(Visitor{Network: "held"}, lim, now) {
		t.Fatal("a network the full table holds: loose, want counted")
	}
	if !b.loose(Visitor{Network: "new"}, lim, now) {
		t.Fatal("a new network with the table full: counted, want loose")
	}
	if len(b.allow) != maxAllowances {
		t.Fatalf("the join path changed the table: %d entries, want %d (no sweep on a join)", len(b.allow), maxAllowances)
	}
	b.takeTick(now)
	if len(b.allow) != 1 {
		t.Fatalf("after the tick: %d entries, want the one still running ahead", len(b.allow))
	}
	if b.loose(Visitor{Network: "new"}, lim, now) {
		t.Fatal("a new network after the tick's sweep: loose, want counted")
	}
}

// A hoarded pending cookie (past its placement window, or below the
// view's Low or Floor) is not queued nor told the position bound, which
// only holds for a number still counted: positionBound would show it
// place 1 while the store puts it at the back. It asks the store, whose
// answer is the first it is told.
func TestPlaceable_HoardedTicketAsksTheStore(t *testing.T) {
	lim := Limits{PlaceWithin: time.Minute}
	now := time.Now()
	view := &progressView{low: 1000, floor: 1200, waiting: 50}
	for _, tc := range []struct {
		name   string
		t      int64
		issued time.Time
		want   bool
	}{
		{"young, counted", 1300, now.Add(-time.Second), true},
		{"at the floor", 1200, now.Add(-time.Second), true},
		{"loose, young", 0, now.Add(-time.Second), true},
		{"past the window", 1300, now.Add(-lim.PlaceWithin - time.Second), false},
		{"loose, past the window", 0, now.Add(-lim.PlaceWithin - time.Second), false},
		{"below the floor", 1100, now.Add(-time.Second), false},
		{"below Low", 900, now.Add(-time.Second), false},
	} {
		if got := placeable(view, tc.t, tc.issued, lim, now); got != tc.want {
			t.Errorf("%s: placeable = %t, want %t", tc.name, got, tc.want)
		}
		// What it would have been told: the bound for a number below Low
		// is 1, smaller than any place the store gives it at the back.
		if !tc.want && tc.t > 0 && tc.t < view.low && positionBound(view, tc.t) != 1 {
			t.Errorf("%s: positionBound = %d; the case this guards is place 1", tc.name, positionBound(view, tc.t))
		}
	}
}
