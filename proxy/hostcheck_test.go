package proxy

import (
	"strings"
	"testing"
)

func TestBuildRouter_HostOnlyRoomIsRefused(t *testing.T) {
	t.Parallel()
	ups, rooms := map[string]bool{"shop": true, "other": true}, map[string]bool{"concert": true}
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
