package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// testShuffle: a shuffle puts everyone waiting in the order ShuffleOrder
// gives from the seed, on the ticket numbers they held; it runs once per
// key; ticks then admit in that order, and later arrivals come after.
func testShuffle(t *testing.T, e *env) {
	lim := limits(0)
	early := make([]waitroom.Visitor, 30)
	for i := range early {
		early[i] = e.wait(lim)
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
