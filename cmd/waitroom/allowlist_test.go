package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A template with an allow list fills only the rooms it names. Junk ids,
// through the route, the status endpoint, enter and Traefik's joining auth
// request, from many networks, are answered 404 (status: no room) and
// make no room, spend no create_limit and take no ticket; listed events
// are served, their visitors placed. On memory and on two gateways on one
// Redis.
func TestTemplate_AllowListRefusesUnknownIDs(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		cfg, _ := junkConfig(site.URL, "    max_active: 0\n    create_limit: 2/m\n    allow: [event-1001, event-1002]", addr)
		app, a := startGateway(t, cfg)
		apps, bases := []*App{app}, []string{a}
		if addr != "" {
			app2, b := startGateway(t, cfg)
			apps, bases = append(apps, app2), append(bases, b)
		}
		for i := range 50 {
			base := bases[i%len(bases)]
			v := newVisitor(t, base)
			client := fmt.Sprintf("203.0.%d.9", i%3)
			if r := v.from(client, http.MethodGet, fmt.Sprintf("/events/junk%d/", i)); r.status != http.StatusNotFound || r.header.Get("Set-Cookie") != "" {
				t.Fatalf("a junk id through the route: %d %v, want 404 and no ticket", r.status, r.json)
			}
			if r := v.from(client, http.MethodGet, fmt.Sprintf("/.waitroom/status?room=event-junk%d", i)); r.state() == "waiting" || r.state() == "none" && r.status == http.StatusOK && r.header.Get("Set-Cookie") != "" {
				t.Fatalf("a junk id's status: %d %v", r.status, r.json)
			}
			if r := v.from(client, http.MethodPost, fmt.Sprintf("/.waitroom/enter?room=event-junk%d", i), "Sec-Fetch-Site", "same-origin"); r.status != http.StatusNotFound {
				t.Fatalf("a junk id's enter: %d %v, want 404", r.status, r.json)
			}
			if r := v.from(client, http.MethodGet, "/.waitroom/auth", "X-Forwarded-Uri", fmt.Sprintf("/events/junk%d/", i), "X-Forwarded-Method", "GET"); r.status != http.StatusNotFound {
				t.Fatalf("a junk id through the joining auth request: %d %v, want 404", r.status, r.json)
			}
		}
		if n := roomsInService(t, apps); n != 0 {
			t.Fatalf("junk ids made %d rooms, want none", n)
		}
		// A listed event is served, even from a network that sent junk past
		// its create_limit: the junk spent none of it.
		for i, id := range []string{"1001", "1002"} {
			v := newVisitor(t, bases[0])
			path := "/events/" + id + "/"
			if r := v.from("203.0.0.9", http.MethodGet, path); r.status != http.StatusOK || r.state() != "waiting" {
				t.Fatalf("listed event %s, first request: %d %v", id, r.status, r.json)
			}
			v.base = bases[len(bases)-1]
			if r := v.from("203.0.0.9", http.MethodGet, path); r.state() != "waiting" || r.position() != 1 {
				t.Fatalf("listed event %s, back with its ticket: %d %v (event %d)", id, r.status, r.json, i)
			}
			auth := newVisitor(t, bases[0]).from("203.0.1.9", http.MethodGet, "/.waitroom/auth", "X-Forwarded-Uri", path, "X-Forwarded-Method", "GET")
			if auth.status != http.StatusTooManyRequests || auth.state() != "waiting" {
				t.Fatalf("listed event %s through the joining auth request: %d %v, want 429 waiting", id, auth.status, auth.json)
			}
		}
	})
}

// An allow list names rooms its template fills, and belongs to templates.
func TestConfig_AllowList(t *testing.T) {
	_, err := parseConfig("t.yaml", []byte(templateConfig("http://127.0.0.1:1", "    allow: [event-1, concert-2, \"event-\"]")))
	if err == nil || !strings.Contains(err.Error(), `allow[1]: "concert-2" is not a room "event-{id}" fills`) ||
		!strings.Contains(err.Error(), `allow[2]`) || strings.Contains(err.Error(), `allow[0]`) {
		t.Fatalf("an allow list with names the template does not fill: %v", err)
	}
	_, err = parseConfig("t.yaml", []byte(gwConfig("http://127.0.0.1:1", "    allow: [concert]")))
	if err == nil || !strings.Contains(err.Error(), "rooms.concert.allow: applies to a room template") {
		t.Fatalf("an allow list on a plain room: %v", err)
	}
}
