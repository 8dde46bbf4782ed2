package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

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
	cfg := replaceOnce(t, autopilotConfig(site.URL, 100, true, fmt.Sprintf(
		"store: { kind: redis, redis: { addrs: [%q], key_prefix: start } }", srv.Addr())),
		"interval: 2s, min_active: 10, warmup: 700ms", "interval: 500ms, min_active: 3, start_above: 2/s")
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

// startStoppable is startGateway with a stop of its own, for a gateway
// that restarts mid-test.
func startStoppable(t *testing.T, yaml string) (*App, string, func()) {
	t.Helper()
	cfg, err := parseConfig("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("app.Run: %v", err)
			}
			_ = app.Close()
		})
	}
	t.Cleanup(stop)
	return app, "http://" + app.Addr().String(), stop
}

// start_above's state is the store's: with two gateways on one Redis, a
// rush turns the room on; one gateway restarts mid-rush, and the new one
// lets nobody in past the controller's limit (every newcomer through it
// waits, the room full past the limit with the rush let in while quiet)
// and never shows the room quiet: it does not judge from a window of its
// own, it reads the state from the store. With the store down it keeps
// the room on, frozen.
func TestAutopilot_StartAboveRestart(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := replaceOnce(t, autopilotConfig(site.URL, 100, true, fmt.Sprintf(
		"store: { kind: redis, redis: { addrs: [%q], key_prefix: restart, dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms } }", srv.Addr())),
		"interval: 2s, min_active: 10, warmup: 700ms", "interval: 500ms, min_active: 3, start_above: 2/s")
	a, baseA := startGateway(t, cfg)
	b, _, stopB := startStoppable(t, cfg)
	admins := []*adminClient{newAdmin(t, a), newAdmin(t, b)}
	// Quiet, with the arrivals judged (half the 10 s window seen).
	for _, c := range admins {
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			_, _, _, v := autopilotOf(t, c)
			if _, judged := v["arrivals_per_second"]; judged && v["quiet"] == true {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("not quiet and judged within 30 s: %v", v)
			}
		}
	}
	for i := range 20 {
		if r := newVisitor(t, baseA).getJSON("/shop/p"); r.body != "site:/shop/p" {
			t.Fatalf("rush %d while quiet: %d %q, want straight in", i, r.status, r.body)
		}
	}
	for _, c := range admins {
		waitAutopilot(t, c, "the room on", func(l int, r string, _ bool) bool { return l < 100 && !strings.Contains(r, "start_above") })
	}
	limit, _, _, _ := autopilotOf(t, admins[0])

	stopB()
	c, baseC, _ := startStoppable(t, cfg)
	admin := newAdmin(t, c)
	for i := range 10 {
		if _, _, _, v := autopilotOf(t, admin); v["quiet"] == true {
			t.Fatalf("the restarted gateway shows the room quiet mid-rush: %v", v)
		}
		if r := newVisitor(t, baseC).getJSON("/shop/p"); r.status != http.StatusOK || r.state() != "waiting" {
			t.Fatalf("newcomer %d through the restarted gateway: %d %q %q, want waiting (limit %d, 20 inside)", i, r.status, r.state(), r.body, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("limit %d with 20 inside: the restarted gateway let none of 10 newcomers in", limit)

	// The store goes: the room stays on (frozen), it does not fall back
	// to quiet.
	srv.Stop()
	waitAutopilot(t, admin, "frozen", func(_ int, _ string, f bool) bool { return f })
	for range 10 {
		if l, _, f, v := autopilotOf(t, admin); v["quiet"] == true || l >= 100 || !f {
			t.Fatalf("store down: %v, want on and frozen", v)
		}
		time.Sleep(150 * time.Millisecond)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
}
