package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// The start_above subtests' window and hold: short, since each phase
// waits one out.
const (
	startWindow = time.Second
	startHold   = 800 * time.Millisecond
)

// start calls the store's AutopilotStarts through the next instance.
func (e *env) start(p waitroom.StartParams) waitroom.StartState {
	e.t.Helper()
	ss, ok := waitroom.As[waitroom.AutopilotStarts](e.store())
	if !ok {
		e.t.Fatal("the store has no start_above (waitroom.AutopilotStarts)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	st, err := ss.AutopilotStart(ctx, e.room, p)
	if err != nil {
		e.t.Fatalf("AutopilotStart: %v", err)
	}
	return st
}

// startUntil calls start every 50 ms until cond holds of the answer,
// failing past deadline; every answer before goes to each.
func (e *env) startUntil(what string, p waitroom.StartParams, cond func(waitroom.StartState) bool, each func(waitroom.StartState)) waitroom.StartState {
	e.t.Helper()
	for end := time.Now().Add(deadline); ; {
		st := e.start(p)
		if cond(st) {
			return st
		}
		if each != nil {
			each(st)
		}
		if time.Now().After(end) {
			e.t.Fatalf("%s: not within %s; last %+v", what, deadline, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testAutopilotStart holds a store's start_above to StartRecord.Judge:
// judged only once half the window is seen, on at once when the joins
// pass start_above, quiet again only after the arrivals are back under
// with the line empty for the hold, kept on by a line and by strain.
func testAutopilotStart(t *testing.T, e *env) {
	p := waitroom.StartParams{AboveMilli: 10_000, Window: startWindow, Hold: startHold} // 10/s
	st := e.start(p)
	if st.On || st.Judged || st.Switched {
		t.Fatalf("first call, nobody joined: %+v, want quiet and not judged", st)
	}
	st = e.startUntil("judged", p, func(s waitroom.StartState) bool { return s.Judged }, func(s waitroom.StartState) {
		if s.On {
			t.Fatalf("no joins: %+v, want quiet", s)
		}
	})
	if st.On || st.ArrivalsMilli != 0 {
		t.Fatalf("no joins, judged: %+v, want quiet at 0/s", st)
	}

	// 40 straight in at once: over 10/s across the window, on at once.
	lim := limits(1000)
	for range 40 {
		e.join(lim)
	}
	switches := 0
	st = e.startUntil("on past start_above", p, func(s waitroom.StartState) bool { return s.On }, nil)
	if !st.Switched || st.ArrivalsMilli <= p.AboveMilli {
		t.Fatalf("40 joins: %+v, want switched on over 10/s", st)
	}
	switches++
	lastOver := time.Now()
	// Back under with an empty line: on for the hold, then quiet.
	st = e.startUntil("quiet after the hold", p, func(s waitroom.StartState) bool { return !s.On }, func(s waitroom.StartState) {
		if s.ArrivalsMilli > p.AboveMilli {
			lastOver = time.Now()
		}
	})
	if d := time.Since(lastOver); !st.Switched || d < startHold {
		t.Fatalf("quiet %v after the arrivals were last over, want a hold of %v at least; %+v", d, startHold, st)
	}

	// Strain turns it on at once whatever the arrivals; a line keeps it on
	// past the hold after the strain ended.
	strained := p
	strained.Strained = true
	if st = e.start(strained); !st.On || !st.Switched {
		t.Fatalf("strained: %+v, want switched on", st)
	}
	w := e.wait(limits(0))
	for end := time.Now().Add(3 * startHold); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if st = e.start(p); !st.On || st.Calm != 0 {
			t.Fatalf("a visitor in line: %+v, want on, not calm", st)
		}
	}
	// The line served: quiet after the hold.
	if a := e.admit(limits(1000)); a.Admitted != 1 {
		t.Fatalf("admitting the line: %+v, want 1", a)
	}
	served := time.Now()
	st = e.startUntil("quiet once the line is served", p, func(s waitroom.StartState) bool { return !s.On }, nil)
	if d := time.Since(served); d < startHold {
		t.Fatalf("quiet %v after the line was served, want %v at least", d, startHold)
	}
	e.mustRelease(w.ID)
}

// testAutopilotStartNoFlap: strain that comes and goes every call, and
// arrivals that hover over and under start_above, turn the room on once
// and keep it on; it turns quiet once, a hold after both ended.
func testAutopilotStartNoFlap(t *testing.T, e *env) {
	p := waitroom.StartParams{AboveMilli: 10_000, Window: startWindow, Hold: startHold}
	e.startUntil("judged", p, func(s waitroom.StartState) bool { return s.Judged }, nil)
	lim := limits(1000)
	switched := 0
	end := time.Now().Add(3 * startHold)
	for i := 0; time.Now().Before(end); i++ {
		q := p
		q.Strained = i%4 == 0
		if i%8 == 4 {
			for range 6 { // bursts: 12/s over and 0 under in turn
				e.join(lim)
			}
		}
		st := e.start(q)
		if st.Switched {
			switched++
		}
		if i > 0 && !st.On {
			t.Fatalf("call %d: quiet while strain and arrivals came and went: %+v", i, st)
		}
		time.Sleep(60 * time.Millisecond)
	}
	if switched != 1 {
		t.Fatalf("switched %d times, want once (on)", switched)
	}
	e.startUntil("quiet", p, func(s waitroom.StartState) bool { return !s.On }, nil)
}
