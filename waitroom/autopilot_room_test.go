package waitroom

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// One session is measured AutopilotSessionCap times a window, however
// many requests it fires, and again in the next window; among thousands
// of other sessions asking the cap each, interleaved with it, nearly all
// of theirs are measured (the sketch's shared counters lose a few). Run
// from several goroutines, as Measure is.
func TestAutopilotMeter_SessionCap(t *testing.T) {
	// The full 32 KiB sketch with thousands of sessions, and sketches sized
	// to rooms of 100 and 1000 (sessionCapSlots) with as many sessions and
	// twice as many (some leave and others come in within a window).
	for _, tt := range []struct{ sessions, slots int }{
		{2000, sessionCapMaxSlots}, {5000, sessionCapMaxSlots},
		{100, sessionCapSlots(100)}, {200, sessionCapSlots(100)},
		{1000, sessionCapSlots(1000)}, {2000, sessionCapSlots(1000)},
	} {
		sessions := tt.sessions
		t.Run(fmt.Sprint(sessions, "/", 2*tt.slots), func(t *testing.T) {
			m := &autopilotMeter{}
			admit := func(id string) bool { return m.window(tt.slots).admit(id) }
			var mu sync.Mutex
			var sprayer, honest int
			var wg sync.WaitGroup
			const workers = 4
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var s, h int
					for range AutopilotSessionCap {
						for i := w; i < sessions; i += workers {
							if admit(fmt.Sprintf("visitor-%d", i)) {
								h++
							}
							if admit("sprayer") {
								s++
							}
						}
					}
					mu.Lock()
					sprayer, honest = sprayer+s, honest+h
					mu.Unlock()
				}()
			}
			wg.Wait()
			if sprayer != AutopilotSessionCap {
				t.Fatalf("the sprayer was measured %d times of %d, want %d", sprayer, sessions*AutopilotSessionCap, AutopilotSessionCap)
			}
			share := float64(honest) / float64(sessions*AutopilotSessionCap)
			t.Logf("%d sessions: %.1f%% of their requests within the cap", sessions, 100*share)
			if share < 0.9 {
				t.Fatalf("%d sessions asking %d each: %.1f%% measured, want 90%% at least", sessions, AutopilotSessionCap, 100*share)
			}
			m.take(time.Hour) // not a new window yet
			if admit("sprayer") {
				t.Fatal("the sprayer measured again within the window")
			}
			m.take(0) // a new window
			n := 0
			for range 100 {
				if admit("sprayer") {
					n++
				}
			}
			if n != AutopilotSessionCap {
				t.Fatalf("next window: the sprayer measured %d times, want %d", n, AutopilotSessionCap)
			}
		})
	}
}

// measuredRooms serves one room with an autopilot, max_active maxActive,
// every request timed (no warmup), for Rooms.Measure.
func measuredRooms(maxActive int, template string) (*Rooms, *liveRoom) {
	r := Room{Name: "r", Template: template, Limits: Limits{MaxActive: maxActive},
		Autopilot: &Autopilot{Target: 500 * time.Millisecond, Percentile: 90, ErrorsPPM: 20000, MinActive: 1, Interval: 15 * time.Second}}
	lr := newLiveRoom(r)
	rs := &Rooms{}
	live := map[string]*liveRoom{r.Name: lr}
	rs.live.Store(&live)
	return rs, lr
}

// One session that sets off the site's 5xx on purpose counts two errors a
// window, not its whole cap: among 60 sessions browsing at the cap, eight
// errors would be 1.6% of the step and 100 sessions fewer pass 2%; two are
// 0.4%. A site that fails for everyone still reads 100%.
func TestAutopilotMeasure_SessionErrors(t *testing.T) {
	rs, lr := measuredRooms(5000, "") // a 32 KiB sketch: no shared counters to speak of
	const browsing = 60
	for i := range browsing * AutopilotSessionCap {
		rs.Measure(Measurement{Room: "r", Visitor: fmt.Sprintf("visitor-%d", i%browsing), Path: "/", Status: 200, FirstByte: 10 * time.Millisecond, Timed: true})
	}
	for range 100 {
		rs.Measure(Measurement{Room: "r", Visitor: "breaker", Path: "/boom", Status: 500, FirstByte: time.Millisecond, Timed: true})
	}
	rep := lr.meter.take(time.Hour)
	if rep.Errors != AutopilotSessionErrors || rep.Requests != browsing*AutopilotSessionCap+AutopilotSessionErrors {
		t.Fatalf("one session's 100 errors among %d browsing: %d errors of %d requests, want %d of %d",
			browsing, rep.Errors, rep.Requests, AutopilotSessionErrors, browsing*AutopilotSessionCap+AutopilotSessionErrors)
	}
	if share := float64(rep.Errors) / float64(rep.Requests); share >= 0.02 {
		t.Fatalf("error share %.2f%%, past the 2%% bound", 100*share)
	}
	// The next window: the site fails everyone. Each session's first two
	// errors count, the rest are not measured: the share stays whole.
	lr.meter.take(0)
	for i := range browsing * AutopilotSessionCap {
		rs.Measure(Measurement{Room: "r", Visitor: fmt.Sprintf("visitor-%d", i%browsing), Path: "/", Status: 502, Timed: false})
	}
	rep = lr.meter.take(time.Hour)
	if rep.Errors != browsing*AutopilotSessionErrors || rep.Requests != rep.Errors {
		t.Fatalf("a site failing everyone: %d errors of %d requests, want %d of as many", rep.Errors, rep.Requests, browsing*AutopilotSessionErrors)
	}
}

// The per-session sketch is sized to the room (8 counters a row for each
// of max_active's sessions, 1 KiB to 32 KiB) and freed when a template's
// room goes to sleep, so 100,000 template rooms do not hold 32 KiB each.
func TestAutopilotMeter_SizedToTheRoom(t *testing.T) {
	for _, tt := range []struct{ maxActive, bytes int }{
		{1, 1 << 10}, {64, 1 << 10}, {65, 2 << 10}, {100, 2 << 10}, {1000, 16 << 10}, {2048, 32 << 10}, {100000, 32 << 10},
	} {
		if got := 2 * sessionCapSlots(tt.maxActive); got != tt.bytes {
			t.Errorf("max_active %d: a sketch of %d bytes, want %d", tt.maxActive, got, tt.bytes)
		}
	}
	rs, lr := measuredRooms(50, "event")
	rs.Measure(Measurement{Room: "r", Visitor: "v", Path: "/", Status: 200, FirstByte: time.Millisecond, Timed: true})
	c := lr.meter.perSession.Load()
	if c == nil || c.bytes() != 1<<10 {
		t.Fatalf("a room of 50: sketch %v, want 1 KiB", c)
	}
	a := &Admitter{lr: lr}
	a.rest(lr.visits.Load(), Stats{})
	if !lr.asleep.Load() || lr.meter.perSession.Load() != nil {
		t.Fatalf("asleep %v: the sketch outlived the room's sleep", lr.asleep.Load())
	}
	// A visitor back: a fresh sketch, the session counted from zero.
	n := 0
	for range 2 * AutopilotSessionCap {
		if lr.meter.window(sessionCapSlots(50)).admit("v") {
			n++
		}
	}
	if n != AutopilotSessionCap {
		t.Fatalf("after the sleep: %d measured, want %d", n, AutopilotSessionCap)
	}
}
