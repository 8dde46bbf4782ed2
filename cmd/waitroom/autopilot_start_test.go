package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The room that turns itself on, across two gateways on one Redis: with
// start_above 2/s, visitors arriving at about 1.4/s all go straight in,
// past the autopilot's limit of 3 (the room shows "quiet" and the
// ceiling); a rush of 20 lifts arrivals over 2/s, both gateways turn the
// room on (the autopilot's limit applies) and the next newcomer, on the
// other gateway, waits in line.
func TestAutopilot_StartAbove(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := strings.Replace(autopilotConfig(site.URL, 100, true, fmt.Sprintf(
		"store: { kind: redis, redis: { addrs: [%q], key_prefix: start } }", srv.Addr())),
		"interval: 2s, min_active: 10", "interval: 500ms, min_active: 3, start_above: 2/s", 1)
	a, baseA := startGateway(t, cfg)
	b, baseB := startGateway(t, cfg)
	admins := []*adminClient{newAdmin(t, a), newAdmin(t, b)}
	view := func(c *adminClient) map[string]any {
		_, _, _, v := autopilotOf(t, c)
		return v
	}

	for i := range 8 {
		base := []string{baseA, baseB}[i%2]
		if r := newVisitor(t, base).getJSON("/shop/p"); r.body != "site:/shop/p" {
			t.Fatalf("arrival %d at ~1.4/s: %d %q, want straight in", i, r.status, r.body)
		}
		time.Sleep(700 * time.Millisecond)
	}
	for _, c := range admins {
		if v := view(c); v["quiet"] != true || num(v, "limit") != 100 || v["start_above"] != "2/s" || v["state"] != "quiet" {
			t.Fatalf("under start_above: %v", v)
		}
	}

	for i := range 20 {
		if r := newVisitor(t, baseA).getJSON("/shop/p"); r.status >= 500 {
			t.Fatalf("rush %d: %d", i, r.status)
		}
	}
	var arrived float64
	for _, c := range admins {
		waitAutopilot(t, c, "the room on", func(l int, r string, _ bool) bool { return l < 100 && !strings.Contains(r, "start_above") })
		arrived, _ = view(c)["arrivals_per_second"].(float64)
		if arrived <= 2 {
			t.Fatalf("on with arrivals %v/s, want over 2/s", arrived)
		}
	}
	if r := newVisitor(t, baseB).getJSON("/shop/p"); r.status != http.StatusOK || r.state() != "waiting" {
		t.Fatalf("a newcomer once the room is on: %d %q %q, want waiting", r.status, r.state(), r.body)
	}
	t.Logf("arrivals judged %.2f/s against start_above 2/s", arrived)
}
