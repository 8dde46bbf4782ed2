package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// restarted is the fixture's store replaced by a fresh one on the same
// clock, a minute later: the process restarted with the same cookie keys.
func (f *fixture) restarted() *fixture {
	f.clock.Advance(time.Minute)
	s := memstore.New(memstore.WithClock(f.clock.Now))
	f.t.Cleanup(func() { _ = s.Close() })
	return &fixture{t: f.t, clock: f.clock, s: s, room: f.room}
}

func (f *fixture) line(lim waitroom.Limits, want ...waitroom.Visitor) {
	f.t.Helper()
	for i, v := range want {
		d := f.decide(lim, v, false)
		if d.State != waitroom.StateWaiting || d.Position != int64(i+1) || d.Line != int64(len(want)) {
			f.t.Fatalf("visitor %d of the line: %+v, want position %d of %d", i+1, d, i+1, len(want))
		}
	}
}

func (f *fixture) restore(lim waitroom.Limits, v waitroom.Visitor) waitroom.Decision {
	f.t.Helper()
	d := f.decide(lim, v, true)
	if !d.Joined || d.Ticket != v.Ticket {
		f.t.Fatalf("visitor back with ticket %d: %+v, want it restored on that ticket", v.Ticket, d)
	}
	return d
}

func TestStore_RestoreOldTicketsInTicketOrder(t *testing.T) {
	before := newFixture(t)
	lim := limits(0)
	o1, _ := before.join(lim)
	o2, _ := before.join(lim)
	o3, _ := before.join(lim)
	f := before.restarted()
	seed := f.clock.Now().UnixMicro()
	n1, _ := f.join(lim)
	n2, _ := f.join(lim)
	f.restore(lim, o3)
	f.restore(lim, o1)
	f.line(lim, o1, o3, n1, n2)
	f.restore(lim, o2)
	// The seed itself belongs to this incarnation; one below it does not.
	justBefore := f.restore(lim, waitroom.Visitor{ID: visitorID(), Ticket: seed - 1})
	if justBefore.Position != 4 {
		t.Errorf("ticket seed-1 at %d, want 4: after the old tickets, before this store's", justBefore.Position)
	}
	if d := f.decide(lim, waitroom.Visitor{ID: visitorID(), Ticket: seed}, true); d.Ticket == seed || d.Position != 7 {
		t.Errorf("ticket equal to the seed: %+v, want a new ticket at the back", d)
	}
	if got := f.admit(limits(2)); got.Admitted != 2 {
		t.Fatalf("tick: %+v", got)
	}
	for _, v := range []waitroom.Visitor{o1, o2} {
		if d := f.decide(lim, v, false); d.State != waitroom.StateAdmitted || d.Ticket != v.Ticket {
			t.Errorf("restored visitor %d: %+v, want admitted first, keeping its ticket", v.Ticket, d)
		}
	}
}

func TestStore_RestoreOnlyOnce(t *testing.T) {
	before := newFixture(t)
	lim := limits(0)
	old, _ := before.join(lim)
	f := before.restarted()
	n1, _ := f.join(lim)
	f.restore(lim, old)
	if err := f.s.Release(context.Background(), f.room, old.ID); err != nil {
		t.Fatal(err)
	}
	// The cookie still carries the old ticket; the place it gave is spent.
	d := f.decide(lim, old, true)
	if !d.Joined || d.Ticket <= n1.Ticket || d.Position != 2 {
		t.Errorf("back again with the spent ticket: %+v, want a new ticket behind n1", d)
	}
}

func TestStore_RestoredVisitorAdmittedAtOnceWhenNobodyWaits(t *testing.T) {
	before := newFixture(t)
	old, _ := before.join(limits(0))
	f := before.restarted()
	d := f.decide(limits(1), old, true)
	if d.State != waitroom.StateAdmitted || d.Ticket != old.Ticket || !d.Joined {
		t.Errorf("restored with an empty line and a free slot: %+v, want admitted on its ticket", d)
	}
}
