package proxy

import (
	"strings"
	"testing"
)

func templateRouter(t testing.TB) *Router {
	t.Helper()
	rt, err := NewRouter([]RouteConfig{
		{Path: "/", Upstream: "shop"},
		{Path: "/events/", Upstream: "shop", Room: "lobby"},
		{Path: "/events/{id}/", Upstream: "shop", Room: "event-{id}"},
		{Path: "/events/vip/", Upstream: "shop", Room: "vip"},
		{Path: "/v/{venue}/s/{show}", Upstream: "shop", Room: "{venue}-{show}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestRouter_Templates(t *testing.T) {
	t.Parallel()
	rt := templateRouter(t)
	tests := []struct {
		path, room, template string
		refused              bool
	}{
		{"/events/123/seats", "event-123", "event-{id}", false},
		{"/events/123", "event-123", "event-{id}", false},
		{"/Events/ABC-x_9/", "event-abc-x_9", "event-{id}", false}, // one room per event, whatever the case
		{"/events/vip/x", "vip", "", false},                        // a literal beats a parameter
		{"/events/", "lobby", "", false},                           // no segment: not the template
		{"/events;x/7/", "event-7", "event-{id}", false},
		{"/v/hall/s/42/x", "hall-42", "{venue}-{show}", false},
		{"/events/123.json", "", "event-{id}", true}, // Spring's suffix match would serve event 123
		{"/events/" + strings.Repeat("a", 65) + "/", "", "event-{id}", true},
		{"/events/caf\u00e9/", "", "event-{id}", true},
		{"/events/%41/", "", "event-{id}", true},
		{"/other", "", "", false},
	}
	for _, tt := range tests {
		r, ok := rt.Match("x", tt.path)
		if !ok || r.Room != tt.room || r.Template != tt.template || r.Refused != tt.refused {
			t.Errorf("Match(%q) = room %q template %q refused %t (ok %t), want %q %q %t",
				tt.path, r.Room, r.Template, r.Refused, ok, tt.room, tt.template, tt.refused)
		}
	}
	if r, _ := rt.Match("x", "/v/Hall/s/42/"); len(r.Params) != 2 || r.Params[0] != (Param{Name: "venue", Value: "hall"}) || r.Params[1] != (Param{Name: "show", Value: "42"}) {
		t.Errorf("params %+v", r.Params)
	}
}

func TestRouteConfig_TemplateProblems(t *testing.T) {
	t.Parallel()
	rooms := map[string]bool{"event-{id}": true, "plain": true}
	ups := map[string]string{"shop": "http://10.0.0.1:80"}
	for _, tt := range []struct {
		path, room, want string
	}{
		{"/events/{id}/", "event-{id}", ""},
		{"/events/{id}/", "plain", ""},
		{"/events/{id", "event-{id}", `"{" without its "}"`},
		{"/events/x{id}/", "event-{id}", "whole segment"},
		{"/events/{Id}/", "event-{id}", "parameter name"},
		{"/a/{id}/b/{id}/", "event-{id}", "twice"},
		{"/events/", "event-{id}", "which the path"},
		{"/events/{show}/", "event-{id}", "which the path"},
		{"/events/{id}/../x", "event-{id}", "clean path"},
	} {
		_, err := BuildRouter([]RouteConfig{{Path: tt.path, Upstream: "shop", Room: tt.room}}, ups, rooms)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s -> %s: %v", tt.path, tt.room, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s -> %s: %v, want %q", tt.path, tt.room, err, tt.want)
		}
	}
}
