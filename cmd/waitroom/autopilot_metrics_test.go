package main

import (
	"strings"
	"testing"
	"time"
)

// A template's rooms share one set of autopilot series, as its queue
// gauges do: under the template's name, the limit the sum of its rooms'
// limits in effect (two events at their floor of 3: 6), no series of the
// events' own, so the series do not grow with the events.
func TestAutopilot_TemplateSeries(t *testing.T) {
	_, site := newUpstream(t)
	app, base := startGateway(t, templateConfig(site.URL,
		"    max_active: 12\n    tick: 100ms\n    autopilot: { target: 1s, min_active: 3, interval: 500ms }"))
	newVisitor(t, base).get("/events/1/")
	newVisitor(t, base).get("/events/2/")
	want := `waitroom_autopilot_limit{room="event-{id}"} 6`
	var body string
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if body = metricsText(t, app); strings.Contains(body, want) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no %s within 30 s:\n%s", want, grepLines(body, "autopilot"))
		}
	}
	if strings.Contains(body, `room="event-1"`) || strings.Contains(body, `room="event-2"`) {
		t.Fatalf("an event's own series:\n%s", grepLines(body, "event-"))
	}
	for _, s := range []string{"waitroom_autopilot_latency_seconds", "waitroom_autopilot_error_share", "waitroom_autopilot_frozen"} {
		if !strings.Contains(body, s+`{room="event-{id}"} `) {
			t.Errorf("no %s of the template:\n%s", s, grepLines(body, "autopilot"))
		}
	}
}
