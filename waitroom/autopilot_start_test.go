package waitroom

import (
	"testing"
	"time"
)

// The store's rule (StartRecord.Judge) on a clock of its own: arrivals
// judged over the window once half of it is seen, on at once past
// start_above or on strain, quiet only after the hold with arrivals under,
// the line empty and no strain; a count that went back starts over; a
// record first seen with a line or strain starts on.
func TestStartRecord_Judge(t *testing.T) {
	p := StartParams{AboveMilli: 10_000, Window: ArrivalWindow, Hold: StartHold}
	var rec StartRecord
	t0 := time.Unix(1_000_000, 0)
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	st := rec.Judge(at(0), 0, 0, p)
	if st.On || st.Judged {
		t.Fatalf("first: %+v", st)
	}
	if st = rec.Judge(at(4), 1000, 0, p); st.Judged || st.On { // 250/s, over 4 s only
		t.Fatalf("judged over 4 s: %+v", st)
	}
	rec = StartRecord{}
	for s := range 21 { // 5 a second for 20 s
		st = rec.Judge(at(float64(s)), int64(5*s), 0, p)
	}
	if !st.Judged || st.ArrivalsMilli != 5000 || st.On {
		t.Fatalf("5/s under 10/s: %+v", st)
	}
	for s := 21; s <= 25; s++ { // 30 a second for 5 s: 17.5/s over the 10 s
		st = rec.Judge(at(float64(s)), 100+int64(30*(s-20)), 0, p)
		if s == 23 && (!st.On || !st.Switched) {
			t.Fatalf("11/s at 23 s: %+v, want switched on", st)
		}
	}
	if st.ArrivalsMilli != 17_500 || !st.On || st.Switched {
		t.Fatalf("17.5/s: %+v", st)
	}
	// Back to 1/s with a line: on, not calm.
	j := int64(250)
	for s := 26; s <= 80; s++ {
		j++
		if st = rec.Judge(at(float64(s)), j, 3, p); !st.On || st.Calm != 0 {
			t.Fatalf("1/s with a line at %d s: %+v", s, st)
		}
	}
	// The line empty: calm for the hold (30 s), then quiet; strain in
	// the middle starts the hold over.
	for s := 81; ; s++ {
		j++
		q := p
		q.Strained = s == 95
		st = rec.Judge(at(float64(s)), j, 0, q)
		if !st.On {
			if s != 96+30 || !st.Switched {
				t.Fatalf("quiet at %d s, want 126 s (the hold from 96 s, after the strain at 95 s): %+v", s, st)
			}
			break
		}
		if s > 200 {
			t.Fatal("never quiet")
		}
	}
	// The count went back (the room made again): judged again from it.
	if st = rec.Judge(at(127), 3, 0, p); st.Judged || st.On {
		t.Fatalf("after the count went back: %+v", st)
	}
	// A record first seen with a line, or strained, starts on.
	rec = StartRecord{}
	if st = rec.Judge(at(0), 500, 1, p); !st.On {
		t.Fatalf("first seen with a line: %+v", st)
	}
	rec = StartRecord{}
	if st = rec.Judge(at(0), 500, 0, StartParams{AboveMilli: 10_000, Window: ArrivalWindow, Hold: StartHold, Strained: true}); !st.On {
		t.Fatalf("first seen strained: %+v", st)
	}
	if startMilli(Rate{N: 500, Per: time.Second}) != 500_000 || startMilli(Rate{N: 3, Per: time.Minute}) != 50 {
		t.Fatal("startMilli")
	}
	if startHold(15*time.Second) != 30*time.Second || startHold(time.Minute) != 2*time.Minute {
		t.Fatal("startHold")
	}
}

// start_above is a rate; without a target it is a mistake.
func TestAutopilotConfig_StartAbove(t *testing.T) {
	a, err := AutopilotConfig{Target: "800ms", StartAbove: "500/s"}.Build(100)
	if err != nil || a.StartAbove != (Rate{N: 500, Per: time.Second}) {
		t.Fatalf("500/s: %+v %v", a, err)
	}
	for _, bad := range []string{"unlimited", "500", "0/s", "5/d"} {
		if _, err := (AutopilotConfig{Target: "800ms", StartAbove: bad}).Build(100); err == nil {
			t.Errorf("start_above %q accepted", bad)
		}
	}
	if _, err := (AutopilotConfig{StartAbove: "500/s"}).Build(100); err == nil {
		t.Error("start_above without a target accepted")
	}
}

// A quiet start_above room turns on at the site's knee (the controller
// backing off or holding there) as on any other strain, and stays quiet
// on a limit that rises, holds near the target or is not in use.
func TestStrained_Knee(t *testing.T) {
	for _, r := range []AutopilotReason{ReasonSlow, ReasonErrors, ReasonDraining, ReasonFloor, ReasonRecovering, ReasonBackoff, ReasonKnee} {
		if !strained(r) {
			t.Errorf("reason %d is not strain", r)
		}
	}
	for _, r := range []AutopilotReason{ReasonStart, ReasonIdle, ReasonRise, ReasonUnused, ReasonPinned, ReasonCeiling, ReasonAtTarget, ReasonSettling} {
		if strained(r) {
			t.Errorf("reason %d is strain", r)
		}
	}
}
