package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testFullLossKnown: a store with no data for a room that the caller knows
// had tickets (Visitor.Known) lost it all. With max_active 1 a returning
// admitted visitor and a newcomer are never both inside, whichever comes
// first: the first call starts the recovery grace, so the newcomer is held
// and the admitted visitor gets its slot back. Without Known (the first
// visitor of a room nobody saw) a newcomer goes in at once, as before.
func testFullLossKnown(t *testing.T, e *env) {
	lim := limits(1)
	lim.RecoveryGrace = time.Minute
	inside := e.enter(lim)
	known := inside.Ticket
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	back := inside
	back.Until, back.Seen = time.Now().Add(20*time.Second), time.Now()
	for _, first := range []string{"returning", "newcomer"} {
		after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
		newcomer := func() waitroom.Decision {
			v := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now(), Seen: time.Now(), Known: known}
			d := after.decide(lim, v, true)
			if d.State == waitroom.StateWaiting && !d.Placed {
				v.Ticket = d.Ticket
				started := d.GraceStarted // the call that took the number
				d = after.decide(lim, v, false)
				d.GraceStarted = d.GraceStarted || started
			}
			return d
		}
		var dn, db waitroom.Decision
		if first == "newcomer" {
			dn = newcomer()
			if !dn.GraceStarted {
				t.Errorf("%s first: the newcomer's call %+v, want it to start the grace", first, dn)
			}
			db = after.decide(lim, back, true)
		} else {
			db = after.decide(lim, back, true)
			dn = newcomer()
		}
		if dn.State == waitroom.StateAdmitted {
			t.Errorf("%s first: newcomer %+v, want held (the grace)", first, dn)
		}
		if db.State != waitroom.StateAdmitted || db.Restored != waitroom.RestoreInside {
			t.Errorf("%s first: the admitted visitor back %+v, want inside again", first, db)
		}
		if st := after.stats(); st.Active != 1 {
			t.Errorf("%s first: %d inside, max_active 1", first, st.Active)
		}
	}
	fresh := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: e.room}
	if d := fresh.decide(lim, waitroom.Visitor{ID: newVisitorID()}, true); d.State != waitroom.StateAdmitted || d.GraceStarted {
		t.Errorf("a room nobody knew: %+v, want the newcomer in at once", d)
	}
}

// testCounterBehindKnown: a counter behind a ticket the caller saw
// (Visitor.Known; a failover lost the joins) moves past it: the next
// ticket is above it, the tickets between count ahead as pending (their
// holders may come back), and the room counts one repair.
func testCounterBehindKnown(t *testing.T, e *env) {
	lim := limits(0)
	a := e.wait(lim)
	known := a.Ticket + 2 // two tickets the store never heard of
	v := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now(), Seen: time.Now(), Known: known}
	d := e.decide(lim, v, true)
	if !d.Repaired || d.Ticket <= known || d.Position != 4 {
		t.Fatalf("newcomer told of ticket %d: %+v; want repaired, a number past it, position 4 (two pending ahead)", known, d)
	}
	if st := e.stats(); st.Repairs != 1 {
		t.Errorf("stats: %d repairs, want 1", st.Repairs)
	}
	if d := e.decide(lim, waitroom.Visitor{ID: newVisitorID(), Known: known}, true); d.Repaired || d.Position != 5 {
		t.Errorf("the next newcomer: %+v; want no second repair, position 5", d)
	}
	// A number far past anything the store could have lost (a ticket of
	// another store sealed with the same keys) moves nothing, so the
	// store's per-ticket structures never span it.
	far := d.Ticket + 1<<40
	if d := e.decide(lim, waitroom.Visitor{ID: newVisitorID(), Known: far}, true); d.Repaired || d.Ticket >= far {
		t.Errorf("a newcomer told of ticket %d: %+v; want no repair", far, d)
	}
	v2 := waitroom.Visitor{ID: newVisitorID(), Ticket: far, Issued: time.Now(), Seen: time.Now()}
	if d := e.decide(lim, v2, true); d.Repaired || d.Ticket == far {
		t.Errorf("a ticket %d brought back: %+v; want no repair, not placed at it", far, d)
	}
}

// testEndedSessionNotRestoredByRepair: a session that ended properly (the
// site released it) does not come back on a copy of its cookie after a
// repair (waitroom.LossWindow): neither one that began longer than the
// loss window before the repair (it was on a replica, so its release was
// not lost) nor one released after the repair (the store saw it end).
func testEndedSessionNotRestoredByRepair(t *testing.T, e *env) {
	for _, order := range []string{"entered long before, released before the repair", "released after the repair"} {
		lim := limits(1)
		ex := e.beside(strings.Fields(order)[0])
		a := ex.enter(lim)
		saved := a // the copy a scalper keeps from before checkout
		if order != "released after the repair" {
			saved.Entered = time.Now().Add(-waitroom.LossWindow - time.Minute)
			ex.mustRelease(a.ID)
		}
		nv := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now(), Seen: time.Now(), Known: a.Ticket + 2}
		if d := ex.decide(lim, nv, true); !d.Repaired {
			t.Fatalf("%s: newcomer told of ticket %d: %+v, want the room repaired", order, nv.Known, d)
		}
		if order == "released after the repair" {
			ex.mustRelease(a.ID)
		}
		d := ex.decide(lim, saved, false)
		if d.State == waitroom.StateAdmitted || d.Restored != waitroom.RestoreNone {
			t.Errorf("%s: the released session's saved cookie: %+v, want neither inside nor restored", order, d)
		}
		if st := ex.stats(); st.Active != 0 {
			t.Errorf("%s: %d inside after the release, want 0", order, st.Active)
		}
	}
}
