package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A gateway that has served nothing yet already exports, at 0, every
// series the Grafana dashboard queries and every metric the docs name, for
// each configured room, template and upstream: a quiet day's panels read
// 0, not "No data", and rate() has its starting point.
func TestMetrics_QuietGatewayExportsEverySeriesAtZero(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "waitroom.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	_, site := newUpstream(t)
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 1"),
		"routes:\n", "  \"t-{id}\": { max_active: 1 }\n  calm: { autopilot: { target: 1s } }\nroutes:\n  - { path: \"/t/{id}/\", upstream: site, room: \"t-{id}\" }\n", 1) +
		"webhooks:\n  - { url: \"http://127.0.0.1:1/hook\", events: [queue.started], secret: \"" + hookSecret + "\" }\n"
	app, _ := startGateway(t, cfg)
	body := metricsText(t, app) // no request has been served

	// samples maps a series name to the label sets it has samples for.
	samples := map[string][]string{}
	line := regexp.MustCompile(`^([a-z_:]+)(\{.*\})? `)
	for _, l := range strings.Split(body, "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			samples[m[1]] = append(samples[m[1]], m[2])
		}
	}
	has := func(name, labels string) bool {
		for _, ls := range samples[name] {
			if strings.Contains(ls, labels) {
				return true
			}
		}
		return false
	}
	// A room-labelled query must find the configured room; the template's
	// gauge, the template.
	metric := regexp.MustCompile(`\bwaitroom_[a-z_]+`)
	queried := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range metric.FindAllString(tg.Expr, -1) {
				queried++
				labels := ""
				switch {
				case m == "waitroom_template_rooms":
					labels = `room="t-{id}"`
				case strings.Contains(tg.Expr, "room=~"):
					labels = `room="concert"`
				case strings.HasPrefix(m, "waitroom_upstream_"):
					labels = `upstream="site"`
				}
				if !has(m, labels) {
					t.Errorf("panel %q queries %s{%s}, which a quiet gateway does not export", p.Title, m, labels)
				}
			}
		}
	}
	if queried < 12 {
		t.Fatalf("only %d metrics queried by the dashboard", queried)
	}
	// Every metric the docs name is exported too.
	docs := []string{filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "waitroom", "metrics", "doc.go")}
	more, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	named := 0
	for _, path := range append(docs, more...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range metric.FindAllString(string(b), -1) {
			if m == "waitroom_event" || m == "waitroom_admin_lang" { // cookies: waitroom_event-123, the dashboard's language
				continue
			}
			named++
			if !has(m, "") && !has(m+"_bucket", "") && !has(m+"_count", "") {
				t.Errorf("%s names %s, which a quiet gateway does not export", filepath.Base(path), m)
			}
		}
	}
	if named < 20 {
		t.Fatalf("only %d metric names in the docs", named)
	}
	// Declared, not counted: every room series reads 0.
	for _, s := range []string{`waitroom_admissions_total{room="concert"} 0`, `waitroom_queue_length{room="concert"} `,
		`waitroom_joins_refused_total{reason="quota",room="concert"} 0`, `waitroom_releases_total{how="leave",room="concert"} 0`} {
		if !strings.Contains(body, s) {
			t.Errorf("/metrics lacks %q", s)
		}
	}
}
