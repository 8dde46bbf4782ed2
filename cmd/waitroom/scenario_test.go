package main

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

const twoInside = `    max_active: 2
    tick: 50ms
    page: { refresh: 1s }`

func TestGateway_ThirdVisitorWaitsUntilRelease(t *testing.T) {
	up, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, twoInside))
	a, b, c := newVisitor(t, base), newVisitor(t, base), newVisitor(t, base)
	for _, v := range []*visitor{a, b} {
		if r := v.get("/events/1"); r.status != 200 || r.body != "site:/events/1" || r.header.Get("Waitroom-State") != "" {
			t.Fatalf("first visitors must go straight through, untouched: %d %q %v", r.status, r.body, r.header)
		}
	}
	before := up.count()
	r := c.getJSON("/events/1")
	if r.state() != "waiting" || r.position() != 1 {
		t.Fatalf("third visitor: want waiting at position 1, got %d %v", r.status, r.json)
	}
	html := c.get("/events/1")
	if !strings.Contains(html.header.Get("Content-Type"), "text/html") || html.header.Get("Cache-Control") != "no-store" ||
		html.header.Get("Waitroom-State") != "waiting" {
		t.Fatalf("waiting page headers: %v", html.header)
	}
	if up.count() != before {
		t.Fatal("the upstream saw a waiting visitor")
	}
	// The site says "done" for a: the header acts and never reaches a.
	done := a.get("/events/done")
	if done.header.Get("Waitroom-Command") != "" {
		t.Fatal("Waitroom-Command reached the browser")
	}
	if sc := done.header.Values("Set-Cookie"); len(sc) == 0 || !strings.Contains(sc[len(sc)-1], "waitroom_concert=;") || !strings.Contains(sc[len(sc)-1], "Max-Age=0") {
		t.Fatalf("a released visitor's ticket must end with the session, got Set-Cookie %q", sc)
	}
	c.waitAdmitted("concert", 3*time.Second)
	if r := c.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("after the release the third visitor must get in, got %d", r.status)
	}
}

func TestGateway_RefreshNeverWorsensPosition(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	var vs []*visitor
	for range 5 {
		v := newVisitor(t, base)
		v.getJSON("/events/")
		vs = append(vs, v)
	}
	last := vs[2].getJSON("/events/").position()
	for i := range 50 {
		path := "/events/"
		if i%2 == 1 {
			path = "/.waitroom/status?room=concert"
		}
		r := vs[2].getJSON(path)
		if r.state() != "waiting" || r.position() > last || r.position() != 3 {
			t.Fatalf("refresh %d: %v (was position %d)", i, r.json, last)
		}
		last = r.position()
	}
}

func TestGateway_BadTicketsGoToTheBack(t *testing.T) {
	up, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	first := newVisitor(t, base)
	first.getJSON("/events/")
	good := first.cookieValue("concert")
	if good == "" {
		t.Fatal("no ticket cookie set")
	}
	festival := newVisitor(t, base)
	festival.get("/festival/") // admitted there; its cookie is for another room
	other := festival.cookieValue("festival")
	tampered := []byte(good)
	tampered[10] ^= 1
	cases := map[string]string{
		"tampered":   "waitroom_concert=" + string(tampered),
		"other room": "waitroom_concert=" + other,
		"garbage":    "waitroom_concert=%%%; other=1",
	}
	want := 2
	for name, cookie := range cases {
		v := newVisitor(t, base)
		r := v.do(http.MethodGet, "/events/", "Cookie", cookie, "Accept", "application/json")
		if r.status != 200 || r.state() != "waiting" || r.position() < want {
			t.Fatalf("%s cookie: want a fresh ticket at the back, got %d %v", name, r.status, r.json)
		}
		want = r.position() + 1
	}
	if n := up.visitors; len(n) != 1 {
		t.Fatalf("only the festival visitor may reach the site, got %v", n)
	}
}

func TestGateway_WaitingPostIsNotForwarded(t *testing.T) {
	up, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	v := newVisitor(t, base)
	v.get("/events/")
	r := v.do(http.MethodPost, "/events/buy")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || r.header.Get("Cache-Control") != "no-store" ||
		r.header.Get("Waitroom-State") != "waiting" {
		t.Fatalf("waiting POST: %d %v", r.status, r.header)
	}
	if up.count() != 0 {
		t.Fatal("a waiting visitor's POST reached the upstream")
	}
}

func TestGateway_UnreachableUpstream(t *testing.T) {
	_, base := startGateway(t, gwConfig("http://127.0.0.1:1", twoInside))
	r := newVisitor(t, base).get("/anything")
	if r.status != http.StatusBadGateway || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("want the 502 page, got %d %q", r.status, r.header.Get("Content-Type"))
	}
}

func TestGateway_ReturnToMustStayOnSite(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, twoInside))
	v := newVisitor(t, base)
	v.get("/events/")
	for _, rt := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example", "http:evil", "javascript:alert(1)"} {
		r := v.getJSON("/.waitroom/status?room=concert&return_to=" + urlQueryEscape(rt))
		if r.status != http.StatusBadRequest {
			t.Errorf("return_to %q: want 400, got %d %v", rt, r.status, r.json)
		}
	}
	r := v.getJSON("/.waitroom/status?room=concert&return_to=%2Fevents%2F7%3Fseat%3D3")
	if r.state() != "admitted" || r.json["next"] != "/events/7?seat=3" {
		t.Fatalf("same-site return_to: %v", r.json)
	}
}

func TestGateway_PathTricksNeverBypassTheRoom(t *testing.T) {
	up, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	for _, p := range []string{"/EVENTS/1", "//events/1", "/static/../events/1", "/static/%2e%2e/events/1",
		"/static%2F..%2Fevents/1", "/./events/1", "/events", "/Events", "/static/..%2fevents/x"} {
		r := newVisitor(t, base).getJSON(p)
		if r.state() != "waiting" {
			t.Errorf("%s: want the waiting room, got %d %q", p, r.status, r.body)
		}
	}
	if up.count() != 0 {
		t.Fatalf("the upstream saw %v", up.paths)
	}
	if r := newVisitor(t, base).get("/static/app.css"); r.body != "site:/static/app.css" {
		t.Fatalf("bypass path: %d %q", r.status, r.body)
	}
	for _, p := range []string{"/a\\b", "/a%00b"} {
		if r := newVisitor(t, base).get(p); r.status != http.StatusBadRequest {
			t.Errorf("%s: want 400, got %d", p, r.status)
		}
	}
}

func TestGateway_LeaveGivesUpThePlace(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	a, b := newVisitor(t, base), newVisitor(t, base)
	a.getJSON("/events/")
	b.getJSON("/events/")
	if r := a.get("/.waitroom/leave?room=concert"); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET leave: %d", r.status)
	}
	// Another site's page must not make a visitor leave, a sibling site
	// (same-site) included.
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "same-site", "Origin", "https://shop.example.com"},
		{"Origin", "null"},
	} {
		if r := a.do(http.MethodPost, "/.waitroom/leave?room=concert", h...); r.status != http.StatusForbidden || len(r.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("leave with %v: %d %v", h, r.status, r.header.Values("Set-Cookie"))
		}
	}
	if p := a.getJSON("/events/").position(); p != 1 {
		t.Fatalf("a forged leave moved the visitor to %d", p)
	}
	if r := newVisitor(t, base).do(http.MethodPost, "/.waitroom/enter?room=concert", "Sec-Fetch-Site", "same-site"); r.status != http.StatusForbidden {
		t.Fatalf("enter from a sibling site: %d", r.status)
	}
	if r := newVisitor(t, base).do(http.MethodPost, "/.waitroom/enter?room=concert", "Accept", "application/json"); r.status != 200 || r.state() != "waiting" {
		t.Fatalf("enter: %d %v", r.status, r.json)
	}
	if r := newVisitor(t, base).do(http.MethodPost, "/.waitroom/leave?room=concert"); r.status != http.StatusSeeOther || len(r.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("leave without a ticket: %d, Set-Cookie %v", r.status, r.header.Values("Set-Cookie"))
	}
	// The page's own fetch without Fetch Metadata names this origin.
	if r := a.do(http.MethodPost, "/.waitroom/leave?room=concert", "Accept", "application/json", "Origin", base); r.status != 200 || r.state() != "left" {
		t.Fatalf("leave: %d %v", r.status, r.json)
	}
	if p := b.getJSON("/events/").position(); p != 1 {
		t.Fatalf("the visitor behind must move up to 1, got %d", p)
	}
}

// The answer that hands a visitor its ticket must not sit in a shared cache,
// whatever the site said; other answers keep the site's caching.
func TestGateway_TicketNeverCachedPublicly(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, twoInside))
	v := newVisitor(t, base)
	first := v.get("/events/cached")
	cc := first.header.Get("Cache-Control")
	if len(first.header.Values("Set-Cookie")) == 0 || strings.Contains(cc, "public") || !strings.Contains(cc, "private") || !strings.Contains(cc, "max-age=600") {
		t.Fatalf("the response with a new ticket: Cache-Control %q, Set-Cookie %v", cc, first.header.Values("Set-Cookie"))
	}
	second := v.get("/events/cached")
	if len(second.header.Values("Set-Cookie")) != 0 || second.header.Get("Cache-Control") != "public, max-age=600" {
		t.Fatalf("a response without a ticket: Cache-Control %q, Set-Cookie %v", second.header.Get("Cache-Control"), second.header.Values("Set-Cookie"))
	}
	// An app carries its ticket in Waitroom-Token and is handed it back on
	// every proxied answer: each of those is private and varies on it.
	app := newVisitor(t, base)
	app.c.Jar = nil
	token := app.get("/events/").header.Get(waitroom.TokenHeader)
	if token == "" {
		t.Fatal("no Waitroom-Token for a client without cookies")
	}
	r := app.do(http.MethodGet, "/events/cached", waitroom.TokenHeader, token)
	cc, vary := r.header.Get("Cache-Control"), strings.Join(r.header.Values("Vary"), ",")
	if r.header.Get(waitroom.TokenHeader) == "" || strings.Contains(cc, "public") || !strings.Contains(cc, "private") ||
		!strings.Contains(vary, "Cookie") || !strings.Contains(vary, waitroom.TokenHeader) {
		t.Fatalf("an app's admitted answer: Cache-Control %q, Vary %q, token %t", cc, vary, r.header.Get(waitroom.TokenHeader) != "")
	}
}

// A page address too long to travel in return_to must not freeze the
// waiting page: the status URL falls back to the path.
func TestGateway_LongURLStillPolls(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	v := newVisitor(t, base)
	page := v.get("/events/1?q=" + strings.Repeat("x", 3000))
	i := strings.Index(page.body, "/.waitroom/status?")
	if i < 0 {
		t.Fatalf("no status URL on the page")
	}
	status := page.body[i:]
	status = html.UnescapeString(status[:strings.IndexAny(status, "\"'<")])
	status = strings.ReplaceAll(status, `\u0026`, "&")
	t.Logf("status URL: %.120s", status)
	if r := v.getJSON(status); r.status != 200 || r.state() != "waiting" {
		t.Fatalf("polling %.80s: %d %v", status, r.status, r.json)
	}
}

// Only configured rooms' cookies are waitroom's; a site cookie that merely
// shares the prefix reaches the site.
func TestGateway_SiteCookiesWithOurPrefixPass(t *testing.T) {
	var got string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Cookie") }))
	defer site.Close()
	_, base := startGateway(t, gwConfig(site.URL, twoInside))
	newVisitor(t, base).do(http.MethodGet, "/events/", "Cookie", "waitroom_cart=42; waitroom_concert=x; theme=dark")
	if got != "waitroom_cart=42; theme=dark" {
		t.Fatalf("the site received cookies %q", got)
	}
	if r := newVisitor(t, base).get("/.waitroom"); r.status != http.StatusNotFound {
		t.Fatalf("/.waitroom is waitroom's own: %d", r.status)
	}
}

// A waiting JSON answer says when to ask again, in the body and in
// Retry-After, and near the front that is the room's shortest interval.
func TestGateway_RefreshHintInJSONAndHeader(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms\n    page: { refresh: 2s, refresh_max: 20s }"))
	r := newVisitor(t, base).getJSON("/events/")
	if r.state() != "waiting" || r.json["refresh_after"] != float64(2) || r.header.Get("Retry-After") != "2" {
		t.Fatalf("refresh hint: %v, Retry-After %q", r.json, r.header.Get("Retry-After"))
	}
}

// An app without a cookie jar waits and gets in with Waitroom-Token alone,
// and the positions its JSON shows are those of the HTML page.
func TestGateway_TokenOnlyClient(t *testing.T) {
	up, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 50ms"))
	inside := newVisitor(t, base)
	inside.get("/events/1")
	browser := newVisitor(t, base)
	browser.get("/events/1") // first in line, with a cookie
	noJar := &http.Client{Timeout: 30 * time.Second}
	ask := func(path, token string, accept string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Accept", accept)
		if token != "" {
			req.Header.Set("Waitroom-Token", token)
		}
		resp, err := noJar.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := ask("/events/1", "", "application/json")
	token := resp.Header.Get("Waitroom-Token")
	if token == "" || !strings.Contains(body, `"position":2`) || !strings.Contains(body, token) {
		t.Fatalf("first answer to an app: %s (token header %q)", body, token)
	}
	for range 3 {
		resp, body = ask("/events/1", token, "application/json")
		if resp.Header.Get("Waitroom-Token") == "" || !strings.Contains(body, `"position":2`) {
			t.Fatalf("an app polling with its token: %s, token header %q", body, resp.Header.Get("Waitroom-Token"))
		}
	}
	if _, html := ask("/events/1", token, "text/html"); !strings.Contains(html, `id="wr-pos">2<`) {
		t.Fatal("the HTML page shows another position than the JSON")
	}
	inside.get("/events/done")
	// Generous bounds: a tick is 50ms, but a busy machine may hold the
	// admitter back for seconds; what counts is that both get in, in turn.
	// On failure it says where the room stood (it failed once in a
	// fresh-clone CI, not since: the state tells a release not applied
	// from an admitter that did not run).
	for deadline := time.Now().Add(30 * time.Second); browser.getJSON("/.waitroom/status?room=concert").state() != "admitted"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
			up.mu.Lock()
			paths := strings.Join(up.paths, ",")
			up.mu.Unlock()
			t.Fatalf("the browser not admitted within 30s; the room: %v; the site saw %s", m, paths)
		}
	}
	browser.get("/events/done")
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, body = ask("/events/1", token, "application/json")
		if body == "site:/events/1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app never got in: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = app
}
