package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// echoPassSite is a careless site: it sends the pass it was given back in
// its answer, as a header and as a trailer (a debug page, a framework that
// echoes request headers), and records the passes it got.
type echoPassSite struct {
	mu     sync.Mutex
	passes []string
}

func (s *echoPassSite) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.passes...)
}

func newEchoPassSite(t *testing.T) (*echoPassSite, string) {
	s := &echoPassSite{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.Header.Get("Waitroom-Pass")
		if p != "" {
			s.mu.Lock()
			s.passes = append(s.passes, p)
			s.mu.Unlock()
		}
		w.Header().Set("Trailer", "Waitroom-Pass")
		w.Header().Set("Waitroom-Pass", p)
		fmt.Fprint(w, "site:"+r.URL.Path)
		w.Header().Set("Waitroom-Pass", p)
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// noPass fails when an answer to a visitor carries a pass, in a header, a
// trailer or its body (passes are compared by value, never printed).
func noPass(t *testing.T, what string, r reply, passes []string) {
	t.Helper()
	if len(r.header.Values("Waitroom-Pass")) > 0 {
		t.Errorf("%s: the answer (%d) carries a Waitroom-Pass header", what, r.status)
	}
	for _, p := range passes {
		if p != "" && (strings.Contains(r.body, p) || strings.Contains(fmt.Sprint(r.header), p)) {
			t.Errorf("%s: the answer (%d) carries a pass the site was given", what, r.status)
		}
	}
}

// No answer to a visitor ever carries Waitroom-Pass: not the proxied
// answer of a site that echoes it (header and trailer), not the waiting
// page, its JSON, status, enter or leave, and not the auth endpoint,
// which answers only server.trusted_proxies (a client's own peer gets
// 403) and, through Debian's nginx with the shipped config, is out of a
// client's reach in every spelling (404), while nginx's own subrequest
// still gets the pass to the site.
func TestPass_NeverReachesVisitor(t *testing.T) {
	site, url := newEchoPassSite(t)
	key := filepath.Join(t.TempDir(), "pass.pem")
	writeEd25519(t, key)
	cfg := gwConfig(url, "    max_active: 1\n    tick: 50ms") +
		fmt.Sprintf("server: { trusted_proxies: [127.0.0.1/32] }\npass: { key_files: [%q] }\n", key)
	app, gateway := startGateway(t, cfg)

	// Straight to waitroom, which proxies.
	in := newVisitor(t, gateway)
	r := in.get("/events/1")
	if r.body != "site:/events/1" || len(site.got()) != 1 {
		t.Fatalf("the admitted visitor: %d %q, %d passes at the site", r.status, r.body, len(site.got()))
	}
	noPass(t, "proxied answer", r, site.got())
	noPass(t, "proxied JSON answer", in.getJSON("/events/2"), site.got())
	waiting := newVisitor(t, gateway)
	for _, c := range []struct {
		name string
		v    *visitor
		m    string
		path string
		hdr  []string
	}{
		{"waiting page", waiting, "GET", "/events/1", nil},
		{"waiting JSON", waiting, "GET", "/events/1", []string{"Accept", "application/json"}},
		{"waiting POST", waiting, "POST", "/events/1", nil},
		{"status, waiting", waiting, "GET", "/.waitroom/status?room=concert", nil},
		{"status, inside", in, "GET", "/.waitroom/status?room=concert", nil},
		{"enter, inside", in, "GET", "/.waitroom/enter?room=concert&return_to=/events/1", nil},
		{"enter, waiting", waiting, "GET", "/.waitroom/enter?room=concert&return_to=/events/1", nil},
		{"jwks", in, "GET", "/.waitroom/jwks.json", nil},
		{"leave", in, "POST", "/.waitroom/leave?room=concert", nil},
	} {
		noPass(t, c.name, c.v.do(c.m, c.path, c.hdr...), site.got())
	}

	// The auth endpoint from a peer not in server.trusted_proxies: the
	// test's client on 127.0.0.2, waitroom trusting 127.0.0.1 only.
	other := newVisitor(t, gateway)
	other.c.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}).DialContext}
	other.get("/events/1") // a ticket of its own, waiting or inside
	for _, hdr := range [][]string{
		{"X-Forwarded-Uri", "/events/1", "X-Forwarded-Method", "GET"},
		{"X-Original-URI", "/events/1", "X-Original-Method", "GET"},
	} {
		if r := other.do("GET", "/.waitroom/auth", hdr...); r.status != http.StatusForbidden || !strings.Contains(r.body, "trusted_proxies") {
			t.Errorf("auth endpoint, an untrusted peer (%s): %d %q", hdr[0], r.status, r.body)
		} else {
			noPass(t, "auth endpoint, untrusted peer", r, site.got())
		}
	}
	if r := other.do("GET", "/.waitroom/auth/events/1"); r.status != http.StatusForbidden {
		t.Errorf("auth endpoint Envoy style, an untrusted peer: %d", r.status)
	}

	// Through nginx with the shipped config: the site gets the pass of
	// nginx's subrequest; the client never does, however it asks.
	base := startNginx(t, url, gateway)
	room := 10
	if err := app.store.SetOverride(context.Background(), "concert", waitroom.Override{MaxActive: &room}); err != nil {
		t.Fatal(err)
	}
	before := len(site.got())
	v := newVisitor(t, base)
	v.get("/events/3")
	v.waitAdmitted("concert", 30*time.Second)
	r = v.get("/events/3")
	if r.body != "site:/events/3" || len(site.got()) <= before {
		t.Fatalf("through nginx, the admitted visitor: %d %q (%d passes at the site)", r.status, r.body, len(site.got())-before)
	}
	noPass(t, "through nginx, proxied answer", r, site.got())
	for _, path := range []string{
		"/.waitroom/auth", "/.waitroom/auth/events/3", "/.waitroom//auth", "/.waitroom/%61uth",
		"/.waitroom/./auth/events/3", "/.waitroom/auth?x=1", "/.waitroom/auth;x/events/3", "/.WAITROOM/auth/events/3",
	} {
		for _, hdr := range [][]string{nil, {"X-Original-URI", "/events/3", "X-Original-Method", "GET"}, {"X-Forwarded-Uri", "/events/3"}} {
			r := v.do("GET", path, hdr...)
			if r.status/100 == 2 {
				t.Errorf("through nginx, %s (%v): %d", path, hdr, r.status)
			}
			noPass(t, "through nginx, "+path, r, site.got())
		}
	}
	for _, p := range []string{"/.waitroom/status?room=concert", "/.waitroom/jwks.json"} {
		r := v.get(p)
		if r.status != 200 {
			t.Errorf("through nginx, %s: %d", p, r.status)
		}
		noPass(t, "through nginx, "+p, r, site.got())
	}
	if r := v.do("POST", "/.waitroom/leave?room=concert"); r.status/100 == 5 {
		t.Errorf("through nginx, leave: %d", r.status)
	} else {
		noPass(t, "through nginx, leave", r, site.got())
	}
}
