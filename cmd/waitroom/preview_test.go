package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// previewRoom waits everyone (max_active 0), in Korean by default, with
// its own closed words, so each state of a preview reads apart.
// previewRoom polls every second near the front and at most every 2 s far
// back (refresh_max), so a page at position 4,321 polls within the
// browser test's wait: at the default 30 s, +-20%, it may not.
const previewRoom = `    max_active: 0
    admit_rate: 60/m
    tick: 50ms
    page: { refresh: 1s, refresh_max: 2s, locale: ko, title: "Concert", closed_heading: "Sold out" }`

// makePreview asks the admin API for a link and returns its path and query
// (the gateway's own address is the test's base).
func makePreview(t *testing.T, app *App, room, body string) string {
	t.Helper()
	code, m, raw := newAdmin(t, app).do("POST", "/admin/api/rooms/"+room+"/preview", body)
	link, _ := m["url"].(string)
	if code != http.StatusOK || !strings.HasPrefix(link, waitroom.PreviewPath+"?") {
		t.Fatalf("preview %s: %d %s", body, code, raw)
	}
	if _, err := time.Parse(time.RFC3339, m["expires"].(string)); err != nil {
		t.Fatalf("preview %s: expires %v", body, m["expires"])
	}
	return link
}

// visitorCounts is what the metrics and the store say of visitors to the
// room: a preview must change none of it.
func visitorCounts(t *testing.T, app *App, room string) string {
	t.Helper()
	st, err := app.store.Stats(context.Background(), room)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.SplitSeq(metricsText(t, app), "\n") {
		if (strings.HasPrefix(l, "waitroom_requests_total{") && strings.Contains(l, `room="`+room+`"`)) ||
			strings.HasPrefix(l, "waitroom_ticket_rejections_total") || requestStoreOp.MatchString(l) {
			lines = append(lines, l)
		}
	}
	return fmt.Sprintf("store: waiting %d active %d joined %d; metrics: %s", st.Waiting, st.Active, st.Joined, strings.Join(lines, " | "))
}

// requestStoreOp matches the counts of the store calls only requests make
// (ticks make the others all the time).
var requestStoreOp = regexp.MustCompile(`^waitroom_store_duration_seconds_count\{op="(decide|release|allow|use_room|socket)"`)

var (
	posRe    = regexp.MustCompile(`<strong id="wr-pos">([^<]*)</strong>`)
	titleRe  = regexp.MustCompile(`<title>([^<]*)</title>`)
	headRe   = regexp.MustCompile(`<h1[^>]*>([^<]*)</h1>`)
	statusRe = regexp.MustCompile(`"status":"([^"]*)"`)
)

func match(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// A visitor-like request with a preview link sees the room's page in the
// link's state, position and language, as a preview, and takes nothing:
// no cookie, no place, no store write, no visitor in the metrics; the
// page's poll (the link itself) keeps showing the preview.
func TestPreview_LinkShowsThePageAndTakesNoPlace(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, previewRoom))
	// Someone real in line, so the store has something a preview could
	// disturb.
	real := newVisitor(t, base)
	for range 2 { // a ticket takes its place when it comes back
		if r := real.get("/events/"); r.status != http.StatusOK || r.header.Get(waitroom.StateHeader) != "waiting" {
			t.Fatalf("the real visitor should wait: %d %s", r.status, r.header.Get(waitroom.StateHeader))
		}
	}
	before := visitorCounts(t, app, "concert")
	if !strings.HasPrefix(before, "store: waiting 1 active 0 joined 1;") {
		t.Fatalf("the real visitor should hold a place: %s", before)
	}

	link := makePreview(t, app, "concert", `{"state":"waiting","position":4321,"lang":"en","ttl":"10m"}`)
	staff := newVisitor(t, base)
	r := staff.get(link)
	if r.status != http.StatusOK || r.header.Get(waitroom.StateHeader) != "waiting" {
		t.Fatalf("preview page: %d %s %s", r.status, r.header.Get(waitroom.StateHeader), r.body)
	}
	if got := match(posRe, r.body); got != "4,321" {
		t.Errorf("the page shows position %q, want 4,321", got)
	}
	if !strings.Contains(r.body, `<html lang="en">`) {
		t.Error("the link's language (en) should beat the room's (ko)")
	}
	if got := match(titleRe, r.body); !strings.HasPrefix(got, "Preview · ") || !strings.Contains(got, "#4,321") {
		t.Errorf("title %q should say preview and the position", got)
	}
	if !strings.Contains(r.body, `id="wr-preview"`) || !strings.Contains(r.body, `<meta name="robots" content="noindex">`) {
		t.Error("the page should carry the preview banner and noindex")
	}
	if strings.Contains(r.body, waitroom.LeavePath) {
		t.Error("a preview holds no place to leave")
	}
	for k, want := range map[string]string{"Cache-Control": "no-store", "X-Robots-Tag": "noindex, nofollow", "Set-Cookie": ""} {
		if got := strings.Join(r.header.Values(k), ", "); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	// The page polls its status URL: the link itself, which answers the
	// same preview as JSON.
	status := strings.ReplaceAll(match(statusRe, r.body), `\u0026`, "&")
	if !strings.HasPrefix(status, waitroom.PreviewPath+"?") {
		t.Fatalf("the page polls %q, not its link", status)
	}
	for range 100 {
		p := staff.getJSON(status)
		if p.status != http.StatusOK || p.state() != "waiting" || p.position() != 4321 || p.json["token"] != "" {
			t.Fatalf("the page's poll: %d %s", p.status, p.body)
		}
	}
	if got := len(staff.c.Jar.Cookies(mustURL(t, base))); got != 0 {
		t.Errorf("the preview left %d cookies", got)
	}
	if after := visitorCounts(t, app, "concert"); after != before {
		t.Errorf("the preview changed what the store or the metrics count:\nbefore %s\nafter  %s", before, after)
	}
	if r := staff.do(http.MethodPost, link); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST to a preview link: %d", r.status)
	}

	// Each state, in the room's own words and language where the link
	// names none.
	for _, tc := range []struct {
		body, state string
		status      int
		heading     string
	}{
		{`{"state":"sold_out"}`, "closed", 200, "Sold out"},
		{`{"state":"closed","lang":"en"}`, "closed", 200, "Sold out"},
		{`{"state":"challenge","lang":"en"}`, "challenge", 200, "Checking your browser"},
		{`{"state":"full","lang":"ko"}`, "full", 503, "대기열이 가득 찼습니다"},
		{`{"state":"waiting","position":1}`, "waiting", 200, "입장을 기다리고 있습니다"},
	} {
		r := staff.get(makePreview(t, app, "concert", tc.body))
		if r.status != tc.status || r.header.Get(waitroom.StateHeader) != tc.state || match(headRe, r.body) != tc.heading ||
			!strings.Contains(r.body, `id="wr-preview"`) {
			t.Errorf("%s: %d %s %q, want %d %s %q with the banner", tc.body, r.status, r.header.Get(waitroom.StateHeader),
				match(headRe, r.body), tc.status, tc.state, tc.heading)
		}
	}
	if after := visitorCounts(t, app, "concert"); after != before {
		t.Errorf("previews changed what the store or the metrics count:\nbefore %s\nafter  %s", before, after)
	}
}

// A link that is tampered with, of another room, forged or expired is
// refused: 403, saying "invalid" or "expired" and nothing more.
func TestPreview_TamperedOrExpiredLinksAreRefused(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, previewRoom))
	staff := newVisitor(t, base)
	link := makePreview(t, app, "concert", `{"state":"waiting","position":9,"lang":"en"}`)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	sealed := u.Query().Get("p")
	with := func(room, p string) string {
		return waitroom.PreviewPath + "?" + url.Values{"room": {room}, "p": {p}}.Encode()
	}
	flip := func(i int) string {
		b := []byte(sealed)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	forged, _ := json.Marshal(map[string]any{"r": "concert", "s": "waiting", "p": 1, "e": time.Now().Add(time.Hour).Unix()})
	invalid := map[string]string{
		"payload flipped":  with("concert", flip(3)),
		"MAC flipped":      with("concert", flip(len(sealed)-3)),
		"another room":     with("festival", sealed),
		"no room":          waitroom.PreviewPath + "?" + url.Values{"p": {sealed}}.Encode(),
		"none":             waitroom.PreviewPath,
		"truncated":        with("concert", sealed[:len(sealed)-1]),
		"unsigned payload": with("concert", base64.RawURLEncoding.EncodeToString(forged)),
		"huge":             with("concert", strings.Repeat("A", 5000)),
	}
	for name, l := range invalid {
		r := staff.get(l)
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "This preview link is not valid") || r.header.Get("Set-Cookie") != "" {
			t.Errorf("%s: %d, want 403 invalid: %.300s", name, r.status, r.body)
		}
	}
	if r := staff.get(link); r.status != http.StatusOK {
		t.Fatalf("the untouched link: %d", r.status)
	}

	short := makePreview(t, app, "concert", `{"state":"waiting","position":2,"lang":"en","ttl":"1s"}`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := staff.get(short)
		if r.status == http.StatusForbidden {
			if !strings.Contains(r.body, "This preview link has expired") {
				t.Fatalf("an expired link should say so: %.300s", r.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a 1s link still answers %d after 30s", r.status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := staff.getJSON(short); p.status != http.StatusForbidden {
		t.Errorf("the expired link's poll: %d %s", p.status, p.body)
	}
}

// The admin API checks a preview's body field by field, wants the token,
// and knows its rooms.
func TestAdmin_PreviewBodies(t *testing.T) {
	_, srv := newUpstream(t)
	app, _ := startGateway(t, gwConfig(srv.URL, previewRoom))
	c := newAdmin(t, app)
	cases := []struct {
		path, body string
		code       int
		want       string
	}{
		{"concert", `{"state":"waiting","position":1}`, 200, ""},
		{"concert", `{"state":"waiting","position":100000000,"lang":"ko","ttl":"24h"}`, 200, ""},
		{"concert", `{"state":"sold_out","lang":"en","ttl":"1s"}`, 200, ""},
		{"concert", `{"state":"challenge"}`, 200, ""},
		{"concert", `{"state":"full"}`, 200, ""},
		{"concert", `{"state":"waiting"}`, 400, "position"},
		{"concert", `{"state":"waiting","position":0}`, 400, "position"},
		{"concert", `{"state":"waiting","position":-3}`, 400, "position"},
		{"concert", `{"state":"waiting","position":100000001}`, 400, "position"},
		{"concert", `{"state":"closed","position":4}`, 400, "position"},
		{"concert", `{"state":"admitted"}`, 400, "state"},
		{"concert", `{}`, 400, "state"},
		{"concert", `{"state":"waiting","position":1,"lang":"fr"}`, 400, "lang"},
		{"concert", `{"state":"waiting","position":1,"ttl":"25h"}`, 400, "ttl"},
		{"concert", `{"state":"waiting","position":1,"ttl":"0s"}`, 400, "ttl"},
		{"concert", `{"state":"waiting","position":1,"ttl":"soon"}`, 400, "ttl"},
		{"concert", `{"state":"waiting","position":1,"ttl":15}`, 400, "ttl"},
		{"concert", `{"state":"waiting","position":1,"room":"x"}`, 400, "room"},
		{"concert", `{`, 400, "JSON"},
		{"nope", `{"state":"closed"}`, 404, "nope"},
	}
	for _, tc := range cases {
		code, m, body := c.do("POST", "/admin/api/rooms/"+tc.path+"/preview", tc.body)
		msg, _ := m["error"].(string)
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %s, want %d naming %q", tc.path, tc.body, code, body, tc.code, tc.want)
		}
	}
	for _, token := range []string{"", "wrong-token-wrong-token"} {
		c := &adminClient{t: t, base: c.base, token: token}
		if code, _, body := c.do("POST", "/admin/api/rooms/concert/preview", `{"state":"closed"}`); code != http.StatusUnauthorized {
			t.Errorf("token %q: %d %s", token, code, body)
		}
	}
}

// admin.public_url puts the gateway's address in front of a link; a path
// is refused there.
func TestAdmin_PreviewPublicURL(t *testing.T) {
	_, srv := newUpstream(t)
	cfg := strings.Replace(gwConfig(srv.URL, previewRoom), "admin: {", `admin: { public_url: "https://tickets.example.com/",`, 1)
	app, _ := startGateway(t, cfg)
	code, m, body := newAdmin(t, app).do("POST", "/admin/api/rooms/concert/preview", `{"state":"closed"}`)
	if link, _ := m["url"].(string); code != 200 || !strings.HasPrefix(link, "https://tickets.example.com"+waitroom.PreviewPath+"?") {
		t.Fatalf("%d %s", code, body)
	}
	for _, bad := range []string{"tickets.example.com", "ftp://x", "https://x/shop", "https://u:p@x", "https://x/?a=1"} {
		_, err := parseConfig("t.yaml", []byte(strings.Replace(gwConfig(srv.URL, previewRoom), "admin: {", `admin: { public_url: "`+bad+`",`, 1)))
		if err == nil || !strings.Contains(err.Error(), "admin.public_url") {
			t.Errorf("public_url %q: %v", bad, err)
		}
	}
}
