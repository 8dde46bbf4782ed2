package door_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/door"
)

func testRouter(t *testing.T) *door.Router {
	t.Helper()
	routes, err := proxy.BuildRouter([]proxy.RouteConfig{
		{Path: "/events/{id}/", Upstream: "site", Room: "event-{id}"},
		{Path: "/shop/", Upstream: "site", Room: "shop"},
		{Path: "/about/", Upstream: "site"},
	}, map[string]string{"site": "http://127.0.0.1:1"}, map[string]bool{"event-{id}": true, "shop": true})
	if err != nil {
		t.Fatal(err)
	}
	bypass, err := proxy.BypassConfig{Paths: []string{"/shop/static/"}, CIDRs: []string{"198.51.100.0/24"}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return &door.Router{Routes: routes, Bypass: bypass}
}

// One decision for every door: each kind from the path as sent.
func TestRouter_Route(t *testing.T) {
	t.Parallel()
	rt := testRouter(t)
	tests := []struct {
		target string
		kind   door.Kind
		room   string
	}{
		{"/.waitroom/status", door.KindEndpoint, ""},
		{"/.WAITROOM/status", door.KindEndpoint, ""},
		{"/.waitroom", door.KindEndpoint, ""},
		{"/shop/../.waitroom/leave", door.KindEndpoint, ""},
		{"/shop/..;/x", door.KindBadPath, ""},
		{"/events/a%2Fb/", door.KindRefused, ""},
		{"/events/caf%C3%A9/", door.KindRefused, ""},
		{"/nowhere", door.KindNoRoute, ""},
		{"/about/us", door.KindNoRoom, ""},
		{"/shop/static/a.css", door.KindBypass, "shop"},
		{"/shop/cart", door.KindRoom, "shop"},
		{"/events/7/seats", door.KindRoom, "event-7"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			d := rt.Route(httptest.NewRequest("GET", tt.target, nil))
			if d.Kind != tt.kind || d.Room != tt.room {
				t.Errorf("Route(%s) = kind %d room %q, want kind %d room %q", tt.target, d.Kind, d.Room, tt.kind, tt.room)
			}
		})
	}
}

// The bypass networks match the client the front door put in the scope,
// not the peer.
func TestRouter_BypassReadsTheScopesClient(t *testing.T) {
	t.Parallel()
	rt := testRouter(t)
	r := httptest.NewRequest("GET", "/shop/cart", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	r = r.WithContext(waitroom.WithScope(r.Context(), &waitroom.Scope{Client: netip.MustParseAddr("198.51.100.9")}))
	if d := rt.Route(r); d.Kind != door.KindBypass {
		t.Fatalf("a client in a bypass network: kind %d", d.Kind)
	}
	r.RemoteAddr = "198.51.100.9:5000"
	r = r.WithContext(waitroom.WithScope(r.Context(), &waitroom.Scope{Client: netip.MustParseAddr("203.0.113.7")}))
	if d := rt.Route(r); d.Kind != door.KindRoom {
		t.Fatalf("a peer in a bypass network forwarding for another client: kind %d", d.Kind)
	}
}

// The middleware's router sends every path but waitroom's own to its room.
func TestRouter_OneRoom(t *testing.T) {
	t.Parallel()
	rt := &door.Router{Room: "concert"}
	if d := rt.Route(httptest.NewRequest("GET", "/anything", nil)); d.Kind != door.KindRoom || d.Room != "concert" {
		t.Fatalf("Route = %+v", d)
	}
	if d := rt.Route(httptest.NewRequest("GET", "/.waitroom//status", nil)); d.Kind != door.KindEndpoint || d.Path != waitroom.StatusPath {
		t.Fatalf("Route = %+v", d)
	}
}
