package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

func (e *env) setOverride(o waitroom.Override) {
	e.t.Helper()
	if err := e.store().SetOverride(context.Background(), e.room, o); err != nil {
		e.t.Fatalf("SetOverride(%s): %v", describe(o), err)
	}
}

func (e *env) clearOverride() {
	e.t.Helper()
	if err := e.store().ClearOverride(context.Background(), e.room); err != nil {
		e.t.Fatalf("ClearOverride: %v", err)
	}
}

// override reads the room's override through every instance, checks that
// they all see the same, and returns it.
func (e *env) override() waitroom.Override {
	e.t.Helper()
	var first waitroom.Override
	for i, s := range e.stores {
		o, err := s.Override(context.Background(), e.room)
		if err != nil {
			e.t.Fatalf("Override on instance %d: %v", i, err)
		}
		if i == 0 {
			first = o
		} else if describe(o) != describe(first) {
			e.t.Fatalf("instance %d reads override %s, instance 0 %s", i, describe(o), describe(first))
		}
	}
	return first
}

// describe spells every field of an override, nil ones included, so two
// overrides are equal exactly when their descriptions are.
func describe(o waitroom.Override) string {
	s := "max_active=" + show(o.MaxActive) + " admit_rate=" + show(o.AdmitRate) + " mode=" + string(o.Mode)
	if o.Message != nil {
		s += fmt.Sprintf(" message=%q", *o.Message)
	} else {
		s += " message=nil"
	}
	if o.Changed.IsZero() {
		return s + " changed=zero"
	}
	return s + " changed=" + o.Changed.UTC().Format(time.RFC3339Nano)
}

func show[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// testOverrides: an override set through one instance is read by every
// other; a set merges (the fields it names replace, the rest stay) and
// stamps Changed with the store's clock, later with every set; the store
// keeps its own copy of what it was given and of what it returns; another
// room is untouched.
func testOverrides(t *testing.T, e *env) {
	if o := e.override(); describe(o) != describe(waitroom.Override{}) {
		t.Fatalf("room never overridden: %s, want the zero Override", describe(o))
	}
	seven := 7
	before := time.Now()
	e.setOverride(waitroom.Override{MaxActive: &seven})
	after := time.Now()
	seven = 99 // the caller's variable, not the store's
	o := e.override()
	if got, want := describe(o), "max_active=7 admit_rate=nil mode= message=nil"; !strings.HasPrefix(got, want) {
		t.Fatalf("after setting max_active: %s, want %s", got, want)
	}
	if lo, hi := before.Add(-clockSlack), after.Add(clockSlack); o.Changed.Before(lo) || o.Changed.After(hi) {
		t.Errorf("Changed = %v, want the store's time of the call, within [%v, %v]", o.Changed, lo, hi)
	}
	*o.MaxActive = 1 // the reader's copy, not the store's
	last := o.Changed

	msg := "back at ten"
	time.Sleep(10 * time.Millisecond)
	e.setOverride(waitroom.Override{Mode: waitroom.ModePaused, Message: &msg})
	o = e.override()
	if got, want := describe(o), `max_active=7 admit_rate=nil mode=paused message="back at ten"`; !strings.HasPrefix(got, want) {
		t.Fatalf("after merging mode and message: %s, want %s", got, want)
	}
	last = e.checkLater(o, last)

	rate, nine := waitroom.Rate{N: 300, Per: time.Minute}, 9
	time.Sleep(10 * time.Millisecond)
	e.setOverride(waitroom.Override{AdmitRate: &rate, MaxActive: &nine})
	o = e.override()
	if got, want := describe(o), `max_active=9 admit_rate=300/m mode=paused message="back at ten"`; !strings.HasPrefix(got, want) {
		t.Fatalf("after merging rate and max_active: %s, want %s", got, want)
	}
	last = e.checkLater(o, last)

	unlimited, empty := waitroom.Rate{}, ""
	time.Sleep(10 * time.Millisecond)
	e.setOverride(waitroom.Override{AdmitRate: &unlimited, Message: &empty, Mode: waitroom.ModeFIFO})
	o = e.override()
	if got, want := describe(o), `max_active=9 admit_rate=unlimited mode=fifo message=""`; !strings.HasPrefix(got, want) {
		t.Fatalf("after setting an unlimited rate, an empty message and fifo: %s, want %s", got, want)
	}
	e.checkLater(o, last)

	if o := e.sibling("other").override(); describe(o) != describe(waitroom.Override{}) {
		t.Errorf("another room: %s, want the zero Override", describe(o))
	}
}

// checkLater asserts that o was stamped after last, and returns its stamp.
func (e *env) checkLater(o waitroom.Override, last time.Time) time.Time {
	e.t.Helper()
	if !o.Changed.After(last) {
		e.t.Errorf("Changed %v after a later set, want after %v", o.Changed, last)
	}
	return o.Changed
}

// testOverrideClear: clearing drops every field on every instance, back to
// the zero Override; a set after it starts from nothing; clearing twice, or
// a room never overridden, is no error.
func testOverrideClear(t *testing.T, e *env) {
	one, msg := 1, "closed for lunch"
	e.setOverride(waitroom.Override{MaxActive: &one, Mode: waitroom.ModeReject, Message: &msg})
	e.clearOverride()
	if o := e.override(); describe(o) != describe(waitroom.Override{}) {
		t.Fatalf("after ClearOverride: %s, want the zero Override", describe(o))
	}
	e.clearOverride()
	e.setOverride(waitroom.Override{Mode: waitroom.ModePaused})
	if got, want := describe(e.override()), "max_active=nil admit_rate=nil mode=paused message=nil"; !strings.HasPrefix(got, want) {
		t.Errorf("a set after a clear: %s, want %s", got, want)
	}
	if err := e.store().ClearOverride(context.Background(), e.room+"-never"); err != nil {
		t.Errorf("ClearOverride of a room never overridden: %v", err)
	}
}

// testOverrideRefused: an override a store could not keep as given is
// refused whole, and nothing of it is written.
func testOverrideRefused(t *testing.T, e *env) {
	ok, negative := 5, -1
	odd := waitroom.Rate{N: 5, Per: 2 * time.Second} // "5/s" would be a different rate
	for _, o := range []waitroom.Override{
		{MaxActive: &ok, Mode: "sideways"},
		{MaxActive: &negative},
		{MaxActive: &ok, AdmitRate: &odd},
	} {
		if err := e.store().SetOverride(context.Background(), e.room, o); err == nil {
			t.Errorf("SetOverride(%s): no error, want it refused", describe(o))
		}
	}
	if o := e.override(); describe(o) != describe(waitroom.Override{}) {
		t.Errorf("after refused overrides: %s, want nothing written", describe(o))
	}
}

// testModesThroughOverride: the modes reach a store only as the limits
// Override.Apply makes of the room and the stored override. Paused admits
// nobody, not even a newcomer to an empty room with slots free, and keeps
// the line's order; fifo resumes in ticket order; passthrough lets a
// newcomer in at once with the configured max_active reached; clearing
// returns to the configuration.
func testModesThroughOverride(t *testing.T, e *env) {
	room := waitroom.Room{Name: e.room, Limits: limits(2), Mode: waitroom.ModeFIFO}
	apply := func(want waitroom.Mode) waitroom.Limits {
		t.Helper()
		lim, mode := e.override().Apply(room)
		if mode != want {
			t.Fatalf("mode in effect %q, want %q", mode, want)
		}
		return lim
	}
	e.setOverride(waitroom.Override{Mode: waitroom.ModePaused})
	lim := apply(waitroom.ModePaused)
	x := e.wait(lim) // empty room, free slots, no rate limit: only the pause holds it
	a, b, c := e.wait(lim), e.wait(lim), e.wait(lim)
	if got := e.admit(lim); got.Admitted != 0 {
		t.Fatalf("tick while paused: %+v, want nobody admitted", got)
	}
	if got := e.admitN(lim, 3); got.Admitted != 0 {
		t.Fatalf("AdmitN(3) while paused: %+v, want nobody admitted: a pause leaves no slot", got)
	}
	e.expectLine(lim, x, a, b, c)

	e.setOverride(waitroom.Override{Mode: waitroom.ModeFIFO})
	lim = apply(waitroom.ModeFIFO)
	if got := e.admit(lim); got.Admitted != 2 {
		t.Fatalf("tick after resuming: %+v, want the configured 2 admitted", got)
	}
	e.expect(lim, x, waitroom.StateAdmitted, 0)
	e.expect(lim, a, waitroom.StateAdmitted, 0)
	e.expectLine(lim, b, c)

	e.setOverride(waitroom.Override{Mode: waitroom.ModePassthrough})
	lim = apply(waitroom.ModePassthrough)
	if got := e.admit(lim); got.Admitted != 2 {
		t.Fatalf("tick in passthrough: %+v, want the 2 waiting admitted past max_active", got)
	}
	y := e.enter(lim) // 4 inside, max_active 2: straight in all the same
	if st := e.stats(); st.Active != 5 || st.Waiting != 0 || st.AdmittedTotal != 5 {
		t.Errorf("stats in passthrough %+v, want 5 inside and counted, none waiting", st)
	}

	e.clearOverride()
	lim = apply(waitroom.ModeFIFO)
	e.mustRelease(y.ID)
	if _, d := e.join(lim); d.State != waitroom.StateWaiting {
		t.Errorf("newcomer after clearing, 4 inside of the configured 2: %+v, want waiting", d)
	}
}
