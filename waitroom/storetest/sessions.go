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
// comes back inside until its admission ends, without a token, but only
// while a slot is free: it counts toward max_active like anyone inside. If
// the slots were given away meanwhile it waits at the front of the line,
// and the recovery grace keeps newcomers behind it; with max_active 1, a
// restored visitor and anyone else are never two inside.
func testRestoreInside(t *testing.T, e *env) {
	lim := limits(1)
	inside := e.enter(lim)
	queued := e.wait(lim)
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	// The waiting visitor returns first and gets the only slot, at once or
	// by a tick (its return starts the grace; only restored tickets go in).
	if d := after.decide(lim, queued, true); d.State != waitroom.StateAdmitted {
		after.admit(lim)
	}
	after.expect(lim, queued, waitroom.StateAdmitted, 0)
	until := time.Now().Add(20 * time.Second)
	v := inside
	v.Until = until
	d := after.decide(lim, v, true)
	if d.State != waitroom.StateWaiting || d.Ticket != inside.Ticket || d.Position != 1 || d.Restored != waitroom.RestoreWaiting {
		t.Fatalf("a visitor inside before the loss, the only slot taken: %+v, want first in line on its ticket", d)
	}
	newcomer := after.wait(lim)
	if st := after.stats(); st.Active != 1 {
		t.Fatalf("stats %+v: %d inside, max_active 1", st, st.Active)
	}
	after.mustRelease(queued.ID)
	if a := after.admit(lim); a.Admitted != 1 {
		t.Fatalf("tick after the slot freed: %+v, want the restored visitor in", a)
	}
	after.expect(lim, v, waitroom.StateAdmitted, 0)
	after.expect(lim, newcomer, waitroom.StateWaiting, 1)

	// With a free slot it goes straight back inside, taking no token.
	fresh := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	rated := limits(1)
	rated.AdmitRate, rated.AdmitBurst = waitroom.Rate{N: 1, Per: time.Hour}, 1
	w := inside
	w.ID, w.Until = newVisitorID(), until
	d = fresh.decide(rated, w, true)
	if d.State != waitroom.StateAdmitted || !d.Joined || d.Restored != waitroom.RestoreInside ||
		d.Until.After(until.Add(clockSlack)) || d.Until.Before(until.Add(-time.Second)) {
		t.Fatalf("a visitor inside before the loss, a slot free: %+v, want admitted until about %v", d, until)
	}
	if st := fresh.stats(); st.Active != 1 || st.AdmittedTotal != 0 || st.Joined != 1 {
		t.Fatalf("stats %+v, want it inside, counted as joined, not as a new admission", st)
	}
}

// testSessionClients: an admitted session serves SessionClients clients at
// once. A copy of the ticket used from another client is refused
// (RefusedShared, with a RetryAfter within ClientQuiet) while the clients
// on it keep being served; a client unheard for ClientQuiet stops counting,
// so a phone whose address changed is served from its new one, and its
// old one, quiet since, is then the one refused. A request whose client
// is unknown counts for nothing.
func testSessionClients(t *testing.T, e *env) {
	lim := limits(2)
	lim.SessionTTL, lim.AbandonAfter, lim.SessionClients = time.Minute, time.Second, 1
	quiet := lim.ClientQuiet()
	owner := e.enter(lim)
	at := func(v waitroom.Visitor, client string) waitroom.Visitor { v.Client = client; return v }
	e.expect(lim, at(owner, "a"), waitroom.StateAdmitted, 0)
	d := e.decide(lim, at(owner, "b"), false)
	if d.Refusal != waitroom.RefusedShared || d.State != waitroom.StateNone || d.RetryAfter <= 0 || d.RetryAfter > quiet+time.Second {
		t.Fatalf("a copy from a second client, session_clients 1: %+v, want refused shared, retry within %v", d, quiet)
	}
	e.expect(lim, at(owner, "a"), waitroom.StateAdmitted, 0) // the owner goes on
	e.expect(lim, at(owner, ""), waitroom.StateAdmitted, 0)  // an unknown client counts for nothing

	// Two at once: the owner and its phone's new address; a third waits.
	two := lim
	two.SessionClients = 2
	e.expect(two, at(owner, "b"), waitroom.StateAdmitted, 0)
	e.expect(two, at(owner, "a"), waitroom.StateAdmitted, 0)
	if d := e.decide(two, at(owner, "c"), false); d.Refusal != waitroom.RefusedShared {
		t.Fatalf("a third client, session_clients 2: %+v, want refused shared", d)
	}

	// A phone moves from "p1" to "p2" and stays there: refused at first,
	// then, once "p1" has been quiet for ClientQuiet, "p2" alone holds the
	// session.
	phone := e.enter(lim)
	e.expect(lim, at(phone, "p1"), waitroom.StateAdmitted, 0)
	moved := time.Now()
	deadline := moved.Add(quiet + 10*time.Second)
	for {
		d := e.decide(lim, at(phone, "p2"), false)
		if d.State == waitroom.StateAdmitted {
			break
		}
		if d.Refusal != waitroom.RefusedShared || time.Now().After(deadline) {
			t.Fatalf("the phone on its new address %v after its old one fell quiet: %+v", quiet, d)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if took := time.Since(moved); took < quiet-time.Second {
		t.Fatalf("the new address was served %v after the old one's last request, before it was quiet for %v", took, quiet)
	}
	if d := e.decide(lim, at(phone, "p1"), false); d.Refusal != waitroom.RefusedShared {
		t.Fatalf("the old address after the phone moved: %+v, want refused shared", d)
	}
	e.expect(lim, at(phone, "p2"), waitroom.StateAdmitted, 0)
}

// testSessionClientsQuiet: the time an address keeps counting is
// Limits.ClientQuiet, not abandon_after: with the default two minutes a
// copy (or the owner's next address) waits at most 20 s, not 1m40s; and
// it outlasts three session caches, so an owner whose requests a gate's
// cache answers for SessionCache is never taken for gone in between.
func testSessionClientsQuiet(t *testing.T, e *env) {
	lim := limits(5)
	lim.SessionTTL, lim.AbandonAfter, lim.SessionClients = time.Hour, 2*time.Minute, 1
	at := func(v waitroom.Visitor, client string) waitroom.Visitor { v.Client = client; return v }
	owner := e.enter(lim)
	e.expect(lim, at(owner, "a"), waitroom.StateAdmitted, 0)
	d := e.decide(lim, at(owner, "b"), false)
	if d.Refusal != waitroom.RefusedShared || d.RetryAfter <= 18*time.Second || d.RetryAfter > 20*time.Second {
		t.Fatalf("a second address, abandon_after 2m: %+v, want refused shared, retry in about 20s", d)
	}

	// The audit's owner: seen from A, then B, then C ten seconds apart,
	// with the defaults (session_clients 2, abandon_after 2m). Before, C
	// got RefusedShared for 1m40s; now A is quiet by then.
	def := lim
	def.SessionClients = 2
	moving := e.enter(def)
	e.expect(def, at(moving, "A"), waitroom.StateAdmitted, 0)
	time.Sleep(10*time.Second + 100*time.Millisecond)
	e.expect(def, at(moving, "B"), waitroom.StateAdmitted, 0)
	time.Sleep(10*time.Second + 100*time.Millisecond)
	if d := e.decide(def, at(moving, "C"), false); d.State != waitroom.StateAdmitted {
		t.Fatalf("the owner from its third address, 20 s after its first: %+v, want admitted", d)
	}

	cached := lim
	cached.AbandonAfter, cached.SessionCache = time.Second, 4*time.Second // quiet 12s, not 5s
	other := e.enter(cached)
	e.expect(cached, at(other, "a"), waitroom.StateAdmitted, 0)
	d = e.decide(cached, at(other, "b"), false)
	if d.Refusal != waitroom.RefusedShared || d.RetryAfter <= 10*time.Second || d.RetryAfter > 12*time.Second {
		t.Fatalf("a second address, session cache 4s: %+v, want refused shared, retry in about 12s", d)
	}
}
