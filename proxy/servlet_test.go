package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
)

// newServletStub starts an upstream that serves paths as a servlet
// container does: Tomcat cuts each segment's ";" parameters, decodes, and
// only then collapses "//" and resolves "." and "..". decodes > 1 plays a
// container behind a filter that decodes again; parameters are cut before
// and after each decoding. It answers with the path it serves.
func newServletStub(tb testing.TB, decodes int) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _, _ := strings.Cut(r.RequestURI, "?")
		for range decodes {
			p = decodeLenient(cutParams(p))
		}
		json.NewEncoder(w).Encode(map[string]string{"served": path.Clean(cutParams(p))})
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// servedBy asks the stub for target, written byte for byte, and returns the
// path it served.
func servedBy(tb testing.TB, stub *httptest.Server, target string) string {
	tb.Helper()
	res, body := rawRequest(tb, stub.Listener.Addr().String(), http.MethodGet, target)
	var got struct{ Served string }
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
		tb.Fatalf("stub: status %d, body %q", res.StatusCode, body)
	}
	return got.Served
}

// roomSite is a front door as the application builds one: clean, route,
// bypass, then either queue (503 with X-Room) or proxy to the stub.
type roomSite struct {
	name   string
	routes []RouteConfig
	bypass BypassConfig
}

// Whole site in a room, static assets let through; or only the shop in a
// room. /events/checkout is behind a room on both.
var roomSites = []roomSite{
	{"bypass", []RouteConfig{{Path: "/", Upstream: "app", Room: "site"}}, BypassConfig{Paths: []string{"/static/"}}},
	{"routes", []RouteConfig{{Path: "/", Upstream: "app"}, {Path: "/events/", Upstream: "app", Room: "concert"}}, BypassConfig{}},
}

func (s roomSite) serve(tb testing.TB, upstreamURL string) *httptest.Server {
	tb.Helper()
	rt, err := NewRouter(s.routes)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := s.bypass.Build()
	if err != nil {
		tb.Fatal(err)
	}
	up := newUpstream(tb, "app", upstreamURL, Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clean, err := CleanPath(r.URL.Path)
		if err != nil {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		route, _ := rt.Match(r.Host, clean)
		if route.Room != "" && !b.Match(r, ClientAddr(r.RemoteAddr, r.Header, nil), clean) {
			w.Header().Set("X-Room", route.Room)
			http.Error(w, "queued", http.StatusServiceUnavailable)
			return
		}
		up.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// guardedBefore reports whether the rules before path parameters were
// understood put the decoded path behind a room: path.Clean alone, and
// prefixes matched with the parameters in place.
func (s roomSite) guardedBefore(decoded string) bool {
	p := path.Clean(decoded)
	for _, bp := range s.bypass.Paths {
		if underPath(p, bp) {
			return false
		}
	}
	best := RouteConfig{}
	for _, rc := range s.routes {
		if hasPathPrefix(p, rc.Path) && len(rc.Path) > len(best.Path) {
			best = rc
		}
	}
	return best.Room != ""
}

// servletTricks are request-targets that a servlet container serves as
// /events/checkout; decodes is how many decodings the upstream needs for it.
var servletTricks = []struct {
	target  string
	decodes int
}{
	{"/static/..;/events/checkout", 1},
	{"/static/..%3B/events/checkout", 1},
	{"/static/.%2e;/events/checkout", 1},
	{"/static/..;jsessionid=x/events/checkout", 1},
	{"/static/%2e%2e;/events/checkout", 1},
	{"/static/%2E%2E%3b/events/checkout", 1},
	{"/static;x/..;/events/checkout", 1},
	{"/static/..%253B/events/checkout", 2},
	{"/static/%252e%252e;/events/checkout", 2},
	{"/static/%252e%252e/events/checkout", 2},
	{"/static%252F..%252Fevents/checkout", 2},
	{"/x/..;/events/checkout", 1},
	{"/;x/events/checkout", 1},
	{"/events;x/checkout", 1},
	{"/events;jsessionid=ABC/checkout", 1},
	{"/events;/checkout", 1},
	{"/events%3Bx/checkout", 1},
	{"/events%253Bx/checkout", 2},
}

// No spelling that a servlet container serves as /events/checkout gets
// there past the room: waitroom answers 400 or queues it in the room.
func TestServletPathParametersNeverPassTheRoom(t *testing.T) {
	t.Parallel()
	for _, site := range roomSites {
		t.Run(site.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range servletTricks {
				stub := newServletStub(t, tt.decodes)
				front := site.serve(t, stub.URL)
				u, err := url.ParseRequestURI(tt.target)
				if err != nil {
					t.Fatal(err)
				}
				// What waitroom forwarded before: path.Clean, re-escaped.
				before := (&url.URL{Path: path.Clean(u.Path)}).EscapedPath()
				if got := servedBy(t, stub, before); got != "/events/checkout" {
					t.Fatalf("%s: the stub serves %q for %q, want /events/checkout", tt.target, got, before)
				}
				res, body := rawRequest(t, front.Listener.Addr().String(), http.MethodGet, tt.target)
				switch {
				case res.StatusCode == http.StatusBadRequest:
				case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("X-Room") == site.routes[len(site.routes)-1].Room:
				default:
					t.Errorf("%s: status %d, room %q, body %q; want 400 or queued (guarded before: %v)",
						tt.target, res.StatusCode, res.Header.Get("X-Room"), body, site.guardedBefore(u.Path))
				}
			}
		})
	}
}

// Each trick was a way around a room on at least one site before: the
// test above would prove nothing otherwise.
func TestServletTricksWereHoles(t *testing.T) {
	t.Parallel()
	for _, tt := range servletTricks {
		u, err := url.ParseRequestURI(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		hole := false
		for _, site := range roomSites {
			hole = hole || !site.guardedBefore(u.Path)
		}
		if !hole {
			t.Errorf("%s was guarded by a room before", tt.target)
		}
	}
}

// Path parameters on a page outside any room still reach the upstream as
// sent: matching leaves them out, forwarding does not.
func TestServletPathParametersAreForwarded(t *testing.T) {
	t.Parallel()
	front := roomSites[1].serve(t, newEcho(t).URL)
	res, body := rawRequest(t, front.Listener.Addr().String(), http.MethodGet, "/cart;jsessionid=ABC/items?x=1")
	if s := decodeSeen(t, res, body); s.URI != "/cart;jsessionid=ABC/items?x=1" {
		t.Errorf("upstream got %q", s.URI)
	}
}
