package main

import (
	"math/rand/v2"
	"testing"
	"time"
)

// waiter is a visitor last seen waiting at sent (seconds) and, when in >= 0,
// seen admitted at in.
func waiter(visitor int, ticket int64, sent, in float64) orderEntry {
	e := orderEntry{visitor: visitor, ticket: ticket, lastWait: secs(sent), waited: sent >= 0}
	if in >= 0 {
		e.admitted, e.isIn = secs(in), true
	}
	return e
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// placedAt sets when e's first poll was answered and before which e was not in.
func placedAt(e orderEntry, placed, low float64) orderEntry {
	e.placed, e.low = secs(placed), secs(low)
	return e
}

func TestCheckOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		es         []orderEntry
		inversions int64
		overtaken  int
	}{
		{"nobody", nil, 0, 0},
		{"in order", []orderEntry{waiter(0, 10, 1, 2), waiter(1, 11, 2, 3), waiter(2, 12, 3, 4)}, 0, 0},
		// 11 was let in at 2s; 10 still waited when it asked at 3s.
		{"inversion", []orderEntry{waiter(0, 10, 3, 4), waiter(1, 11, 1, 2)}, 1, 1},
		// 10 asked at 1.5s and was told "waiting"; 11's admission answer came
		// at 2s. Both are consistent with 10 going in first: not provable.
		{"seen late is not proof", []orderEntry{waiter(0, 10, 1.5, 4), waiter(1, 11, 1, 2)}, 0, 0},
		{"same instant is not proof", []orderEntry{waiter(0, 10, 2, 4), waiter(1, 11, 1, 2)}, 0, 0},
		{"never admitted, overtaken", []orderEntry{waiter(0, 10, 9, -1), waiter(1, 11, 1, 2), waiter(2, 12, 1, 3)}, 2, 1},
		{"equal tickets do not order", []orderEntry{waiter(0, 10, 3, -1), waiter(1, 10, 1, 2)}, 0, 0},
		{"admitted at once, never seen waiting", []orderEntry{waiter(0, 10, -1, 5), waiter(1, 11, 1, 2)}, 0, 0},
		{"two overtaken by one", []orderEntry{waiter(0, 10, 5, 6), waiter(1, 11, 5, 6), waiter(2, 12, 1, 2)}, 2, 2},
		// 10 joined first but came back at 2.5s; 11 came back at 1.9s and
		// found room. 10 held no place when 11 went in.
		{"came back first", []orderEntry{placedAt(waiter(0, 10, 2.5, 4), 2.6, 0), placedAt(waiter(1, 11, -1, 2), 0, 1.9)}, 0, 0},
		// 10 held its place from 1s; 11 waited until 1.5s and went in before 10's poll at 3s.
		{"overtaken after placed", []orderEntry{placedAt(waiter(0, 10, 3, 4), 1, 0), placedAt(waiter(1, 11, 1.5, 2), 1.2, 1.5)}, 1, 1},
		// 11's last wait was sent before 10's place was known to exist: 11
		// may have gone in before 10 came back.
		{"placed too late to prove", []orderEntry{placedAt(waiter(0, 10, 3, 4), 1.6, 0), placedAt(waiter(1, 11, 1.5, 2), 1.2, 1.5)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := checkOrder(tt.es)
			if rep.Inversions != tt.inversions || rep.Overtaken != tt.overtaken || rep.Checked != len(tt.es) {
				t.Errorf("got %+v, want %d inversions, %d overtaken", rep, tt.inversions, tt.overtaken)
			}
			if (len(rep.Examples) > 0) != (tt.inversions > 0) {
				t.Errorf("examples %+v for %d inversions", rep.Examples, tt.inversions)
			}
		})
	}
}

func TestCheckOrder_Example(t *testing.T) {
	t.Parallel()
	rep := checkOrder([]orderEntry{waiter(7, 10, 3, 4), waiter(8, 11, 1, 2.5), waiter(9, 12, 1, 2)})
	if len(rep.Examples) != 1 {
		t.Fatalf("examples: %+v", rep.Examples)
	}
	// The example names the earliest admission among the later tickets.
	want := inversion{EarlierTicket: 10, LaterTicket: 12, LaterAdmittedAt: 2, EarlierWaitingAt: 3, EarlierVisitor: 7, LaterVisitor: 9}
	if rep.Examples[0] != want {
		t.Errorf("example %+v, want %+v", rep.Examples[0], want)
	}
}

// TestCheckOrder_MatchesPairs compares the sweep with the definition, pair
// by pair, on random lines.
func TestCheckOrder_MatchesPairs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		es := make([]orderEntry, rng.IntN(40))
		for i := range es {
			in := -1.0
			if rng.IntN(4) > 0 {
				in = float64(rng.IntN(20))
			}
			sent := float64(rng.IntN(20))
			if rng.IntN(10) == 0 {
				sent = -1
			}
			es[i] = waiter(i, int64(rng.IntN(30)), sent, in)
			if rng.IntN(2) == 0 {
				low := float64(rng.IntN(20))
				if in >= 0 {
					low = min(low, in)
				}
				es[i] = placedAt(es[i], float64(rng.IntN(20)), low)
			}
		}
		var want int64
		over := map[int]bool{}
		for _, i := range es {
			for _, j := range es {
				if i.ticket < j.ticket && j.isIn && i.waited && j.admitted < i.lastWait && j.low >= i.placed {
					want++
					over[i.visitor] = true
				}
			}
		}
		if rep := checkOrder(es); rep.Inversions != want || rep.Overtaken != len(over) {
			t.Fatalf("%+v: got %d inversions, %d overtaken; want %d, %d", es, rep.Inversions, rep.Overtaken, want, len(over))
		}
	}
}
