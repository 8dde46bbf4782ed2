package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// closingRoom is an API room with one place, under the file's catch-all
// route "/" (gwConfig): once its routes go, /closing/ is the site's.
const closingRoom = `{"name":"closing","max_active":1,"tick":"100ms","admit_rate":"600/m","abandon_after":"4s","page":{"title":"Closing","refresh":"1s","refresh_max":"2s"},
 "routes":[{"path":"/closing/","upstream":"site"}]}`

// DELETE of an API room in the middle of a sale never opens its paths:
// the visitor inside goes on reaching the site through every instance,
// the one waiting and every newcomer hear "closed" (not 404, not the
// catch-all route), an override cannot reopen it, and only once the
// session inside ends do its routes go, on every instance. With the
// memory store (one gateway) and with two gateways on one Redis, the
// DELETE sent to the first.
func TestAPIRooms_DeleteNeverOpensPaths(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		up, site := newUpstream(t)
		a, base := startGateway(t, gwConfig(site.URL, "    max_active: 5"))
		checkDeleteHolds(t, up, []*App{a}, []string{base})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		up, site := newUpstream(t)
		cfg := redisConfig(site.URL, "    max_active: 5", srv.Addr(), "closed", "")
		a, baseA, _ := stoppable(t, cfg)
		b, baseB, _ := stoppable(t, cfg)
		checkDeleteHolds(t, up, []*App{a, b}, []string{baseA, baseB})
	})
}

func checkDeleteHolds(t *testing.T, up *upstreamLog, apps []*App, bases []string) {
	admin := newAdmin(t, apps[0])
	if code, _, body := admin.do("POST", "/admin/api/rooms", closingRoom); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, app := range apps {
		waitFor(t, 10*time.Second, func() bool {
			code, _, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/closing", "")
			return code == 200
		})
	}
	// The cookie jar keys cookies by host, not port: one visitor's cookie
	// goes to every gateway on 127.0.0.1.
	in := newVisitor(t, bases[0])
	waitFor(t, 10*time.Second, func() bool { return in.get("/closing/in").body == "site:/closing/in" })
	waiter := newVisitor(t, bases[len(bases)-1])
	if r := waiter.getJSON("/closing/x"); r.state() != "waiting" {
		t.Fatalf("the second visitor of a one-place room: %d %v", r.status, r.json)
	}

	code, v, body := admin.do("DELETE", "/admin/api/rooms/closing", "")
	if code != 202 || v["closing"] != true {
		t.Fatalf("DELETE with a session inside: want 202 closing, got %d %s", code, body)
	}
	if code, v, body := admin.do("GET", "/admin/api/rooms/closing", ""); code != 200 || v["closing"] != true || v["mode"] != "reject" {
		t.Fatalf("the room while closing: %d %s", code, body)
	}
	if code, _, body := admin.do("POST", "/admin/api/rooms", closingRoom); code != 409 {
		t.Fatalf("creating the closing room again: want 409, got %d %s", code, body)
	}
	// An override cannot reopen it.
	if code, _, body := admin.do("PATCH", "/admin/api/rooms/closing", `{"mode":"fifo","max_active":50}`); code != 200 {
		t.Fatalf("override: %d %s", code, body)
	}
	for _, base := range bases {
		waitFor(t, 10*time.Second, func() bool { return newVisitor(t, base).getJSON("/closing/x").state() == "closed" })
	}
	before := up.count()
	for i, base := range bases {
		for j := range 5 {
			path := fmt.Sprintf("/closing/new-%d-%d", i, j)
			if r := newVisitor(t, base).getJSON(path); r.status == 404 || r.state() != "closed" {
				t.Fatalf("a newcomer at %s while closing: %d %s", base, r.status, r.body)
			}
			if r := newVisitor(t, base).get(path); r.status == 404 || strings.HasPrefix(r.body, "site:") {
				t.Fatalf("a browser newcomer at %s while closing: %d %.200s", base, r.status, r.body)
			}
		}
		w := *waiter
		w.base = base
		if r := w.getJSON("/closing/x"); r.state() != "closed" {
			t.Fatalf("the visitor who waited, at %s while closing: %d %v", base, r.status, r.json)
		}
	}
	if n := up.count(); n != before {
		t.Fatalf("%d requests of people not inside reached the site while the room was closing", n-before)
	}
	for _, base := range bases {
		me := *in
		me.base = base
		if r := me.get("/closing/still"); r.body != "site:/closing/still" {
			t.Fatalf("the visitor inside, at %s while closing: %d %.200s", base, r.status, r.body)
		}
	}

	// The session ends: the routes go everywhere, and /closing/ is the
	// catch-all route's.
	if r := in.do("POST", "/.waitroom/leave?room=closing"); r.status >= 400 {
		t.Fatalf("leave: %d %s", r.status, r.body)
	}
	start := time.Now()
	for _, base := range bases {
		waitFor(t, 20*time.Second, func() bool { return newVisitor(t, base).get("/closing/after").body == "site:/closing/after" })
	}
	t.Logf("the routes went on every gateway %v after the last session ended", time.Since(start))
	for _, app := range apps {
		if code, _, body := newAdmin(t, app).do("GET", "/admin/api/rooms/closing", ""); code != 404 {
			t.Fatalf("the room after its sessions ended: %d %s", code, body)
		}
	}
	if code, _, body := admin.do("POST", "/admin/api/rooms", closingRoom); code != 201 {
		t.Fatalf("the name is free again: %d %s", code, body)
	}
}

// DELETE of a paused API room with nobody inside but a line (a pre-queue,
// a paused sale) holds it too: before, the answer was 200 and the next
// request of each person waiting reached the site through the catch-all
// route. The room closes; once its line has gone (told "closed", its
// places dropped after abandon_after), its routes go.
func TestAPIRooms_DeleteWithOnlyALineHolds(t *testing.T) {
	up, site := newUpstream(t)
	a, base := startGateway(t, gwConfig(site.URL, "    max_active: 5"))
	admin := newAdmin(t, a)
	if code, _, body := admin.do("POST", "/admin/api/rooms", closingRoom); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, _, body := admin.do("PATCH", "/admin/api/rooms/closing", `{"mode":"paused"}`); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	var line []*visitor
	for i := range 3 {
		v := newVisitor(t, base)
		v.getJSON(fmt.Sprintf("/closing/%d", i)) // a ticket; the next request places it
		if r := v.getJSON(fmt.Sprintf("/closing/%d", i)); r.state() != "paused" || r.json["position"] != float64(i+1) {
			t.Fatalf("visitor %d of a paused room: %d %v", i, r.status, r.json)
		}
		line = append(line, v)
	}
	before := up.count()
	code, v, body := admin.do("DELETE", "/admin/api/rooms/closing", "")
	if code != 202 || v["closing"] != true {
		t.Fatalf("DELETE with a line and nobody inside: want 202 closing, got %d %s", code, body)
	}
	for i, w := range line {
		if r := w.get(fmt.Sprintf("/closing/%d", i)); r.status == 404 || strings.HasPrefix(r.body, "site:") {
			t.Fatalf("visitor %d who waited, after the DELETE: %d %.200s", i, r.status, r.body)
		}
	}
	if n := up.count(); n != before {
		t.Fatalf("%d requests of people waiting reached the site after the DELETE", n-before)
	}
	// Nobody polls now: the places are dropped after abandon_after (4s)
	// and the routes go.
	waitFor(t, 30*time.Second, func() bool { return newVisitor(t, base).get("/closing/after").body == "site:/closing/after" })
}
