package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// trickFront serves two upstreams: "shop" behind the /events/ room and "site"
// for everything else. It returns the front end's address.
func trickFront(t *testing.T) string {
	t.Helper()
	rt, err := NewRouter([]RouteConfig{
		{Path: "/", Upstream: "site"},
		{Path: "/events/", Upstream: "shop", Room: "concert"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ups := map[string]*Upstream{
		"shop": newUpstream(t, "shop", newEcho(t).URL, Options{}),
		"site": newUpstream(t, "site", newEcho(t).URL, Options{}),
	}
	return newFront(t, rt, ups).Listener.Addr().String()
}

func TestUpstream_PathReachingUpstreamIsTheMatchedPath(t *testing.T) {
	t.Parallel()
	addr := trickFront(t)
	tests := []struct {
		target, wantURI, wantRoute string
	}{
		{"/events/1", "/events/1", "/events/"},
		{"/EVENTS/1", "/EVENTS/1", "/events/"},
		{"//events/1", "/events/1", "/events/"},
		{"/static/../events/1", "/events/1", "/events/"},
		{"/static/%2e%2e/events/1", "/events/1", "/events/"},
		{"/static%2F..%2Fevents/1", "/events/1", "/events/"},
		{"/./events/1", "/events/1", "/events/"},
		{"/events", "/events", "/events/"},
		{"/Events/./../EVENTS//1/", "/EVENTS/1/", "/events/"},
		{"/events/1?next=%2F..%2Fadmin", "/events/1?next=%2F..%2Fadmin", "/events/"},
		{"/events/%2e%2e/admin", "/admin", "/"},
		{"/events/a%20b", "/events/a%20b", "/events/"},
		{"/eventsx", "/eventsx", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			res, body := rawRequest(t, addr, "GET", tt.target)
			s := decodeSeen(t, res, body)
			if s.URI != tt.wantURI {
				t.Errorf("upstream got %q, want %q", s.URI, tt.wantURI)
			}
			if got := res.Header.Get("X-Route"); got != tt.wantRoute {
				t.Errorf("route %q, want %q", got, tt.wantRoute)
			}
			if room := s.Header.Get(RoomHeader); (room != "") != (tt.wantRoute == "/events/") {
				t.Errorf("Waitroom-Room %q on route %q", room, tt.wantRoute)
			}
		})
	}
}

func TestUpstream_BadPathIs400(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	// No front end: the Upstream must refuse on its own.
	srv := httptest.NewServer(newUpstream(t, "shop", echo.URL, Options{}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	for _, target := range []string{"/events/%5C..%5Cadmin", "/events/%00", "/a%0Ab", "/a%7Fb"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			res, body := rawRequest(t, addr, "GET", target)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400; body %q", res.StatusCode, body)
			}
		})
	}
}

func TestUpstream_CleansPathItself(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newUpstream(t, "shop", newEcho(t).URL, Options{}))
	t.Cleanup(srv.Close)
	res, body := rawRequest(t, srv.Listener.Addr().String(), "GET", "//static/%2e%2e/x%2Fy")
	if s := decodeSeen(t, res, body); s.URI != "/x/y" {
		t.Errorf("upstream got %q, want %q", s.URI, "/x/y")
	}
}

func TestUpstream_OwnCookiesAndTokenNeverReachUpstream(t *testing.T) {
	t.Parallel()
	own := func(name string) bool { return strings.HasPrefix(name, "waitroom_") }
	srv := httptest.NewServer(newUpstream(t, "shop", newEcho(t).URL, Options{OwnCookie: own}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tests := []struct {
		name    string
		cookies []string // one Cookie line each
		want    string   // "" means no Cookie header at all
	}{
		{"mixed", []string{`a=1; waitroom_concert=SECRET1; b="q v";  c=%20x;d`}, `a=1; b="q v"; c=%20x; d`},
		{"only ours", []string{"waitroom_concert=SECRET1; waitroom_x=SECRET2"}, ""},
		{"untouched", []string{`sid=ab==;  theme="dark mode"`}, `sid=ab==;  theme="dark mode"`},
		{"two lines", []string{"a=1", "waitroom_concert=SECRET1; c=3"}, "a=1; c=3"},
		{"empty pairs", []string{";;waitroom_concert=SECRET1;; a=1 ;"}, "a=1"},
		{"name case matters", []string{"Waitroom_concert=kept"}, "Waitroom_concert=kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := []string{"Waitroom-Token: SECRET3", "Waitroom-Visitor: v-1", "Waitroom-Room: concert"}
			for _, c := range tt.cookies {
				hs = append(hs, "Cookie: "+c)
			}
			res, body := rawRequest(t, addr, "GET", "/", hs...)
			s := decodeSeen(t, res, body)
			if got := strings.Join(s.Header["Cookie"], "\n"); got != tt.want {
				t.Errorf("Cookie %q, want %q", got, tt.want)
			}
			if strings.Contains(string(body), "SECRET") {
				t.Errorf("a secret reached the upstream: %s", body)
			}
			if s.Header.Get(VisitorHeader) != "v-1" || s.Header.Get(RoomHeader) != "concert" {
				t.Errorf("visitor/room headers not forwarded: %v", s.Header)
			}
		})
	}
}

func TestUpstream_ForwardedHeadersTrustedOnlyFromConfiguredCIDRs(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	tests := []struct {
		name      string
		trusted   []netip.Prefix
		wantFor   string
		wantProto string
		wantHost  string
		wantFwd   string
		wantOther string // X-Forwarded-Port and X-Real-Ip
	}{
		{"trusted", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			"203.0.113.7, 10.1.1.1, 127.0.0.1", "https", "shop.example.com", "for=203.0.113.7", "443/203.0.113.7"},
		{"untrusted", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			"127.0.0.1", "http", "front.test", "", "/"},
		{"none configured", nil, "127.0.0.1", "http", "front.test", "", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(newUpstream(t, "shop", echo.URL, Options{TrustedProxies: tt.trusted}))
			t.Cleanup(srv.Close)
			res, body := get(t, srv.URL+"/", map[string]string{
				"Host":              "front.test",
				"X-Forwarded-For":   "203.0.113.7, 10.1.1.1",
				"X-Forwarded-Proto": "https",
				"X-Forwarded-Host":  "shop.example.com",
				"Forwarded":         "for=203.0.113.7",
				"X-Forwarded-Port":  "443",
				"X-Real-IP":         "203.0.113.7",
			})
			s := decodeSeen(t, res, body)
			h := s.Header
			if got := h.Get("X-Forwarded-For"); got != tt.wantFor {
				t.Errorf("X-Forwarded-For %q, want %q", got, tt.wantFor)
			}
			if got := h.Get("X-Forwarded-Proto"); got != tt.wantProto {
				t.Errorf("X-Forwarded-Proto %q, want %q", got, tt.wantProto)
			}
			if got := h.Get("X-Forwarded-Host"); got != tt.wantHost {
				t.Errorf("X-Forwarded-Host %q, want %q", got, tt.wantHost)
			}
			if got := h.Get("Forwarded"); got != tt.wantFwd {
				t.Errorf("Forwarded %q, want %q", got, tt.wantFwd)
			}
			if got := h.Get("X-Forwarded-Port") + "/" + h.Get("X-Real-Ip"); got != tt.wantOther {
				t.Errorf("X-Forwarded-Port/X-Real-IP %q, want %q", got, tt.wantOther)
			}
			if want := strings.TrimPrefix(echo.URL, "http://"); s.Host != want {
				t.Errorf("Host %q, want the upstream's %q", s.Host, want)
			}
		})
	}
}

func TestUpstream_DropHeaders(t *testing.T) {
	t.Parallel()
	b, err := BypassConfig{Header: BypassHeader{Name: "x-waitroom-bypass", Secret: "0123456789abcdef"}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{DropHeaders: []string{b.HeaderName()}}
	srv := httptest.NewServer(newUpstream(t, "shop", newEcho(t).URL, opt))
	t.Cleanup(srv.Close)
	res, body := get(t, srv.URL+"/", map[string]string{"X-Waitroom-Bypass": "0123456789abcdef"})
	if s := decodeSeen(t, res, body); s.Header.Get("X-Waitroom-Bypass") != "" {
		t.Errorf("bypass secret reached the upstream")
	}
}

func TestUpstream_ReleaseCommandIsGivenOnceAndStripped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		header      []string // Waitroom-Command header values
		trailer     string   // Waitroom-Command trailer value
		undeclared  bool     // send the trailer without announcing it
		wantRelease int
	}{
		{"header", []string{"release"}, "", false, 1},
		{"header list any case", []string{"noop, RELEASE"}, "", false, 1},
		{"header other command", []string{"renew"}, "", false, 0},
		{"trailer", nil, "release", false, 1},
		{"header and trailer once", []string{"release"}, "release", false, 1},
		{"trailer other command", nil, "renew", false, 0},
		{"undeclared trailer", nil, "release", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, v := range tt.header {
					w.Header().Add(CommandHeader, v)
				}
				if tt.trailer != "" && !tt.undeclared {
					w.Header().Set("Trailer", CommandHeader)
				}
				w.Write([]byte("paid"))
				switch {
				case tt.undeclared:
					// Flushed first, or net/http sends a Content-Length
					// and no trailer at all.
					http.NewResponseController(w).Flush()
					w.Header().Set(http.TrailerPrefix+CommandHeader, tt.trailer)
				case tt.trailer != "":
					w.Header().Set(CommandHeader, tt.trailer)
				}
			}))
			t.Cleanup(up.Close)
			var mu sync.Mutex
			var released []string
			opt := Options{OnCommand: func(res *http.Response, cmd string) {
				if cmd != "release" {
					return
				}
				r := res.Request
				mu.Lock()
				defer mu.Unlock()
				released = append(released, r.Header.Get(RoomHeader)+"/"+r.Header.Get(VisitorHeader)+"/"+r.Header.Get(TokenHeader))
			}}
			srv := httptest.NewServer(newUpstream(t, "shop", up.URL, opt))
			t.Cleanup(srv.Close)
			res, body := get(t, srv.URL+"/pay", map[string]string{
				RoomHeader: "concert", VisitorHeader: "v-1", TokenHeader: "tok",
			})
			if string(body) != "paid" {
				t.Fatalf("body %q", body)
			}
			if v := res.Header.Values(CommandHeader); len(v) > 0 {
				t.Errorf("client saw header %q", v)
			}
			if v, ok := res.Trailer[CommandHeader]; ok {
				t.Errorf("client saw trailer %q (nil: only announced)", v)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(released) != tt.wantRelease {
				t.Fatalf("OnRelease called %d times, want %d", len(released), tt.wantRelease)
			}
			for _, got := range released {
				if got != "concert/v-1/" {
					t.Errorf("OnRelease saw room/visitor/token %q, want %q", got, "concert/v-1/")
				}
			}
		})
	}
}
