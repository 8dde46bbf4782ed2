package storetest

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// sibling is another room on the same backend.
func (e *env) sibling(suffix string) *env {
	return &env{t: e.t, newStores: e.newStores, stores: e.stores, room: e.room + "-" + suffix}
}

// testImmediateAdmission: a newcomer goes straight in when nobody waits and
// there is a slot and a token; not when someone waits, even with a slot
// free, and not without a token.
func testImmediateAdmission(t *testing.T, e *env) {
	lim := limits(2)
	before := time.Now()
	a, d := e.join(lim)
	after := time.Now()
	if d.State != waitroom.StateAdmitted || d.Position != 0 {
		t.Fatalf("first visitor: got %+v, want admitted at once", d)
	}
	if lo, hi := before.Add(lim.SessionTTL-clockSlack), after.Add(lim.SessionTTL+clockSlack); d.Until.Before(lo) || d.Until.After(hi) {
		t.Errorf("Until = %v, want now + SessionTTL, within [%v, %v]", d.Until, lo, hi)
	}
	if b := e.enter(lim); b.Ticket <= a.Ticket {
		t.Errorf("second immediate admission has ticket %d after %d, want a larger one", b.Ticket, a.Ticket)
	}
	c := e.wait(lim)
	e.expect(lim, c, waitroom.StateWaiting, 1)
	e.mustRelease(a.ID)
	// A slot is free now, but c waits for the next tick: a newcomer must not
	// pass it.
	late := e.wait(lim)
	e.expect(lim, late, waitroom.StateWaiting, 2)
	if got := e.admit(lim); got.Admitted != 1 {
		t.Errorf("Admit with one free slot: %+v, want 1 admitted", got)
	}
	e.expect(lim, c, waitroom.StateAdmitted, 0)
	e.expect(lim, late, waitroom.StateWaiting, 1)

	// A slot but no token: an hourly rate earns nothing during the test.
	rated := limits(5)
	rated.AdmitRate = waitroom.Rate{N: 1, Per: time.Hour}
	r := e.sibling("rated")
	r.enter(rated) // spends the only token
	y := r.wait(rated)
	if got := r.admit(rated); got.Admitted != 0 {
		t.Errorf("Admit with an empty bucket: %+v, want none admitted", got)
	}
	r.expect(rated, y, waitroom.StateWaiting, 1)
}

// testRestore: the store lost its data (a new, empty backend), and visitors
// come back with tickets the old one issued. They go back ahead of everyone
// who arrived at the new backend, in their ticket order, whatever order they
// return in; a lost ticket of the new backend's own joins at the back.
func testRestore(t *testing.T, e *env) {
	lim := limits(0) // nobody goes in: everyone queues
	old := make([]waitroom.Visitor, 4)
	for i := range old {
		old[i] = e.wait(lim)
	}
	// Tickets are seeded from the clock; let it move well past the old ones,
	// even for a store that counts in milliseconds.
	time.Sleep(20 * time.Millisecond)
	fresh := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	n1, n2 := fresh.wait(lim), fresh.wait(lim)
	if n1.Ticket <= old[3].Ticket {
		t.Fatalf("new backend's first ticket %d is not above the old backend's %d: tickets must be seeded from the clock", n1.Ticket, old[3].Ticket)
	}
	fresh.restore(lim, old[2], old[0])
	fresh.expectLine(lim, old[0], old[2], n1, n2)
	fresh.restore(lim, old[3], old[1])
	fresh.expectLine(lim, old[0], old[1], old[2], old[3], n1, n2)

	n3 := fresh.wait(lim)
	fresh.mustRelease(n3.ID)
	d := fresh.decide(lim, n3, true)
	if d.State != waitroom.StateWaiting || !d.Joined || d.Placed || d.Ticket <= n3.Ticket || d.Position != 7 {
		t.Fatalf("visitor back with a released ticket of this backend: got %+v, want a new ticket at the back (7)", d)
	}
	n3.Ticket, n3.Placed, n3.Issued = d.Ticket, false, time.Now()
	fresh.place(lim, n3)
	two := limits(2)
	if got := fresh.admit(two); got.Admitted != 2 {
		t.Fatalf("Admit two: %+v", got)
	}
	fresh.expect(two, old[0], waitroom.StateAdmitted, 0)
	fresh.expect(two, old[1], waitroom.StateAdmitted, 0)
	fresh.expect(two, old[2], waitroom.StateWaiting, 1)
	if st := fresh.stats(); st.Joined != 8 || st.Released != 1 || st.Waiting != 5 || st.Active != 2 {
		t.Errorf("stats %+v, want 8 joined, 1 released, 5 waiting, 2 active", st)
	}
}

// restore presents visitors with their old tickets.
func (e *env) restore(lim waitroom.Limits, vs ...waitroom.Visitor) {
	e.t.Helper()
	for _, v := range vs {
		if d := e.decide(lim, v, true); d.State != waitroom.StateWaiting || !d.Joined || d.Ticket != v.Ticket {
			e.t.Fatalf("visitor back with old ticket %d: got %+v, want it waiting on that ticket", v.Ticket, d)
		}
	}
}

// expectLine asserts the whole line, front first.
func (e *env) expectLine(lim waitroom.Limits, vs ...waitroom.Visitor) {
	e.t.Helper()
	for i, v := range vs {
		if d := e.expect(lim, v, waitroom.StateWaiting, int64(i+1)); d.Line != int64(len(vs)) {
			e.t.Fatalf("visitor %d of %d: line length %d", i+1, len(vs), d.Line)
		}
	}
}
