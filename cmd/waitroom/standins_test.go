package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// forgedForwarding are the headers a client may send to choose what the
// check judges: a path without a room, another host, another method.
var forgedForwarding = [][]string{
	{"X-Forwarded-Uri", "/about"},
	{"X-Forwarded-Uri", "/static/a.css", "X-Forwarded-Method", "OPTIONS"},
	{"X-Forwarded-Host", "other.example", "X-Forwarded-Uri", "/about"},
	{"X-Forwarded-Prefix", "/about", "X-Forwarded-Uri", "/about", "X-Forwarded-Method", "GET", "X-Forwarded-Host", "shop.example"},
	{"Waitroom-Visitor", "forged", "Waitroom-Room", "festival"},
}

// A full room holds every newcomer at the site through Traefik's
// forwardAuth and Envoy's ext_authz as the shipped files configure them:
// of 20 newcomers (10 of them with forged forwarding headers) none reaches
// the site, each gets the waiting answer (429, not 2xx); the visitor inside
// reaches it, the site hearing who they are, forged headers or not.
func TestStandIns_FullRoomHoldsEveryNewcomer(t *testing.T) {
	for _, proxy := range []string{"traefik", "envoy"} {
		t.Run(proxy, func(t *testing.T) {
			up, site := newUpstream(t)
			// The other helper's rule: the auth endpoint answers peers in
			// server.trusted_proxies; the stand-in calls from loopback.
			cfg := gwConfig(site.URL, "    max_active: 1\n    tick: 50ms") + "server: { trusted_proxies: [127.0.0.1/32] }\n"
			_, base := startGateway(t, cfg)
			svc := services{waitroom: base, site: site.URL}
			var h http.Handler
			if proxy == "traefik" {
				h = newTraefik(t, svc)
			} else {
				h = newEnvoy(t, svc)
			}
			front := newHTTPServer(t, h)
			checkStandInHolds(t, up, front)
		})
	}
}

func checkStandInHolds(t *testing.T, up *upstreamLog, front string) {
	in := newVisitor(t, front)
	if r := in.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("the first visitor of an empty room: %d %.300s", r.status, r.body)
	}
	who := up.since(0)
	if len(who) != 1 {
		t.Fatalf("the site heard visitors %v for the first visitor", who)
	}
	if r := in.get("/events/2"); r.body != "site:/events/2" {
		t.Fatalf("the visitor inside, again (their ticket came back to them): %d %.300s", r.status, r.body)
	}
	before := up.count()
	held := 0
	const newcomers = 20
	for i := range newcomers {
		v := newVisitor(t, front)
		var hdr []string
		if i%2 == 1 {
			hdr = forgedForwarding[(i/2)%len(forgedForwarding)]
		}
		r := v.do(http.MethodGet, fmt.Sprintf("/events/%d", i), append([]string{"Accept", "application/json"}, hdr...)...)
		if r.status/100 == 2 || strings.HasPrefix(r.body, "site:") {
			t.Errorf("newcomer %d (headers %v) was let through: %d %.200s", i, hdr, r.status, r.body)
			continue
		}
		if r.status == http.StatusTooManyRequests && r.state() == "waiting" {
			held++
		} else {
			t.Errorf("newcomer %d (headers %v): want the waiting answer at 429, got %d %.200s", i, hdr, r.status, r.body)
		}
	}
	if n := up.count() - before; n != 0 {
		t.Errorf("%d of %d newcomers' requests reached the site of a full room", n, newcomers)
	}
	t.Logf("%d of %d newcomers held at the waiting answer; %d reached the site", held, newcomers, up.count()-before)
	if r := newVisitor(t, front).do(http.MethodPost, "/events/buy", "X-Forwarded-Uri", "/about", "X-Forwarded-Method", "GET"); r.status/100 == 2 {
		t.Errorf("a newcomer's POST with a forged X-Forwarded-Uri: %d", r.status)
	}
	// The visitor inside, with forged headers: still in, still themselves.
	for _, hdr := range forgedForwarding {
		if r := in.do(http.MethodGet, "/events/3", hdr...); r.body != "site:/events/3" {
			t.Errorf("the visitor inside with %v: %d %.200s", hdr, r.status, r.body)
		}
	}
	if who := up.since(0); len(who) != 1 || who["forged"] {
		t.Errorf("the site heard visitors %v", who)
	}
	// A path without a room passes; waitroom's own paths are served by
	// waitroom, not judged.
	if r := newVisitor(t, front).get("/about"); r.body != "site:/about" {
		t.Errorf("a page without a room: %d %.200s", r.status, r.body)
	}
	if r := newVisitor(t, front).getJSON("/.waitroom/status?room=concert"); r.status != 200 || bytes.Contains([]byte(r.body), []byte("site:")) {
		t.Errorf("the waiting page's poll: %d %.200s", r.status, r.body)
	}
}

// The site hears Waitroom-* headers from waitroom only, and the pass it is
// given never travels back: through both stand-ins, a client's own
// Waitroom-Visitor, -Room and -Pass never reach the site (a route without
// a room, a bypass, a room's route), and a site that echoes Waitroom-Pass
// in its answer has it removed before the client.
func TestStandIns_SiteHeadersHeld(t *testing.T) {
	for _, proxy := range []string{"traefik", "envoy"} {
		t.Run(proxy, func(t *testing.T) {
			var mu sync.Mutex
			heard := map[string][]string{} // path -> the Waitroom-* headers the site got
			site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var got []string
				for _, h := range []string{"Waitroom-Visitor", "Waitroom-Room", "Waitroom-Pass"} {
					if v := r.Header.Get(h); v != "" {
						got = append(got, h+"="+v)
					}
				}
				mu.Lock()
				heard[r.URL.Path] = got
				mu.Unlock()
				w.Header().Set("Waitroom-Pass", "echoed-by-the-site")
				fmt.Fprintf(w, "site:%s", r.URL.Path)
			}))
			t.Cleanup(site.Close)
			cfg := gwConfig(site.URL, "    max_active: 5") + "server: { trusted_proxies: [127.0.0.1/32] }\n"
			_, base := startGateway(t, cfg)
			svc := services{waitroom: base, site: site.URL}
			var h http.Handler
			if proxy == "traefik" {
				h = newTraefik(t, svc)
			} else {
				h = newEnvoy(t, svc)
			}
			front := newHTTPServer(t, h)
			v := newVisitor(t, front)
			forged := []string{"Waitroom-Visitor", "forged", "Waitroom-Room", "festival", "Waitroom-Pass", "forged-pass"}
			for _, path := range []string{"/about", "/static/a.css", "/events/1"} {
				r := v.do(http.MethodGet, path, forged...)
				if r.body != "site:"+path {
					t.Fatalf("%s: %d %.200s", path, r.status, r.body)
				}
				if p := r.header.Get("Waitroom-Pass"); p != "" {
					t.Errorf("%s: the site's Waitroom-Pass reached the client (%q)", path, p)
				}
				mu.Lock()
				got := heard[path]
				mu.Unlock()
				for _, g := range got {
					if strings.Contains(g, "forged") || g == "Waitroom-Room=festival" {
						t.Errorf("%s: the site heard the client's own %s", path, g)
					}
				}
				if path == "/events/1" && len(got) < 2 {
					t.Errorf("%s: the admitted visitor's request came without waitroom's headers: %v", path, got)
				}
				t.Logf("%s: the site heard %v", path, got)
			}
		})
	}
}
