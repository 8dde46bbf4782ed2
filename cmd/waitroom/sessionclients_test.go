package main

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// One admitted ticket serves one person. With session_clients 1, a copy of
// an admitted ticket used from another seat of the same /24 (a PC-bang, a
// campus) is refused with 409 "shared", through any instance, while its
// owner is served; the site never sees the copy. With the default (2), a
// phone whose carrier moves it from address to address inside its /24 and
// then to another network is served at every step, and a copy used beside
// it is refused.
func TestSession_OneTicketServesOnePerson(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		up, site := newUpstream(t)
		room := "    max_active: 5\n    session_clients: 1\n    abandon_after: 2s\n    tick: 50ms\n    page: { refresh: 1s, refresh_max: 1s }"
		cfg := trustedConfig(site.URL, room, addr)
		_, a := startGateway(t, cfg)
		b := a
		if addr != "" {
			_, b = startGateway(t, cfg) // a second instance on the same Redis
		}
		owner := newVisitor(t, a)
		if r := owner.from("203.0.113.10", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
			t.Fatalf("the owner: %d %q", r.status, r.body)
		}
		copied := "waitroom_concert=" + owner.cookieValue("concert")
		for i, base := range []string{a, b} {
			r := newVisitor(t, base).from("203.0.113.11", http.MethodGet, "/events/1", "Cookie", copied)
			retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
			if r.status != http.StatusConflict || r.state() != "shared" || r.header.Get("Set-Cookie") != "" || retry < 1 || retry > 6 {
				t.Fatalf("the copy from the same /24 through instance %d: %d %v (Retry-After %q), want 409 shared within 6s, no new ticket",
					i, r.status, r.json, r.header.Get("Retry-After"))
			}
			if r := owner.from("203.0.113.10", http.MethodGet, "/events/2"); r.body != "site:/events/2" {
				t.Fatalf("the owner beside the copy: %d %q", r.status, r.body)
			}
		}
		up.mu.Lock()
		visitors := len(up.visitors)
		up.mu.Unlock()
		if visitors != 1 {
			t.Fatalf("the site saw %d visitor ids, want the owner's only", visitors)
		}

		// The default: a phone moving, and a copy beside it.
		_, c := startGateway(t, trustedConfig(site.URL, "    max_active: 5\n    abandon_after: 2s\n    tick: 50ms\n    page: { refresh: 1s, refresh_max: 1s }", addr))
		phone := newVisitor(t, c)
		if r := phone.from("198.51.100.20", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
			t.Fatalf("the phone: %d %q", r.status, r.body)
		}
		copied = "waitroom_concert=" + phone.cookieValue("concert")
		if r := phone.from("198.51.100.77", http.MethodGet, "/events/2"); r.body != "site:/events/2" {
			t.Fatalf("the phone on its carrier's next address: %d %v", r.status, r.json)
		}
		if r := newVisitor(t, c).from("198.51.100.99", http.MethodGet, "/events/1", "Cookie", copied); r.status != http.StatusConflict {
			t.Fatalf("a copy beside the phone's two addresses: %d %v, want 409", r.status, r.json)
		}
		// The phone stays on .77; its first address falls quiet, and its move
		// to another network (Wi-Fi to LTE) is served at once.
		moved := time.Now()
		for time.Since(moved) < 6*time.Second {
			if r := phone.from("198.51.100.77", http.MethodGet, "/events/3"); r.body != "site:/events/3" {
				t.Fatalf("the phone on its second address: %d %v", r.status, r.json)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if r := phone.from("192.0.2.33", http.MethodGet, "/events/4"); r.body != "site:/events/4" {
			t.Fatalf("the phone on another network after its first address fell quiet: %d %v", r.status, r.json)
		}
		if r := phone.from("198.51.100.77", http.MethodGet, "/events/5"); r.body != "site:/events/5" {
			t.Fatalf("the phone back on its second address: %d %v", r.status, r.json)
		}
	})
}
