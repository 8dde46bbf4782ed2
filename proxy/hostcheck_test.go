package proxy

import (
	"strings"
	"testing"
)

func TestBuildRouter_HostOnlyRoomIsRefused(t *testing.T) {
	t.Parallel()
	ups := map[string]string{
		"shop":  "http://10.0.0.5:8080",
		"other": "http://10.0.0.6:8080",
		// The same site as shop under another name, spelled differently.
		"shop-again": mustOrigin(t, "HTTP://10.0.0.5:8080/"),
		"web":        "https://shop.internal:443",
		"web-too":    mustOrigin(t, "https://SHOP.internal"),
		"local":      mustOrigin(t, "http://localhost:3000"),
		"loopback":   mustOrigin(t, "http://127.0.0.1:3000"),
	}
	rooms := map[string]bool{"concert": true}
	cases := []struct {
		name   string
		routes []RouteConfig
		want   string // "" for accepted
	}{
		{"catch-all to the same upstream", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/", Upstream: "shop"}}, `routes[0]: room "concert" guards host "tickets.example.com" only, but /events/ with any other Host header reaches upstream "shop" through routes[1]`},
		{"a host-less route inside the room", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/events/free/", Upstream: "shop"}}, "/events/free/ with any other Host header"},
		{"the room on every host too", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/", Upstream: "shop"}}, ""},
		{"other hosts go to another upstream", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/", Upstream: "other"}}, ""},
		{"one site under two upstream names", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "shop", Room: "concert"},
			{Path: "/", Upstream: "shop-again"}}, `reaches the same site (http://10.0.0.5:8080) as upstream "shop" under the name "shop-again" through routes[1]`},
		{"default port and case are one site", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "web", Room: "concert"},
			{Path: "/", Upstream: "web-too"}}, `under the name "web-too"`},
		{"localhost and 127.0.0.1 are one site", []RouteConfig{
			{Host: "tickets.example.com", Path: "/events/", Upstream: "local", Room: "concert"},
			{Path: "/", Upstream: "loopback"}}, `reaches the same site (http://localhost:3000) as upstream "local" under the name "loopback"`},
		{"nothing host-less", []RouteConfig{
			{Host: "tickets.example.com", Path: "/", Upstream: "shop", Room: "concert"}}, ""},
	}
	for _, c := range cases {
		err := routesErr(c.routes, ups, rooms)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: want %q, got %v", c.name, c.want, err)
		}
	}
}

func mustOrigin(t *testing.T, raw string) string {
	t.Helper()
	c := DefaultUpstream()
	c.URL = raw
	s, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s.Origin()
}

func TestUpstreamSettings_Origin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:3000":    "http://localhost:3000",
		"HTTP://Shop.Internal":     "http://shop.internal:80",
		"https://shop.internal/":   "https://shop.internal:443",
		"https://shop.internal.":   "https://shop.internal:443",
		"http://[::FFFF:10.0.0.1]": "http://10.0.0.1:80",
		"http://[2001:DB8::1]:81":  "http://[2001:db8::1]:81",
		// One loopback listener, however it is spelled; 127.0.0.2 is another.
		"http://localhost:3000":       "http://localhost:3000",
		"http://LocalHost.:3000":      "http://localhost:3000",
		"http://shop.localhost:3000":  "http://localhost:3000",
		"http://[::1]:3000":           "http://localhost:3000",
		"http://[::ffff:127.0.0.1]":   "http://localhost:80",
		"http://0.0.0.0:3000":         "http://localhost:3000",
		"http://127.0.0.2:3000":       "http://127.0.0.2:3000",
		"https://localhost.example:1": "https://localhost.example:1",
	} {
		if got := mustOrigin(t, in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}
