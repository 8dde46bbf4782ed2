package main

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// After a scripted scenario, /metrics parses as Prometheus text and the
// counters say what happened.
func TestMetrics_CountWhatHappened(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 50ms"))
	for range 3 { // one in, two queued
		newVisitor(t, base).get("/events/1")
	}
	newVisitor(t, base).get("/static/app.css") // bypass
	newVisitor(t, base).get("/about")          // no room
	bad := newVisitor(t, base)
	bad.do("GET", "/events/1", "Cookie", "waitroom_concert=forged") // a rejected ticket, then queued
	var text string
	waitFor(t, 5*time.Second, func() bool { // the admitter's first tick sets store_up
		_, _, text = newAdmin(t, app).do("GET", "/metrics", "")
		return strings.Contains(text, "waitroom_store_up 1")
	})
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	value := func(name string, labels map[string]string) float64 {
		for _, m := range families[name].GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					match = false
				}
			}
			if match {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		return -1
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"waitroom_requests_total", map[string]string{"room": "concert", "decision": "admitted"}, 1},
		{"waitroom_requests_total", map[string]string{"room": "concert", "decision": "queued"}, 3},
		{"waitroom_requests_total", map[string]string{"room": "-", "decision": "bypass"}, 2},
		{"waitroom_ticket_rejections_total", map[string]string{"reason": "invalid"}, 1},
		{"waitroom_admissions_total", map[string]string{"room": "concert"}, 1},
		{"waitroom_store_up", nil, 1},
		{"waitroom_store_outages_total", nil, 0},
	}
	for _, c := range checks {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v\n%s", c.name, c.labels, got, c.want, grepLines(text, c.name))
		}
	}
	if _, ok := families["waitroom_upstream_duration_seconds"]; !ok {
		t.Error("no upstream latency histogram")
	}
	if _, ok := families["waitroom_store_duration_seconds"]; !ok {
		t.Error("no store latency histogram")
	}
}
