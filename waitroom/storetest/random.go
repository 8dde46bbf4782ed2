package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testRandomEveryoneOnce: with Random, ticks and AdmitN take visitors from
// anywhere in the line, each of them exactly once, never more than the free
// slots. Ticket order would admit the first of the line in every round;
// a uniform pick does so with probability 1/C(m, 40) for m still waiting,
// and takes about half of the first round from the back half of the line.
func testRandomEveryoneOnce(t *testing.T, e *env) {
	const visitors, slots = 200, 40
	lim := limits(slots)
	lim.Random = true
	line := e.waitMany(queued(lim), visitors)
	waiting := make([]int, visitors) // indexes into line, in ticket order
	for i := range waiting {
		waiting[i] = i
	}
	for round := 0; len(waiting) > 0; round++ {
		if round == visitors/slots {
			t.Fatalf("%d still waiting after %d rounds of %d", len(waiting), round, slots)
		}
		var a waitroom.Admitted
		if round%2 == 0 {
			a = e.admit(lim)
		} else {
			a = e.admitN(lim, slots+5) // more than the slots: MaxActive bounds it
		}
		want := min(slots, len(waiting))
		if a.Admitted != want {
			t.Fatalf("round %d: %+v, want %d admitted into %d free slots", round, a, want, slots)
		}
		if st := e.stats(); st.Active != int64(want) || st.Waiting != int64(len(waiting)-want) {
			t.Fatalf("round %d: stats %+v, want %d active, %d waiting", round, st, want, len(waiting)-want)
		}
		in, still := e.partition(lim, line, waiting)
		if len(in) != want {
			t.Fatalf("round %d: %d visitors find themselves admitted, the store says %d", round, len(in), want)
		}
		if len(still) > 0 && slices.Equal(in, waiting[:want]) {
			t.Errorf("round %d admitted exactly the first %d in line: ticket order, not random", round, want)
		}
		if round == 0 {
			if back := len(in) - countBelow(in, visitors/2); back < 5 {
				t.Errorf("round 0 took %d of %d from the back half of the line, want about half", back, want)
			}
		}
		for _, i := range in {
			e.mustRelease(line[i].ID)
		}
		waiting = still
	}
	if st := e.stats(); st.AdmittedTotal != visitors || st.Released != visitors || st.Active != 0 || st.Waiting != 0 {
		t.Errorf("stats %+v, want all %d admitted once and released", st, visitors)
	}
}

// partition asks every visitor still waiting where it stands, and splits
// them into those now admitted and those still in line, both in ticket
// order. Nobody may have lost its place.
func (e *env) partition(lim waitroom.Limits, line []waitroom.Visitor, waiting []int) (in, still []int) {
	e.t.Helper()
	for _, i := range waiting {
		switch d := e.decide(lim, line[i], false); d.State {
		case waitroom.StateAdmitted:
			in = append(in, i)
		case waitroom.StateWaiting:
			if d.Position != int64(len(still)+1) {
				e.t.Fatalf("ticket %d at position %d, want %d: the line must keep its order", line[i].Ticket, d.Position, len(still)+1)
			}
			still = append(still, i)
		default:
			e.t.Fatalf("ticket %d lost its place: %+v", line[i].Ticket, d)
		}
	}
	return in, still
}

func countBelow(xs []int, limit int) int {
	n := 0
	for _, x := range xs {
		if x < limit {
			n++
		}
	}
	return n
}

// testRandomBucket: random ticks still spend a token each and stop when
// the bucket is empty; AdmitN still fills only the free slots.
func testRandomBucket(t *testing.T, e *env) {
	lim := limits(15)
	lim.Random = true
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 1, Per: time.Hour}, 5
	e.waitMany(queued(lim), 20)
	if a := e.admit(lim); a.Admitted != 5 {
		t.Fatalf("random tick with a full bucket of 5: %+v, want 5 admitted", a)
	}
	if a := e.admit(lim); a.Admitted != 0 {
		t.Fatalf("random tick with an empty bucket: %+v, want nobody admitted", a)
	}
	if a := e.admitN(lim, 20); a.Admitted != 10 {
		t.Fatalf("random AdmitN(20) with 10 slots free: %+v, want 10 admitted", a)
	}
	if a := e.admitN(lim, 20); a.Admitted != 0 {
		t.Fatalf("random AdmitN(20) with every slot taken: %+v, want nobody admitted", a)
	}
	if st := e.stats(); st.Active != 15 || st.Waiting != 5 || st.AdmittedTotal != 15 {
		t.Errorf("stats %+v, want 15 active, 5 waiting", st)
	}
}

// testRandomDuringGrace: during the recovery grace a random tick picks
// among the restored tickets only, however many newcomers wait behind
// them; a pick from the whole line would take a newcomer almost surely.
func testRandomDuringGrace(t *testing.T, e *env) {
	before := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	old := before.waitMany(limits(0), 3)
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	lim := limits(100)
	lim.Random, lim.RecoveryGrace = true, time.Minute // outlasts the test
	after.restore(queued(lim), old...)
	newcomers := after.waitMany(queued(lim), 30)
	if a := after.admit(lim); a.Admitted != 3 {
		t.Fatalf("random tick during the grace: %+v, want the 3 restored admitted", a)
	}
	if a := after.admitN(lim, 10); a.Admitted != 0 {
		t.Fatalf("random AdmitN during the grace, nobody restored left: %+v, want nobody admitted", a)
	}
	for _, v := range old {
		after.expect(lim, v, waitroom.StateAdmitted, 0)
	}
	after.expectLine(lim, newcomers...)
}
