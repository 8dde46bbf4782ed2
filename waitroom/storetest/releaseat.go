package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// releaseAt is Store.ReleaseAt on the next instance.
func (e *env) releaseAt(id string, began time.Time) (time.Time, error) {
	return e.store().ReleaseAt(context.Background(), e.room, id, began)
}

// rejoin brings visitor id back as a newcomer (its cookie gone, its ID
// kept, as an account id or a cookie's Visitor is): a ticket, then its
// place or a session at once. It returns the visitor as its cookie then
// says and the last decision.
func (e *env) rejoin(lim waitroom.Limits, id string) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	v := waitroom.Visitor{ID: id, Issued: time.Now(), Seen: time.Now()}
	d := e.decide(lim, v, true)
	if !d.Joined || d.Ticket == 0 {
		e.t.Fatalf("visitor %s back: got %+v, want Joined with a ticket", id, d)
	}
	v.Ticket, v.Placed = d.Ticket, d.Placed
	if d.State != waitroom.StateAdmitted {
		v, d = e.place(lim, v)
	}
	if d.State == waitroom.StateAdmitted {
		v.Until, v.Entered = d.Until, time.Now()
	}
	return v, d
}

// testReleaseAt: a release returns the store's clock, and a release
// conditional on that time (what a gateway replays after a failover) ends
// only a session begun by then: a later session of the same visitor, let
// in at once or by a tick, is left alone (ErrNotFound), while a session
// begun before the time given is ended. A place in line is given up
// whatever the time says.
func testReleaseAt(t *testing.T, e *env) {
	lim := limits(1)
	a := e.enter(lim)
	at0, err := e.releaseAt(a.ID, time.Time{})
	if err != nil || at0.IsZero() {
		t.Fatalf("ReleaseAt(%s) of a session: %v, %v; want nil and the store's clock", a.ID, at0, err)
	}
	e.expect(lim, a, waitroom.StateNone, 0)

	// The same visitor back, let in at once: a new session.
	a2, d := e.rejoin(lim, a.ID)
	if d.State != waitroom.StateAdmitted {
		t.Fatalf("visitor back in an empty room: %+v, want admitted at once", d)
	}
	if _, err := e.releaseAt(a.ID, at0); !isNotFound(err) {
		t.Fatalf("ReleaseAt(began=%v) of a session begun after it: %v, want ErrNotFound", at0, err)
	}
	e.expect(lim, a2, waitroom.StateAdmitted, 0)

	// A place taken after the time given is given up all the same.
	w := e.wait(lim)
	if _, err := e.releaseAt(w.ID, at0); err != nil {
		t.Fatalf("ReleaseAt(began=%v) of a place: %v, want it given up", at0, err)
	}
	e.expect(lim, w, waitroom.StateNone, 0)

	// Released again, back in line while another is inside, let in by a
	// tick.
	at1, err := e.releaseAt(a.ID, time.Time{})
	if err != nil || at1.Before(at0) {
		t.Fatalf("ReleaseAt(%s) of its second session: %v, %v; want nil and a clock not before %v", a.ID, at1, err, at0)
	}
	other := e.enter(lim)
	a3, d := e.rejoin(lim, a.ID)
	if d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("visitor back in a full room: %+v, want waiting at 1", d)
	}
	e.mustRelease(other.ID)
	if got := e.admit(lim); got.Admitted != 1 {
		t.Fatalf("tick: %+v, want the visitor let in", got)
	}
	for _, began := range []time.Time{at0, at1} {
		if _, err := e.releaseAt(a.ID, began); !isNotFound(err) {
			t.Fatalf("ReleaseAt(began=%v) of a session a tick began after it: %v, want ErrNotFound", began, err)
		}
	}
	e.expect(lim, a3, waitroom.StateAdmitted, 0)

	// The store's clock now, from a release that finds nobody: the
	// session began before it, and is ended by it.
	at2, err := e.releaseAt(newVisitorID(), time.Time{})
	if !isNotFound(err) || at2.Before(at1) {
		t.Fatalf("ReleaseAt of nobody: %v, %v; want ErrNotFound and a clock not before %v", at2, err, at1)
	}
	if _, err := e.releaseAt(a.ID, at2); err != nil {
		t.Fatalf("ReleaseAt(began=%v) of a session begun before it: %v, want it ended", at2, err)
	}
	e.expect(lim, a3, waitroom.StateNone, 0)
	if st := e.stats(); st.Active != 0 || st.Waiting != 0 {
		t.Errorf("stats %+v, want nobody inside or waiting", st)
	}

	// A session put back inside after a data loss began when its cookie
	// says (Visitor.Entered): a release from before that spares it, one
	// from then on ends it.
	inside := e.enter(lim)
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	entered := time.Now().Add(-10 * time.Second).Truncate(time.Microsecond)
	inside.Until, inside.Entered = time.Now().Add(20*time.Second), entered
	if d := after.decide(lim, inside, true); d.State != waitroom.StateAdmitted || d.Restored != waitroom.RestoreInside {
		t.Fatalf("a visitor inside before the loss: %+v, want back inside", d)
	}
	if _, err := after.releaseAt(inside.ID, entered.Add(-time.Second)); !isNotFound(err) {
		t.Fatalf("ReleaseAt(began a second before its cookie's Entered) of a restored session: %v, want ErrNotFound", err)
	}
	if _, err := after.releaseAt(inside.ID, entered); err != nil {
		t.Fatalf("ReleaseAt(began = its cookie's Entered) of a restored session: %v, want it ended", err)
	}
	after.expect(lim, inside, waitroom.StateNone, 0)
}
