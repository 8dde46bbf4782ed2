package proxy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/pattern"
)

// testRoutes is a small site: a ticket host with a room, an IPv6 admin host,
// and host-less fallbacks.
var testRoutes = []RouteConfig{
	{Path: "/", Upstream: "site"},                                                         // 0
	{Path: "/events/", Upstream: "shop", Room: "concert"},                                 // 1
	{Path: "/events/vip/", Upstream: "shop", Room: "vip"},                                 // 2
	{Host: "Tickets.Example.com", Path: "/", Upstream: "tickets"},                         // 3
	{Host: "tickets.example.com", Path: "/Events/", Upstream: "tickets", Room: "tix"},     // 4
	{Host: "[::1]", Path: "/admin", Upstream: "local"},                                    // 5
	{Host: "shop.example.com", Path: "/events/vip/gold/", Upstream: "shop", Room: "gold"}, // 6
	{Path: "/favicon.ico", Upstream: "site"},                                              // 7
	{Host: "shop.example.com", Path: "/static/", Upstream: "site"},                        // 8
	{Host: "10.0.0.1", Path: "/", Upstream: "local"},                                      // 9
	{Host: "2001:db8::1", Path: "/", Upstream: "local"},                                   // 10
	{Host: "api.example.com", Path: "/v1/queue/join/", Upstream: "shop", Room: "concert"}, // 11
}

func testRouter(tb testing.TB) *Router {
	tb.Helper()
	rt, err := NewRouter(testRoutes)
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

func TestRouter_Match(t *testing.T) {
	t.Parallel()
	rt := testRouter(t)
	tests := []struct {
		host, path string
		want       int // route index; -1 for no match
	}{
		{"example.org", "/", 0},
		{"example.org", "/events/1", 1},
		{"example.org", "/events/vip/1", 2},
		{"example.org", "/EVENTS/VIP/1", 2},
		{"example.org", "/events", 1},
		{"example.org", "/events/vip", 2},
		{"example.org", "/eventsvip", 0},
		{"example.org", "/favicon.ico", 7},
		{"tickets.example.com", "/", 3},
		{"tickets.example.com", "/events/1", 4},
		{"TICKETS.example.COM:8443", "/events/1", 4},
		{"tickets.example.com.", "/events", 4},
		{"tickets.example.com.:80", "/EvEnTs/", 4},
		// A matching host beats a longer prefix without host.
		{"tickets.example.com", "/events/vip/1", 4},
		{"tickets.example.com.evil", "/events/1", 1},
		{"shop.example.com", "/events/vip/gold/x", 6},
		{"shop.example.com", "/events/vip/silver", 2},
		{"shop.example.com", "/static/app.js", 8},
		{"[::1]:8080", "/admin/x", 5},
		{"[::1]", "/admin", 5},
		{"[::1]:8080", "/", 0},
		{"[0:0::1]:8080", "/admin", 0}, // not the configured spelling
		{"10.0.0.1:80", "/x", 9},
		{"2001:DB8::1", "/x", 10},
		{"[2001:db8::1]:443", "/x", 10},
		{"", "/events/1", 1},
		{"api.example.com", "/v1/queue/join", 11},
		{"api.example.com", "/v1/queue/joins", 0},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.path, func(t *testing.T) {
			t.Parallel()
			r, ok := rt.Match(tt.host, tt.path)
			got := -1
			if ok {
				got = r.Index
			}
			if got != tt.want {
				t.Errorf("Match(%q, %q) = route %d %+v, want %d", tt.host, tt.path, got, r, tt.want)
			}
		})
	}
}

func TestRouter_MatchReturnsNormalizedRoute(t *testing.T) {
	t.Parallel()
	r, ok := testRouter(t).Match("tickets.example.com", "/events/1")
	want := Route{Index: 4, Host: "tickets.example.com", Path: "/events/", Upstream: "tickets", Room: "tix"}
	r.pat, r.room = pattern.Path{}, pattern.Template{}
	if !ok || !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if r, ok := testRouter(t).Match("[::1]", "/admin"); !ok || r.Host != "::1" {
		t.Errorf("IPv6 host %+v", r)
	}
}

func TestRouter_NoRouteNoMatch(t *testing.T) {
	t.Parallel()
	rt, err := NewRouter([]RouteConfig{{Host: "a.example", Path: "/x/", Upstream: "u"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"b.example", "/x/1"}, {"a.example", "/y"}, {"a.example", "/"}} {
		if r, ok := rt.Match(c[0], c[1]); ok {
			t.Errorf("Match(%q, %q) = %+v, want none", c[0], c[1], r)
		}
	}
}

func TestNewRouter_RefusesInvalidRoutes(t *testing.T) {
	t.Parallel()
	_, err := NewRouter([]RouteConfig{
		{Path: "/events/", Upstream: "shop"},
		{Path: "events", Upstream: "shop"},
		{Path: "/EVENTS/", Upstream: "other"},
	})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`routes[1].path: must start with "/"`, "routes[2]: same host and path as routes[0]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A route that takes a (host, path) pair in use is a conflict by kind, so
// a caller answers it without reading the words; the rest stay invalid.
func TestBuildRouter_CollisionIsAConflict(t *testing.T) {
	t.Parallel()
	_, err := BuildRouter([]RouteConfig{
		{Path: "/events/", Upstream: "shop"},
		{Path: "/a/", Upstream: "nowhere"},
		{Path: "/EVENTS/", Upstream: "shop"},
	}, map[string]string{"shop": "http://10.0.0.5:80"}, map[string]bool{})
	kinds := map[string]conf.Kind{}
	for _, p := range conf.Split(err) {
		kinds[p.Key()] = p.Kind
	}
	want := map[string]conf.Kind{"routes[1].upstream": conf.Invalid, "routes[2]": conf.Conflict}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("kinds by key: %v, want %v (from %v)", kinds, want, err)
	}
}

func TestRouter_MatchDoesNotAllocate(t *testing.T) {
	rt := testRouter(t)
	allocs := testing.AllocsPerRun(100, func() {
		rt.Match("TICKETS.example.com:8443", "/events/vip/1")
		rt.Match("[::1]:8080", "/admin/x")
		rt.Match("nowhere.example", "/EVENTS/VIP/GOLD/x")
	})
	if allocs != 0 {
		t.Errorf("Match allocates %v times per run", allocs)
	}
}

func BenchmarkRouter_Match(b *testing.B) {
	rt := testRouter(b)
	cases := []struct {
		name, host, path string
	}{
		{"host route", "tickets.example.com:443", "/events/12345/seats"},
		{"fallback", "www.example.org", "/events/vip/12345"},
		{"root", "www.example.org", "/about/team"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rt.Match(c.host, c.path)
			}
		})
	}
}
