package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// templateConfig is a gateway whose events each get a room from the
// template "event-{id}".
func templateConfig(upstream, template string) string {
	return fmt.Sprintf(`
listen: "127.0.0.1:0"
admin: { listen: "127.0.0.1:0", token: %[4]q }
log: { level: error }
cookie: { secure: false, hash_keys: [%[3]q], block_keys: [%[3]q] }
upstreams:
  site: { url: %[1]q, timeout: 2s }
rooms:
  "event-{id}":
%[2]s
    page: { title: "Concert {id}", refresh: 1s }
routes:
  - { path: "/events/{id}/", upstream: site, room: "event-{id}" }
  - { path: /, upstream: site }
`, upstream, template, testKey, adminToken)
}

// liveRooms lists the rooms the admin API shows.
func liveRooms(t *testing.T, app *App) []string {
	t.Helper()
	code, v, body := newAdmin(t, app).do("GET", "/admin/api/rooms", "")
	if code != 200 {
		t.Fatalf("admin rooms: %d %s", code, body)
	}
	var names []string
	for _, r := range v["rooms"].([]any) {
		m := r.(map[string]any)
		names = append(names, m["name"].(string))
		if m["template"] != "event-{id}" || m["source"] != "template" {
			t.Fatalf("a filled room as the admin API shows it: %v", m)
		}
	}
	return names
}

// Each event gets its own room on the template's settings; paths whose
// value cannot name a room never make one and never reach the site.
func TestTemplate_OneRoomPerEvent(t *testing.T) {
	up, site := newUpstream(t)
	app, base := startGateway(t, templateConfig(site.URL, "    max_active: 1\n    tick: 100ms"))
	a, b, c := newVisitor(t, base), newVisitor(t, base), newVisitor(t, base)
	if r := a.get("/events/1/seats"); r.body != "site:/events/1/seats" {
		t.Fatalf("first visitor of event 1: %d %q", r.status, r.body)
	}
	if r := b.getJSON("/events/1/seats"); r.state() != "waiting" || r.json["room"] != "event-1" {
		t.Fatalf("second visitor of event 1: %v", r.json)
	}
	if r := c.get("/events/2/"); r.body != "site:/events/2/" {
		t.Fatalf("first visitor of event 2: %d %q", r.status, r.body)
	}
	page := newVisitor(t, base).get("/EVENTS/1/") // one room per event, whatever the case
	if !strings.Contains(page.body, "Concert 1") {
		t.Fatalf("the waiting page of event 1 lacks its filled title:\n%.400s", page.body)
	}
	before := up.count()
	for _, p := range []string{"/events/a%2Fb/", "/events/" + strings.Repeat("x", 65) + "/", "/events/caf%C3%A9/", "/events/123.json"} {
		if r := newVisitor(t, base).get(p); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
	if r := newVisitor(t, base).get("/events/../1/"); r.body != "site:/1/" {
		t.Errorf("/events/../1/ is /1/, outside the template: %d %q", r.status, r.body)
	}
	if up.count() != before+1 {
		t.Errorf("refused paths reached the site: %d requests", up.count()-before)
	}
	if got := strings.Join(liveRooms(t, app), ","); got != "event-1,event-2" {
		t.Fatalf("rooms in service: %s", got)
	}
}

// max_rooms: 3 → the fourth event's visitor gets its ticket, and the 503
// page when it comes back with it (its room would be the fourth to count),
// and nobody's place in the first three changes.
func TestTemplate_MaxRooms(t *testing.T) {
	_, site := newUpstream(t)
	app, base := startGateway(t, templateConfig(site.URL, "    max_active: 0\n    tick: 100ms\n    max_rooms: 3"))
	var waiting []*visitor
	for id := 1; id <= 3; id++ {
		v := newVisitor(t, base)
		if r := v.getJSON(fmt.Sprintf("/events/%d/", id)); r.state() != "waiting" {
			t.Fatalf("event %d: %v", id, r.json)
		}
		v.getJSON(fmt.Sprintf("/events/%d/", id)) // takes its place
		waiting = append(waiting, v)
	}
	fourth := newVisitor(t, base)
	if r := fourth.getJSON("/events/4/"); r.state() != "waiting" {
		t.Fatalf("a fourth event's newcomer: %d %v, want its ticket", r.status, r.json)
	}
	r := fourth.get("/events/4/")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("a fourth event, back with its ticket: %d %v", r.status, r.header)
	}
	for i, v := range waiting {
		if p := v.getJSON(fmt.Sprintf("/events/%d/", i+1)).position(); p != 1 {
			t.Fatalf("event %d: the visitor moved to %d", i+1, p)
		}
	}
	if m := grepLines(metricsText(t, app), `waitroom_joins_refused_total{reason="rooms",room="event-{id}"}`); !strings.HasSuffix(m, " 1") {
		t.Fatalf("the overflow is not counted: %q", m)
	}
}

// An idle, empty room is forgotten by the gateway and its Redis keys
// expire.
func TestTemplate_IdleRoomDisappears(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := strings.Replace(templateConfig(site.URL, "    max_active: 5\n    tick: 100ms\n    idle_after: 2s"), "routes:",
		fmt.Sprintf("store: { kind: redis, redis: { addrs: [%q], key_prefix: idle } }\nroutes:", srv.Addr()), 1)
	app, base := startGateway(t, cfg)
	v := newVisitor(t, base)
	if r := v.get("/events/9/"); r.body != "site:/events/9/" {
		t.Fatalf("visit: %d %q", r.status, r.body)
	}
	if r := v.do(http.MethodPost, "/.waitroom/leave?room=event-9", "Sec-Fetch-Site", "same-origin"); r.status != http.StatusSeeOther {
		t.Fatalf("leave: %d", r.status)
	}
	keys := func() []string {
		ks, err := srv.Client().Keys(context.Background(), "{idle:event-9}*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	if len(keys()) == 0 {
		t.Fatal("the room left no keys in Redis to begin with")
	}
	start := time.Now()
	waitFor(t, 10*time.Second, func() bool { return len(liveRooms(t, app)) == 0 })
	t.Logf("forgotten by the gateway after %v", time.Since(start))
	waitFor(t, 10*time.Second, func() bool { return len(keys()) == 0 })
	t.Logf("its keys gone from Redis after %v", time.Since(start))
}

// A thousand events visited once each: the metrics endpoint's series do
// not grow with them.
func TestTemplate_MetricsDoNotGrowWithEvents(t *testing.T) {
	_, site := newUpstream(t)
	app, base := startGateway(t, templateConfig(site.URL, "    max_active: 0\n    tick: 1s\n    max_rooms: 2000\n    create_limit: unlimited"))
	count := func() int {
		n := 0
		for _, l := range strings.Split(metricsText(t, app), "\n") {
			if strings.HasPrefix(l, "waitroom_") {
				n++
			}
		}
		return n
	}
	for id := range 10 {
		newVisitor(t, base).get(fmt.Sprintf("/events/warm%d/", id))
	}
	before := count()
	c := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	for id := range 1000 {
		res, err := c.Get(fmt.Sprintf("%s/events/e%d/", base, id))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	t.Logf("1,000 events visited in %v", time.Since(start))
	time.Sleep(1500 * time.Millisecond) // a sweep publishes the template's sums
	after := count()
	body := metricsText(t, app)
	if after > before+5 || strings.Contains(body, `room="event-e`) {
		t.Fatalf("series grew from %d to %d with the events:\n%s", before, after, grepLines(body, "event-e"))
	}
	if !strings.Contains(body, `waitroom_template_rooms{room="event-{id}"} 1010`) {
		t.Fatalf("template rooms gauge:\n%s", grepLines(body, "template_rooms"))
	}
}

// A bypass rule on a template's route counts under the template's name,
// as the gate's own answers do: the series must not grow with the events
// a client names.
func TestTemplate_BypassCountsUnderTheTemplate(t *testing.T) {
	_, site := newUpstream(t)
	cfg := templateConfig(site.URL, "    max_active: 0") + "bypass: { cidrs: [127.0.0.1/32] }\n"
	app, base := startGateway(t, cfg)
	for _, id := range []string{"aaa", "bbb", "ccc"} {
		if r := newVisitor(t, base).get("/events/" + id + "/"); r.status != 200 {
			t.Fatalf("a bypassed event's page: %d", r.status)
		}
	}
	body := metricsText(t, app)
	if strings.Contains(body, `room="event-aaa"`) || !strings.Contains(body, `waitroom_requests_total{decision="bypass",room="event-{id}"} 3`) {
		t.Fatalf("bypass series:\n%s", grepLines(body, "waitroom_requests_total"))
	}
}

// What a templated room costs: the gateway's heap and Redis's memory per
// room a single visit made, and the store calls a thousand rooms with a
// session inside each cost each second (each ticks; an empty one sleeps:
// TestTemplate_IdleRoomsCostRedisNothing).
func TestTemplate_CostPerRoom(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := strings.Replace(templateConfig(site.URL, "    max_active: 5\n    tick: 1s\n    max_rooms: 2000\n    create_limit: unlimited"), "routes:",
		fmt.Sprintf("store: { kind: redis, redis: { addrs: [%q], key_prefix: cost } }\nroutes:", srv.Addr()), 1)
	_, base := startGateway(t, cfg)
	rdb, ctx := srv.Client(), context.Background()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	redisMem := func() int64 {
		info, err := rdb.Info(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
				var n int64
				fmt.Sscan(v, &n)
				return n
			}
		}
		return 0
	}
	const n = 1000
	h0, r0 := heap(), redisMem()
	c := &http.Client{Timeout: 10 * time.Second}
	for id := range n {
		res, err := c.Get(fmt.Sprintf("%s/events/c%d/", base, id))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	time.Sleep(2500 * time.Millisecond) // every room ticked at least twice
	h1, r1 := heap(), redisMem()
	calls := func() int64 {
		info, _ := rdb.Info(ctx, "stats").Result()
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, "total_commands_processed:"); ok {
				var n int64
				fmt.Sscan(v, &n)
				return n
			}
		}
		return 0
	}
	c0 := calls()
	time.Sleep(3 * time.Second)
	perSecond := float64(calls()-c0) / 3
	t.Logf("%d rooms, one visitor each: gateway heap +%.1f KiB per room, Redis +%.0f B per room; %.0f Redis commands a second while they idle (%.1f per room)",
		n, float64(int64(h1)-int64(h0))/n/1024, float64(r1-r0)/n, perSecond, perSecond/n)
	if float64(int64(h1)-int64(h0))/n > 256<<10 || (r1-r0)/n > 16<<10 {
		t.Fatalf("a room costs more than bounded: heap %d, Redis %d bytes", (int64(h1)-int64(h0))/n, (r1-r0)/n)
	}
}

// The auth endpoint refuses what the front door refuses: a template
// path with an escaped slash in its value names no room, so it is never
// allowed (2xx) and makes no room; nginx is told 401 (it takes anything
// else for an error), the others 404.
func TestTemplate_AuthRefusesEncodedSlash(t *testing.T) {
	_, site := newUpstream(t)
	app, base := startGateway(t, trustLoopback(templateConfig(site.URL, "    max_active: 100")))
	const uri = "/events/a%2Fb/"
	for _, c := range []struct {
		name string
		path string
		hdr  []string
		want int
	}{
		{"nginx", "/.waitroom/auth", []string{"X-Original-URI", uri, "X-Original-Method", "GET"}, http.StatusUnauthorized},
		{"traefik", "/.waitroom/auth", []string{"X-Forwarded-Uri", uri, "X-Forwarded-Method", "GET"}, http.StatusNotFound},
		{"envoy", "/.waitroom/auth" + uri, nil, http.StatusNotFound},
	} {
		if r := newVisitor(t, base).do(http.MethodGet, c.path, c.hdr...); r.status != c.want {
			t.Errorf("%s: %d, want %d", c.name, r.status, c.want)
		}
	}
	if code, v, body := newAdmin(t, app).do("GET", "/admin/api/rooms", ""); code != 200 || len(v["rooms"].([]any)) != 0 {
		t.Fatalf("rooms after refused auth requests: %d %s", code, body)
	}
}
