package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricValue reads one sample of the metrics page; 0 when absent.
func metricValue(t *testing.T, app *App, series string) float64 {
	t.Helper()
	for _, l := range strings.Split(metricsText(t, app), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// A line of five, each let in when the one before is released:
// waitroom_wait_seconds holds the waits the visitors saw, within a tick
// and the second a ticket's issue time is rounded to.
func TestMetrics_WaitSecondsAreTheWaitsPeopleHad(t *testing.T) {
	_, site := newUpstream(t)
	const tick = 200 * time.Millisecond
	app, base := startGateway(t, gwConfig(site.URL, "    max_active: 1\n    tick: 200ms\n    page: { refresh: 1s }"))
	type waiter struct {
		v       *visitor
		start   time.Time
		waited  time.Duration
		entered bool
	}
	line := make([]*waiter, 5)
	for i := range line {
		line[i] = &waiter{v: newVisitor(t, base), start: time.Now()}
		line[i].v.getJSON("/events/")
		time.Sleep(50 * time.Millisecond)
	}
	var measured time.Duration
	for _, w := range line {
		deadline := time.Now().Add(15 * time.Second)
		for !w.entered && time.Now().Before(deadline) {
			if r := w.v.get("/events/in"); r.body == "site:/events/in" {
				w.entered, w.waited = true, time.Since(w.start)
				break
			}
			time.Sleep(tick / 2)
		}
		if !w.entered {
			t.Fatal("a visitor never got in")
		}
		measured += w.waited
		time.Sleep(700 * time.Millisecond) // inside a while
		w.v.get("/events/done")            // the site releases it
	}
	count := metricValue(t, app, `waitroom_wait_seconds_count{room="concert"}`)
	sum := metricValue(t, app, `waitroom_wait_seconds_sum{room="concert"}`)
	t.Logf("measured waits %v in all; the histogram: %v admissions, %.2fs", measured.Round(time.Millisecond), count, sum)
	slack := float64(len(line)) * (tick + time.Second).Seconds()
	if count != float64(len(line)) || sum < measured.Seconds()-slack || sum > measured.Seconds()+slack {
		t.Fatalf("waitroom_wait_seconds: count %v sum %.2f, want %d and %.2f±%.1f", count, sum, len(line), measured.Seconds(), slack)
	}
	if n := metricValue(t, app, `waitroom_session_seconds_count{room="concert"}`); n != float64(len(line)) {
		t.Fatalf("waitroom_session_seconds counted %v sessions, want %d", n, len(line))
	}
	_, v, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
	if v["wait_p50_seconds"] == nil || v["wait_p90_seconds"] == nil {
		t.Fatalf("the admin API's waits: %v %v", v["wait_p50_seconds"], v["wait_p90_seconds"])
	}
}
