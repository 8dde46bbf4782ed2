package waitroom

import (
	"math"
	"testing"
	"time"
)

// Arrivals are judged from the store's count of joins over the last 10 s
// of ticks: not before half the window is seen; the room turns on once
// they pass start_above and off only when they are back under it with the
// line empty; a count that went back (the room made again) starts over.
func TestArrivals_StartAbove(t *testing.T) {
	above := Rate{N: 10, Per: time.Second}
	var w arrivals
	t0 := time.Unix(1_000_000, 0)
	tick := func(sec float64, joined, waiting int64) {
		w.note(t0.Add(time.Duration(sec*float64(time.Second))), &Stats{Joined: joined, Waiting: waiting}, above)
	}
	tick(0, 0, 0)
	tick(4, 1000, 0) // 250/s, but over 4 s only: not judged
	if !math.IsNaN(w.perSecond()) || w.on.Load() {
		t.Fatalf("judged over 4 s: %v on %v", w.perSecond(), w.on.Load())
	}
	w = arrivals{}
	for s := range 21 { // 5 a second for 20 s
		tick(float64(s), int64(5*s), 0)
	}
	if r := w.perSecond(); r != 5 || w.on.Load() {
		t.Fatalf("5/s under 10/s: %v, on %v", r, w.on.Load())
	}
	for s := 21; s <= 25; s++ { // 30 a second for 5 s: over the 10 s, 17.5/s
		tick(float64(s), 100+int64(30*(s-20)), 0)
	}
	if r := w.perSecond(); r != 17.5 || !w.on.Load() {
		t.Fatalf("17.5/s over 10/s: %v, on %v", r, w.on.Load())
	}
	// Back to 1/s: on while the line is not empty, off once it is.
	for s := 26; s <= 40; s++ {
		tick(float64(s), 250+int64(s-25), 3)
	}
	if r := w.perSecond(); r != 1 || !w.on.Load() {
		t.Fatalf("1/s with a line: %v, on %v (want on)", r, w.on.Load())
	}
	tick(41, 266, 0)
	if w.on.Load() {
		t.Fatal("1/s, the line empty: still on")
	}
	tick(42, 3, 0) // the room was made again
	if len(w.samples) != 1 || w.on.Load() {
		t.Fatalf("after the count went back: %d samples, on %v", len(w.samples), w.on.Load())
	}
	// Off without start_above.
	w.on.Store(true)
	w.note(t0, &Stats{}, Rate{})
	if w.on.Load() {
		t.Fatal("no start_above: on")
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
