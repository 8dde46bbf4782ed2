package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// testShuffle: a shuffle puts the pre-queue in the order ShuffleOrder
// gives from the seed, on the ticket numbers they held; it runs once per
// key; ticks then admit in that order, and later arrivals come after.
func testShuffle(t *testing.T, e *env) {
	lim := limits(0)
	pre := lim
	pre.Prequeue = true
	early := make([]waitroom.Visitor, 30)
	for i := range early {
		early[i] = e.wait(pre)
	}
	ctx := context.Background()
	used, n, err := e.store().Shuffle(ctx, e.room, "sale-1", "seed-one")
	if err != nil || used != "seed-one" || n != len(early) {
		t.Fatalf("Shuffle: %q, %d, %v; want seed-one, %d", used, n, err, len(early))
	}
	if used, n, err := e.store().Shuffle(ctx, e.room, "sale-1", "another-seed"); err != nil || used != "seed-one" || n != 0 {
		t.Fatalf("a second Shuffle with the same key: %q, %d, %v; want the first seed, nothing shuffled", used, n, err)
	}
	want := slices.Clone(early)
	slices.SortFunc(want, func(a, b waitroom.Visitor) int {
		return strings.Compare(waitroom.ShuffleOrder("seed-one", a.ID), waitroom.ShuffleOrder("seed-one", b.ID))
	})
	if slices.Equal(want, early) {
		t.Fatal("test bug: the seed left 30 visitors in arrival order")
	}
	for i, v := range want {
		e.expect(lim, v, waitroom.StateWaiting, int64(i+1))
	}
	late := e.wait(lim)
	for i, v := range want { // one admission a tick, in the shuffled order
		one := limits(i + 1)
		if a := e.admit(one); a.Admitted != 1 {
			t.Fatalf("tick %d admitted %d", i, a.Admitted)
		}
		e.expect(one, v, waitroom.StateAdmitted, 0)
		e.expect(one, late, waitroom.StateWaiting, int64(len(want)-i)) // behind every early one still waiting
	}
}

// testShuffleOnlyPrequeue: a draw moves nobody who came after the
// pre-queue, and a room that never had one (a live FIFO line that a past
// opens_at was added to) keeps its order entirely.
func testShuffleOnlyPrequeue(t *testing.T, e *env) {
	lim := limits(0)
	fifo := make([]waitroom.Visitor, 12)
	for i := range fifo {
		fifo[i] = e.wait(lim)
	}
	ctx := context.Background()
	if _, n, err := e.store().Shuffle(ctx, e.room, "opens:past", "seed-one"); err != nil || n != 0 {
		t.Fatalf("Shuffle of a room without a pre-queue: %d shuffled, %v; want none", n, err)
	}
	for i, v := range fifo {
		e.expect(lim, v, waitroom.StateWaiting, int64(i+1))
	}
	// A pre-queue behind... is not how sales go, but a later draw must
	// still touch only tickets handed out under Prequeue.
	pre := lim
	pre.Prequeue = true
	early := []waitroom.Visitor{e.wait(pre), e.wait(pre), e.wait(pre)}
	late := e.wait(lim)
	if _, n, err := e.store().Shuffle(ctx, e.room, "opens:next", "seed-two"); err != nil || n > len(early) {
		t.Fatalf("Shuffle: %d shuffled, %v; want at most the %d of the pre-queue", n, err, len(early))
	}
	for i, v := range fifo {
		e.expect(lim, v, waitroom.StateWaiting, int64(i+1))
	}
	e.expect(lim, late, waitroom.StateWaiting, int64(len(fifo)+len(early)+1))
}
