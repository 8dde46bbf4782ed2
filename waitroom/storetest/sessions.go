package storetest

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testShortUntilUsed: a visitor let in by a tick holds its slot only for
// AbandonAfter unless it comes to use it; its first request slides the
// session to the full SessionTTL.
func testShortUntilUsed(t *testing.T, e *env) {
	lim := limits(2)
	lim.SessionTTL, lim.AbandonAfter = 5*time.Second, 400*time.Millisecond
	h1, h2 := e.enter(lim), e.enter(lim)
	idle, user := e.wait(lim), e.wait(lim)
	e.mustRelease(h1.ID)
	e.mustRelease(h2.ID)
	start := time.Now()
	if a := e.admit(lim); a.Admitted != 2 {
		t.Fatalf("tick admitted %d, want 2", a.Admitted)
	}
	d := e.expect(lim, user, waitroom.StateAdmitted, 0) // user comes in at once
	within(t, start, lim.AbandonAfter, "the first request's renewal")
	if !d.Renewed || d.Until.Before(start.Add(lim.SessionTTL-clockSlack)) {
		t.Fatalf("first request after a tick's admission: %+v, want renewed to about %v from now", d, lim.SessionTTL)
	}
	time.Sleep(lim.AbandonAfter + 100*time.Millisecond)
	e.admit(lim)
	e.expect(lim, idle, waitroom.StateNone, 0)
	e.expect(lim, user, waitroom.StateAdmitted, 0)
	if st := e.stats(); st.Expired != 1 || st.Active != 1 {
		t.Fatalf("stats %+v, want the unused admission expired and the used one active", st)
	}
}

// testRestoreInside: a visitor who was inside when the store lost its data
// comes back inside until its admission ends, without a token and even if
// the slots were given away meanwhile; one whose admission ran out, or who
// was waiting, gets its place in line.
func testRestoreInside(t *testing.T, e *env) {
	lim := limits(1)
	inside := e.enter(lim)
	queued := e.wait(lim)
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 1, Per: time.Hour}, 1
	// The waiting visitor returns first and gets the only slot, at once or
	// by a tick.
	if d := after.decide(lim, queued, true); d.State != waitroom.StateAdmitted {
		after.admit(lim)
	}
	after.expect(lim, queued, waitroom.StateAdmitted, 0)
	until := time.Now().Add(20 * time.Second)
	v := inside
	v.Until = until
	d := after.decide(lim, v, true)
	if d.State != waitroom.StateAdmitted || !d.Joined || d.Until.After(until.Add(clockSlack)) || d.Until.Before(until.Add(-time.Second)) {
		t.Fatalf("a visitor inside before the loss: %+v, want admitted until about %v", d, until)
	}
	if st := after.stats(); st.Active != 2 || st.AdmittedTotal != 1 || st.Joined != 2 {
		t.Fatalf("stats %+v, want both inside and only the tick's admission counted", st)
	}
	// The restore took no token: the bucket's one token went to the tick,
	// and a newcomer now waits for the next hour's.
	after.mustRelease(v.ID)
	after.mustRelease(queued.ID)
	newcomer := after.wait(lim)
	if a := after.admit(lim); a.Admitted != 0 {
		t.Fatalf("a tick with an empty bucket admitted %d", a.Admitted)
	}
	after.expect(lim, newcomer, waitroom.StateWaiting, 1)
}
