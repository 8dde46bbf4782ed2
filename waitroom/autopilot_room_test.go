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
	for _, sessions := range []int{2000, 5000} {
		t.Run(fmt.Sprint(sessions), func(t *testing.T) {
			m := &autopilotMeter{}
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
							if m.admit(fmt.Sprintf("visitor-%d", i)) {
								h++
							}
							if m.admit("sprayer") {
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
			if m.admit("sprayer") {
				t.Fatal("the sprayer measured again within the window")
			}
			m.take(0) // a new window
			n := 0
			for range 100 {
				if m.admit("sprayer") {
					n++
				}
			}
			if n != AutopilotSessionCap {
				t.Fatalf("next window: the sprayer measured %d times, want %d", n, AutopilotSessionCap)
			}
		})
	}
}
