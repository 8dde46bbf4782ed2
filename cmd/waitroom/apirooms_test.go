package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/web"
)

// stoppable starts a gateway and returns a func that stops it, for tests
// that restart gateways.
func stoppable(t *testing.T, yaml string) (*App, string, func()) {
	t.Helper()
	app, err := NewApp(mustParse(t, yaml), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var stopped bool
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		_ = app.Close()
	}
	t.Cleanup(stop)
	return app, "http://" + app.Addr().String(), stop
}

const presale = `{"name":"presale","max_active":0,"tick":"100ms","page":{"title":"Presale"},
 "routes":[{"path":"/presale/","upstream":"site"}]}`

// A room created through the API on A is served by B, survives both
// gateways' restarts, changes everywhere on PUT and closes on DELETE.
func TestAPIRooms_AcrossInstancesAndRestarts(t *testing.T) {
	srv := redistest.Start(t)
	up, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 5", srv.Addr(), "closed", "apirooms")
	a, _, stopA := stoppable(t, cfg)
	_, baseB, stopB := stoppable(t, cfg)
	admin := newAdmin(t, a)
	if code, v, body := admin.do("POST", "/admin/api/rooms", presale); code != 201 || v["source"] != "api" {
		t.Fatalf("create: %d %s", code, body)
	}
	start := time.Now()
	waitFor(t, 2*time.Second, func() bool { return newVisitor(t, baseB).getJSON("/presale/x").state() == "waiting" })
	t.Logf("instance B served the new room after %v", time.Since(start))
	w := newVisitor(t, baseB)
	if r := w.getJSON("/presale/x"); r.json["room"] != "presale" {
		t.Fatalf("B: %v", r.json)
	}
	w.getJSON("/presale/x")
	stopA()
	stopB()
	a2, baseA2, _ := stoppable(t, cfg)
	_, baseB2, _ := stoppable(t, cfg)
	for _, base := range []string{baseA2, baseB2} {
		if r := newVisitor(t, base).getJSON("/presale/x"); r.state() != "waiting" {
			t.Fatalf("after both restarted, %s: %v", base, r.json)
		}
	}
	admin = newAdmin(t, a2)
	replaced := strings.Replace(strings.Replace(presale, `"name":"presale",`, "", 1), `"max_active":0`, `"max_active":5`, 1)
	if code, v, body := admin.do("PUT", "/admin/api/rooms/presale", replaced); code != 200 || v["configured"].(map[string]any)["max_active"].(float64) != 5 {
		t.Fatalf("replace: %d %s", code, body)
	}
	before := up.count()
	in := newVisitor(t, baseB2)
	waitFor(t, 3*time.Second, func() bool { return in.get("/presale/in").body == "site:/presale/in" })
	if up.count() == before {
		t.Fatal("nobody reached the site after max_active went up")
	}
	if code, _, body := admin.do("DELETE", "/admin/api/rooms/presale", ""); code != 202 { // people inside: it closes first
		t.Fatalf("delete: %d %s", code, body)
	}
	// The visitor inside finishes the session; a newcomer hears "closed"
	// (TestAPIRooms_DeleteNeverOpensPaths follows it to the end).
	waitFor(t, 3*time.Second, func() bool { return newVisitor(t, baseB2).getJSON("/presale/x").state() == "closed" })
	if r := in.get("/presale/in"); r.body != "site:/presale/in" {
		t.Fatalf("the visitor inside, after DELETE: %d %.200s", r.status, r.body)
	}
}

// Bad bodies get 400 naming the field; a room of the file and a route in
// use get 409.
func TestAPIRooms_Refusals(t *testing.T) {
	_, site := newUpstream(t)
	app, _ := startGateway(t, gwConfig(site.URL, "    max_active: 5"))
	admin := newAdmin(t, app)
	tests := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/admin/api/rooms", `{"name":"x","max_active":-1,"routes":[{"path":"/x/","upstream":"site"}]}`, 400, "max_active"},
		{"POST", "/admin/api/rooms", `{"name":"x","admit_rate":"lots","routes":[{"path":"/x/","upstream":"site"}]}`, 400, "admit_rate"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/x/","upstream":"nowhere"}]}`, 400, "upstream"},
		{"POST", "/admin/api/rooms", `{"name":"x","max_activ":3,"routes":[{"path":"/x/","upstream":"site"}]}`, 400, "max_activ"},
		{"POST", "/admin/api/rooms", `{"name":"x","page":{"template":"/etc/passwd"},"routes":[{"path":"/x/","upstream":"site"}]}`, 400, "page.template"},
		{"POST", "/admin/api/rooms", `{"name":"x"}`, 400, "routes"},
		{"POST", "/admin/api/rooms", `{"name":"Bad Name","routes":[{"path":"/x/","upstream":"site"}]}`, 400, "name"},
		{"POST", "/admin/api/rooms", `{"name":"concert","routes":[{"path":"/x/","upstream":"site"}]}`, 409, "configuration file"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/events/","upstream":"site"}]}`, 409, "same host and path"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/x/","upstream":"site"},{"path":"/festival/","upstream":"site"}]}`, 409, "routes[1]: same host and path"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/dup/","upstream":"site"},{"path":"/dup/","upstream":"site"}]}`, 400, "routes[1]: same host and path as routes[0] of this room"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/EVENTS/checkout/","upstream":"site"}]}`, 409, "routes[0].path: inside room concert's route /events/"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/.WaitRoom/x/","upstream":"site"}]}`, 400, "routes[0].path: /.waitroom/ is waitroom's own"},
		{"POST", "/admin/api/rooms", `{"name":"x","tick":"1ms","routes":[{"path":"/x/","upstream":"site"}]}`, 400, "tick: must be at least 50ms"},
		{"POST", "/admin/api/rooms", `{"name":"x","max_active":-1,"routes":[{"path":"/events/","upstream":"site"}]}`, 409, "max_active: must be >= 0"},
		{"POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/x/","upstream":"site"},{"path":"/y/","upstream":"nowhere"}]}`, 400, "routes[1].upstream: unknown upstream"},
		{"PUT", "/admin/api/rooms/concert", `{"routes":[{"path":"/x/","upstream":"site"}]}`, 409, "configuration file"},
		{"PUT", "/admin/api/rooms/nobody", `{"routes":[{"path":"/x/","upstream":"site"}]}`, 404, "no room"},
		{"DELETE", "/admin/api/rooms/concert", ``, 409, "configuration file"},
		{"DELETE", "/admin/api/rooms/nobody", ``, 404, "no room"},
	}
	for _, tt := range tests {
		code, _, body := admin.do(tt.method, tt.path, tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s %s: %d %s; want %d naming %q", tt.method, tt.path, tt.body, code, body, tt.code, tt.want)
		}
	}
	if code, _, body := admin.do("POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/x/","upstream":"site"}]}`); code != 201 {
		t.Fatalf("a good room: %d %s", code, body)
	}
	if code, _, body := admin.do("POST", "/admin/api/rooms", `{"name":"x","routes":[{"path":"/y/","upstream":"site"}]}`); code != 409 {
		t.Fatalf("the same name again: %d %s", code, body)
	}
	// A room that sorts before x and takes x's route must not push x out
	// of service: compose leaves out the later name of two that collide.
	if code, _, body := admin.do("POST", "/admin/api/rooms", `{"name":"a","routes":[{"path":"/x/","upstream":"site"}]}`); code != 409 || !strings.Contains(body, "room x") {
		t.Fatalf("a room taking x's route: %d %s", code, body)
	}
	code, v, _ := admin.do("GET", "/admin/api/rooms", "")
	sources := map[string]string{}
	for _, r := range v["rooms"].([]any) {
		m := r.(map[string]any)
		sources[m["name"].(string)] = m["source"].(string)
	}
	if code != 200 || sources["x"] != "api" || sources["concert"] != "yaml" {
		t.Fatalf("sources: %v", sources)
	}
}

// compose owns an API room's problems by their keys and keeps their
// kinds: the route that takes a pair of the file's is a Conflict, a bad
// value Invalid, each keyed as in the room's body. The kinds come from
// the router and the room, not from the words.
func TestCompose_BlamesByKeyAndKeepsKinds(t *testing.T) {
	t.Parallel()
	file := mustParse(t, gwConfig("http://127.0.0.1:9", "    max_active: 5"))
	defs := map[string]apiRoom{}
	for name, body := range map[string]string{
		"bad":   `{"max_active":-1,"routes":[{"path":"/bad/","upstream":"site"}]}`,
		"clash": `{"routes":[{"path":"/ok/","upstream":"site"},{"path":"/events/","upstream":"site"}]}`,
		"good":  `{"routes":[{"path":"/good/","upstream":"site"}]}`,
	} {
		d, err := decodeAPIRoom([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		defs[name] = d
	}
	c, err := compose(file, defs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, problems := range c.skipped {
		for _, p := range conf.Split(problems) {
			got[name+" "+p.Key()] = p.Kind.String()
		}
	}
	want := map[string]string{"bad max_active": "invalid", "clash routes[1]": "conflict"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("skipped by key: %v, want %v", got, want)
	}
	if text := conf.Lines("", c.skipped["clash"]); len(text) != 1 || !strings.HasPrefix(text[0], "routes[1]: same host and path as the file's routes[0]") {
		t.Errorf("the clash reads %q", text)
	}
	if r, ok := refusal(c.skipped["clash"]).(*web.RoomProblems); !ok || r.Kind != conf.Conflict {
		t.Errorf("refusal of the clash: %#v", r)
	}
}

// "Waitroom-Command: close" from the site closes the room on every
// instance within a tick; people inside keep going; "open" reopens.
func TestCommand_CloseAndOpen(t *testing.T) {
	srv := redistest.Start(t)
	site := http.NewServeMux()
	site.HandleFunc("/events/soldout", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Waitroom-Command", "close")
		fmt.Fprint(w, "sold out")
	})
	site.HandleFunc("/events/restock", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Waitroom-Command", "open")
		fmt.Fprint(w, "restocked")
	})
	site.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "site:"+r.URL.Path) })
	up := newHTTPServer(t, site)
	room := "    max_active: 50\n    tick: 200ms\n    page: { closed_heading: \"Sold out\" }"
	cfg := redisConfig(up, room, srv.Addr(), "closed", "")
	_, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	inside := newVisitor(t, a)
	r := inside.get("/events/soldout")
	if r.body != "sold out" || r.header.Get("Waitroom-Command") != "" {
		t.Fatalf("the closing answer: %q, header %q", r.body, r.header.Get("Waitroom-Command"))
	}
	start := time.Now()
	for _, base := range []string{a, b} {
		waitFor(t, 2*time.Second, func() bool { return newVisitor(t, base).getJSON("/events/1").state() == "closed" })
	}
	t.Logf("closed on both instances after %v", time.Since(start))
	if p := newVisitor(t, b).get("/events/1"); !strings.Contains(p.body, "Sold out") {
		t.Fatalf("the closed page lacks the room's words:\n%.500s", p.body)
	}
	if r := inside.get("/events/2"); r.body != "site:/events/2" {
		t.Fatalf("a visitor inside after the close: %d %q", r.status, r.body)
	}
	inside.get("/events/restock")
	// Visitors who came while it was closing hold tickets ahead: a
	// returning visitor goes in once a tick reaches it.
	for _, base := range []string{a, b} {
		v := newVisitor(t, base)
		waitFor(t, 3*time.Second, func() bool { return v.get("/events/3").body == "site:/events/3" })
	}
}

// newHTTPServer serves h on loopback until the test ends; its URL.
func newHTTPServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
