package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/metrics/geotest"
)

// The User-Agents of the scripted crowd, as real clients send them.
const (
	uaIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	uaAndroid = "Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"
	uaWindows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	uaIPad    = "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1"
	uaApp     = "MyShop/3.2.1 (iPhone; iOS 17.4; Scale/3.00) Alamofire/5.8.0"
	uaBot     = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36"
	uaCurl    = "curl/8.5.0"

	acceptHTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// watchConfig: concert holds everyone in line, three at most, so the
// fourth newcomer is refused; festival asks newcomers for a proof of work.
func watchConfig(upstream string) string {
	return fmt.Sprintf(`
listen: "127.0.0.1:0"
admin: { listen: "127.0.0.1:0", token: %[3]q }
log: { level: error }
cookie: { secure: false, hash_keys: [%[2]q], block_keys: [%[2]q] }
upstreams:
  site: { url: %[1]q, timeout: 30s }
rooms:
  concert:
    max_active: 0
    tick: 50ms
    max_waiting: 3
  festival:
    max_active: 0
    tick: 50ms
    challenge: pow
    challenge_bits: 8
routes:
  - { path: /events/, upstream: site, room: concert }
  - { path: /festival/, upstream: site, room: festival }
  - { path: /, upstream: site }
`, upstream, testKey, adminToken)
}

// A scripted crowd through a real gateway shows in /metrics with the
// counts the script made: arrivals, waiting and challenge pages, access
// types and device classes, per room; a flood of made-up User-Agents,
// Accept headers and paths adds no series.
func TestWatch_ScriptedMix(t *testing.T) {
	_, site := newUpstream(t)
	app, base := startGateway(t, watchConfig(site.URL))

	// Concert: two phones and a desktop in browsers, an app asking for JSON.
	// Each polls its status once, as the page does, which places it.
	iphone := newVisitor(t, base)
	for i, c := range []struct {
		v        *visitor
		path, ua string
	}{{iphone, "/events/1", uaIPhone}, {newVisitor(t, base), "/events/2", uaAndroid}, {newVisitor(t, base), "/events/1", uaWindows}} {
		mustState(t, c.v.do("GET", c.path, "Accept", acceptHTML, "User-Agent", c.ua), http.StatusOK, "text/html")
		if r := c.v.getJSON("/.waitroom/status?room=concert"); r.position() != i+1 {
			t.Fatalf("newcomer %d: %v, want position %d", i, r.json, i+1)
		}
	}
	// The iPhone reloads its waiting page: one more page view, no arrival.
	mustState(t, iphone.do("GET", "/events/1", "Accept", acceptHTML, "User-Agent", uaIPhone), http.StatusOK, "text/html")
	// The line's three places are taken: an app's newcomer is refused.
	refused := newVisitor(t, base).do("GET", "/events/1", "Accept", "application/json", "User-Agent", uaApp)
	if refused.status != http.StatusServiceUnavailable {
		t.Fatalf("the fourth newcomer: %d %s, want 503", refused.status, refused.body)
	}
	// Festival: a headless bot gets the challenge page, an app its JSON,
	// and an iPad's browser the page; curl's POST gets no page.
	mustState(t, newVisitor(t, base).do("GET", "/festival/a", "Accept", acceptHTML, "User-Agent", uaBot), http.StatusOK, "text/html")
	mustState(t, newVisitor(t, base).do("GET", "/festival/a", "Accept", "application/json", "User-Agent", uaApp), 0, "application/json")
	mustState(t, newVisitor(t, base).do("GET", "/festival/b", "Accept", acceptHTML, "User-Agent", uaIPad), http.StatusOK, "text/html")
	newVisitor(t, base).do("POST", "/festival/b", "User-Agent", uaCurl)

	m := metricsText(t, app)
	for series, want := range map[string]int{
		`waitroom_arrivals_total{room="concert"}`:                    3,
		`waitroom_page_views_total{page="waiting",room="concert"}`:   4,
		`waitroom_page_views_total{page="challenge",room="concert"}`: 0,
		`waitroom_access_total{room="concert",type="browser"}`:       3,
		`waitroom_access_total{room="concert",type="app"}`:           0,
		`waitroom_access_total{room="concert",type="refused"}`:       1,
		`waitroom_devices_total{class="phone",room="concert"}`:       3, // two browsers and the refused app
		`waitroom_devices_total{class="desktop",room="concert"}`:     1,
		`waitroom_devices_total{class="bot",room="concert"}`:         0,

		`waitroom_arrivals_total{room="festival"}`:                    0,
		`waitroom_page_views_total{page="challenge",room="festival"}`: 2,
		`waitroom_page_views_total{page="waiting",room="festival"}`:   0,
		`waitroom_access_total{room="festival",type="challenged"}`:    4,
		`waitroom_devices_total{class="bot",room="festival"}`:         2, // HeadlessChrome and curl
		`waitroom_devices_total{class="phone",room="festival"}`:       1,
		`waitroom_devices_total{class="tablet",room="festival"}`:      1,
	} {
		if got := seriesValue(t, m, series); got != want {
			t.Errorf("%s = %d, want %d", series, got, want)
		}
	}
	if t.Failed() {
		t.Fatalf("the watch series:\n%s", grepLines(m, "{room=")+"\n"+grepLines(m, ",room="))
	}

	// The admin API, which the dashboard reads, tells the same counts.
	w, _ := stats(t, app, "festival")["watch"].(map[string]any)
	access, _ := w["access"].(map[string]any)
	devices, _ := w["devices"].(map[string]any)
	pages, _ := w["page_views"].(map[string]any)
	if w == nil || access["challenged"] != 4.0 || devices["bot"] != 2.0 || pages["challenge"] != 2.0 || w["arrivals"] != 0.0 {
		t.Fatalf("the admin API's festival watch: %v", w)
	}
	if w, _ := stats(t, app, "concert")["watch"].(map[string]any); w["arrivals"] != 3.0 {
		t.Fatalf("the admin API's concert watch: %v", w)
	}

	// A flood of made-up clients adds counts, never series.
	before := seriesNames(m)
	for i := range 200 {
		v := newVisitor(t, base)
		v.do("GET", fmt.Sprintf("/events/%d/%x", i, i*7919), "Accept", fmt.Sprintf("text/x-%d", i),
			"User-Agent", fmt.Sprintf("Agent%d/%d (%x)", i, i, i*31), "Waitroom-Token", fmt.Sprintf("junk%d", i))
		v.do("GET", fmt.Sprintf("/festival/%d?q=%d", i, i), "User-Agent", strings.Repeat("z", 300+i))
	}
	after := metricsText(t, app)
	if b, a := before, seriesNames(after); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("the flood changed the series: %d before, %d after", len(b), len(a))
	}
	if got := seriesValue(t, after, `waitroom_devices_total{class="unknown",room="concert"}`); got < 200 {
		t.Fatalf("the flood's 200 refused newcomers counted %d unknown devices", got)
	}
}

// mustState checks an answer's status (0: any 2xx) and content type.
func mustState(t *testing.T, r reply, status int, contentType string) {
	t.Helper()
	if (status != 0 && r.status != status) || (status == 0 && r.status/100 != 2) ||
		!strings.HasPrefix(r.header.Get("Content-Type"), contentType) {
		t.Fatalf("answer %d %s, want %d %s:\n%.300s", r.status, r.header.Get("Content-Type"), status, contentType, r.body)
	}
}

// seriesValue reads one series' value from an exposition page, -1 when absent.
func seriesValue(t *testing.T, page, series string) int {
	t.Helper()
	for line := range strings.SplitSeq(page, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var n float64
			fmt.Sscan(v, &n)
			return int(n)
		}
	}
	return -1
}

var seriesLine = regexp.MustCompile(`^(waitroom_[a-z_]+(\{[^}]*\})?) `)

// seriesNames are a page's waitroom_ series, sorted; the upstream and
// store histograms' buckets, which the flood's proxied requests may
// start, are left out.
func seriesNames(page string) []string {
	var out []string
	for line := range strings.SplitSeq(page, "\n") {
		m := seriesLine.FindStringSubmatch(line)
		if m == nil || strings.Contains(m[1], "_duration_seconds") || strings.HasPrefix(m[1], "waitroom_config_") {
			continue
		}
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// With geo.db_file, newcomers count by the country of the address the front
// door believed (X-Forwarded-For from a trusted proxy here): two regions of
// a generated database, and "unknown" for an address it does not hold.
func TestWatch_Regions(t *testing.T) {
	_, site := newUpstream(t)
	db := geotest.Write(t, map[string]string{"198.51.100.0/24": "KR", "203.0.113.0/24": "JP"})
	cfg := strings.Replace(watchConfig(site.URL), "listen: \"127.0.0.1:0\"\n",
		"listen: \"127.0.0.1:0\"\nserver: { trusted_proxies: [127.0.0.1/32] }\ngeo: { db_file: "+strconv.Quote(db)+" }\n", 1)
	app, base := startGateway(t, cfg)
	for _, c := range []struct{ client, ua string }{
		{"198.51.100.7", uaIPhone}, {"198.51.100.8", uaAndroid}, {"203.0.113.9", uaWindows}, {"192.0.2.1", uaIPad},
	} {
		newVisitor(t, base).do("GET", "/events/1", "X-Forwarded-For", c.client, "Accept", acceptHTML, "User-Agent", c.ua)
	}
	m := metricsText(t, app)
	for series, want := range map[string]int{
		`waitroom_regions_total{country="KR",room="concert"}`:      2,
		`waitroom_regions_total{country="JP",room="concert"}`:      1,
		`waitroom_regions_total{country="unknown",room="concert"}`: 1,
		`waitroom_arrivals_total{room="concert"}`:                  4, // none polled, so none is placed: the line is not full
	} {
		if got := seriesValue(t, m, series); got != want {
			t.Errorf("%s = %d, want %d", series, got, want)
		}
	}
	if t.Failed() {
		t.Fatalf("the series:\n%s", grepLines(m, "waitroom_regions")+"\n"+grepLines(m, "waitroom_access"))
	}
	w, _ := stats(t, app, "concert")["watch"].(map[string]any)
	if rg, _ := w["regions"].(map[string]any); rg["KR"] != 2.0 || rg["JP"] != 1.0 || rg["unknown"] != 1.0 || len(rg) != 3 {
		t.Fatalf("the admin API's regions: %v", w)
	}
}

// A geo.db_file that is no database stops the start, naming the file.
func TestWatch_RegionsBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.mmdb")
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig("test.yaml", []byte(watchConfig("http://127.0.0.1:1")+"geo: { db_file: "+strconv.Quote(path)+" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if app, err := NewApp(cfg, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "junk.mmdb") {
		if app != nil {
			app.Close()
		}
		t.Fatalf("NewApp with a junk geo.db_file: %v", err)
	}
}
