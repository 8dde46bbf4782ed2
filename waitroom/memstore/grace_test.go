package memstore_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// graceLimits: five free slots, no rate limit, a two minute recovery grace.
func graceLimits() waitroom.Limits {
	lim := limits(5)
	lim.RecoveryGrace = 2 * time.Minute
	return lim
}

func (f *fixture) expectState(lim waitroom.Limits, v waitroom.Visitor, want waitroom.State) {
	f.t.Helper()
	if d := f.decide(lim, v, false); d.State != want {
		f.t.Fatalf("visitor %s: %+v, want %v", v.ID, d, want)
	}
}

func TestStore_RecoveryGraceHoldsNewcomersBack(t *testing.T) {
	before := newFixture(t)
	o1, _ := before.join(limits(0))
	o2, _ := before.join(limits(0))
	f := before.restarted()
	lim := graceLimits()

	if _, d := f.join(lim); d.State != waitroom.StateAdmitted {
		t.Fatalf("newcomer before any restore: %+v, want admitted at once: no grace without a restore", d)
	}
	if d := f.restore(lim, o2); d.State != waitroom.StateWaiting {
		t.Fatalf("first restored visitor: %+v, want waiting: the grace starts with it", d)
	}
	n2, d := f.join(lim)
	if d.State != waitroom.StateWaiting {
		t.Fatalf("newcomer during the grace, 4 slots free: %+v, want waiting", d)
	}
	f.clock.Advance(time.Minute)
	f.restore(lim, o1) // goes ahead of o2; does not extend the grace
	f.line(lim, o1, o2, n2)

	if got := f.admit(lim); got.Admitted != 2 {
		t.Fatalf("tick during the grace: %+v, want the 2 restored admitted", got)
	}
	f.expectState(lim, o1, waitroom.StateAdmitted)
	f.expectState(lim, o2, waitroom.StateAdmitted)
	f.line(lim, n2)
	n3, d := f.join(lim)
	if d.State != waitroom.StateWaiting || f.admit(lim).Admitted != 0 {
		t.Fatalf("newcomer and tick late in the grace: %+v, want both held back", d)
	}

	f.clock.Advance(time.Minute) // the grace counted from o2's restore is over
	if got := f.admit(lim); got.Admitted != 2 {
		t.Fatalf("tick after the grace: %+v, want the 2 newcomers admitted", got)
	}
	f.expectState(lim, n2, waitroom.StateAdmitted)
	f.expectState(lim, n3, waitroom.StateAdmitted)
}

func TestStore_RecoveryGraceRunsOncePerIncarnation(t *testing.T) {
	before := newFixture(t)
	o1, _ := before.join(limits(0))
	o2, _ := before.join(limits(0))
	f := before.restarted()
	lim := graceLimits()
	f.restore(lim, o1)
	f.clock.Advance(lim.RecoveryGrace)
	f.admit(lim)
	f.expectState(lim, o1, waitroom.StateAdmitted)

	// A straggler after the grace still gets its place back, and nobody
	// waits, so it goes in at once; it starts no second grace.
	if d := f.restore(lim, o2); d.State != waitroom.StateAdmitted {
		t.Errorf("restored after the grace with room to spare: %+v, want admitted at once", d)
	}
	if _, d := f.join(lim); d.State != waitroom.StateAdmitted {
		t.Errorf("newcomer after a late restore: %+v, want admitted at once", d)
	}
}

func TestStore_RecoveryGraceZeroDisablesIt(t *testing.T) {
	before := newFixture(t)
	o1, _ := before.join(limits(0))
	o2, _ := before.join(limits(0))
	f := before.restarted()
	lim := limits(5) // RecoveryGrace 0
	f.restore(lim, o1)
	if _, d := f.join(lim); d.State != waitroom.StateAdmitted {
		t.Errorf("newcomer with the grace disabled: %+v, want admitted at once", d)
	}
	f.restore(lim, o2)
	if got := f.admit(lim); got.Admitted != 0 {
		t.Errorf("tick with nobody waiting: %+v", got)
	}
}

func TestStore_RecoveryGraceStillDropsTheAbandoned(t *testing.T) {
	before := newFixture(t)
	o1, _ := before.join(limits(0))
	o2, _ := before.join(limits(0))
	f := before.restarted()
	lim := graceLimits()
	lim.RecoveryGrace = time.Hour
	f.restore(lim, o1)
	f.restore(lim, o2)
	n, _ := f.join(lim)
	f.clock.Advance(lim.AbandonAfter + time.Second)
	f.decide(lim, o2, false) // o1 and n stop polling
	got := f.admit(lim)
	if got.Abandoned != 2 || got.Admitted != 1 {
		t.Fatalf("tick: %+v, want o1 and the newcomer dropped, o2 admitted", got)
	}
	f.expectState(lim, o2, waitroom.StateAdmitted)
	f.expectState(lim, n, waitroom.StateNone)
}
