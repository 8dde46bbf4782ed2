package memstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

func (f *fixture) setOverride(o waitroom.Override) waitroom.Override {
	f.t.Helper()
	if err := f.s.SetOverride(context.Background(), f.room, o); err != nil {
		f.t.Fatalf("SetOverride: %v", err)
	}
	got, err := f.s.Override(context.Background(), f.room)
	if err != nil {
		f.t.Fatalf("Override: %v", err)
	}
	return got
}

// TestStore_OverrideChangedIsTheStoreClock: Changed is the store's clock at
// the set, and, like everything in a room, never runs backwards.
func TestStore_OverrideChangedIsTheStoreClock(t *testing.T) {
	f := newFixture(t)
	t0 := f.clock.Now()
	if o := f.setOverride(waitroom.Override{Mode: waitroom.ModePaused}); !o.Changed.Equal(t0) {
		t.Errorf("Changed %v, want the clock's %v", o.Changed, t0)
	}
	f.clock.Advance(time.Minute)
	if o := f.setOverride(waitroom.Override{}); !o.Changed.Equal(t0.Add(time.Minute)) || o.Mode != waitroom.ModePaused {
		t.Errorf("an empty set a minute later: %+v, want the mode kept and Changed moved to %v", o, t0.Add(time.Minute))
	}
	f.clock.Advance(-time.Hour)
	if o := f.setOverride(waitroom.Override{Mode: waitroom.ModeFIFO}); !o.Changed.Equal(t0.Add(time.Minute)) {
		t.Errorf("set while the clock reads an hour back: Changed %v, want it held at %v", o.Changed, t0.Add(time.Minute))
	}
}

// TestStore_OverrideBeforeAnyVisitor: an override may come before anyone
// used the room; the room it creates starts as any other, with a full
// token bucket and tickets seeded from the clock.
func TestStore_OverrideBeforeAnyVisitor(t *testing.T) {
	f := newFixture(t)
	f.setOverride(waitroom.Override{Mode: waitroom.ModeFIFO})
	f.clock.Advance(time.Second)
	lim := limits(10)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 1, Per: time.Hour}, 3
	for i := range 4 {
		if _, d := f.join(lim); (d.State == waitroom.StateAdmitted) != (i < 3) {
			t.Fatalf("join %d: %v; the bucket starts full with 3 tokens", i, d.State)
		}
	}
	if st := f.stats(); st.Joined != 4 || st.MeasuredOver != time.Second {
		t.Errorf("stats %+v, want 4 joined, the room a second old", st)
	}
	if n, err := f.s.AdmitN(context.Background(), "never", lim, 5); err != nil || n != (waitroom.Admitted{}) {
		t.Errorf("AdmitN in a room never used: %+v, %v", n, err)
	}
}

// TestStore_RandomAdmissionIsUniform: a random tick with one slot picks
// each of the waiting alike. 6000 ticks over 6 places: each expects 1000,
// and a count outside 800..1200 (more than 6 standard deviations off)
// means the pick is biased.
func TestStore_RandomAdmissionIsUniform(t *testing.T) {
	const places, trials = 6, 6000
	f := newFixture(t)
	lim := limits(1)
	lim.Random = true
	var counts [places]int
	for trial := range trials {
		f.room = fmt.Sprint("room-", trial)
		line := make([]waitroom.Visitor, places)
		for i := range line {
			line[i], _ = f.join(limits(0))
		}
		if a := f.admit(lim); a.Admitted != 1 {
			t.Fatalf("trial %d: %+v, want 1 admitted", trial, a)
		}
		for i, v := range line {
			if f.decide(lim, v, false).State == waitroom.StateAdmitted {
				counts[i]++
			}
		}
	}
	for i, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("place %d admitted %d times of %d, want about %d: %v", i+1, n, trials, trials/places, counts)
		}
	}
}
