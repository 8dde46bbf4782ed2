package memstore

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	w := newWindow(1000, t0)
	for n := int64(1001); n <= 1200; n++ {
		if n%3 == 0 && !w.use(n) {
			t.Fatalf("use(%d) refused a fresh ticket", n)
		}
	}
	if w.use(1002) || w.placeable(1002) || w.use(1000) {
		t.Fatal("a used ticket, or one at the floor, was usable again")
	}
	// Below 1101: 1001..1100 is 100 numbers, 33 of them used.
	if got := w.pendingBelow(1101); got != 67 {
		t.Fatalf("pendingBelow(1101) = %d, want 67", got)
	}
	if got := w.pendingBelow(1001); got != 0 {
		t.Fatalf("pendingBelow(1001) = %d, want 0", got)
	}
	// The window is 8s: marks every second. 1100 was the last number out
	// at t0+1s; 8s later the floor passes it.
	w.advance(t0.Add(time.Second), 1100, 8*time.Second)
	w.advance(t0.Add(5*time.Second), 1200, 8*time.Second)
	if w.floor != 1000 {
		t.Fatalf("floor %d before the window passed, want 1000", w.floor)
	}
	w.advance(t0.Add(9*time.Second), 1300, 8*time.Second)
	if w.floor != 1100 || w.placeable(1100) || !w.placeable(1102) || w.placeable(1101) {
		t.Fatalf("floor %d after the window passed 1100, want 1100", w.floor)
	}
	// Above the floor: 1101..1200 minus the 34 multiples of 3 used.
	if got := w.pendingBelow(1201); got != 66 {
		t.Fatalf("pendingBelow(1201) = %d, want 66", got)
	}
	if w.base > w.floor+1 {
		t.Fatalf("base %d passed the floor %d", w.base, w.floor)
	}
}
