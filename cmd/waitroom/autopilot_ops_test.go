package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// autopilotOf reads the room's autopilot from the admin API.
func autopilotOf(t *testing.T, c *adminClient) (limit int, reason string, frozen bool, view map[string]any) {
	t.Helper()
	code, body, raw := c.do(http.MethodGet, "/admin/api/rooms/shop", "")
	if code != http.StatusOK {
		t.Fatalf("GET room: %d %s", code, raw)
	}
	ap, ok := body["autopilot"].(map[string]any)
	if !ok {
		t.Fatalf("room view has no autopilot: %s", raw)
	}
	r, _ := ap["reason"].(string)
	f, _ := ap["frozen"].(bool)
	return num(ap, "limit"), r, f, ap
}

// waitAutopilot polls the admin API until ok holds of the room's autopilot.
func waitAutopilot(t *testing.T, c *adminClient, what string, ok func(limit int, reason string, frozen bool) bool) (int, string) {
	t.Helper()
	var limit int
	var reason string
	var frozen bool
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if limit, reason, frozen, _ = autopilotOf(t, c); ok(limit, reason, frozen) {
			return limit, reason
		}
	}
	t.Fatalf("%s: not within 30s; last limit %d, %q, frozen %v", what, limit, reason, frozen)
	return 0, ""
}

// metricValue reads a gauge of room shop from the gateway's /metrics.
func shopGauge(t *testing.T, app *App, name string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+app.AdminAddr().String()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+`{room="shop"} `); ok {
			return v
		}
	}
	t.Fatalf("/metrics has no %s{room=\"shop\"}", name)
	return ""
}

// With no traffic the limit holds at its start; the operator's pin
// (PATCH max_active) holds it at N, shown as "pinned", and DELETE
// overrides releases it, back within the bounds; with the store down the
// limit freezes where it was (admin API and metric), and it moves on once
// the store is back.
func TestAutopilot_HoldsPinsFreezes(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := replaceOnce(t, autopilotConfig(site.URL, 20, true, fmt.Sprintf(
		"store: { kind: redis, redis: { addrs: [%q], key_prefix: ops, dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms } }", srv.Addr())),
		"interval: 2s, min_active: 10, warmup: 700ms", "interval: 500ms, min_active: 5")
	app, _ := startGateway(t, cfg)
	c := newAdmin(t, app)

	// No traffic: three steps and more, the limit stays at min_active.
	waitAutopilot(t, c, "a step judged with no traffic", func(l int, r string, _ bool) bool {
		return strings.HasPrefix(r, "too little traffic")
	})
	time.Sleep(2 * time.Second)
	if l, r, _, view := autopilotOf(t, c); l != 5 || !strings.HasPrefix(r, "too little traffic") || num(view, "max_active") != 20 || num(view, "min_active") != 5 {
		t.Fatalf("no traffic: limit %d %q, want 5 held; %v", l, r, view)
	}
	if v := shopGauge(t, app, "waitroom_autopilot_limit"); v != "5" {
		t.Fatalf("waitroom_autopilot_limit %s, want 5", v)
	}

	// A pin, above the ceiling too: the operator's word.
	for _, n := range []int{12, 50} {
		if code, _, raw := c.do(http.MethodPatch, "/admin/api/rooms/shop", fmt.Sprintf(`{"max_active": %d}`, n)); code != http.StatusOK {
			t.Fatalf("PATCH max_active %d: %d %s", n, code, raw)
		}
		waitAutopilot(t, c, fmt.Sprintf("pinned at %d", n), func(l int, r string, _ bool) bool { return l == n && r == "pinned" })
		time.Sleep(1200 * time.Millisecond) // steps pass; the pin holds
		if l, r, _, _ := autopilotOf(t, c); l != n || r != "pinned" {
			t.Fatalf("pinned at %d, steps later: limit %d %q", n, l, r)
		}
	}
	if code, _, raw := c.do(http.MethodDelete, "/admin/api/rooms/shop/overrides", ""); code != http.StatusOK {
		t.Fatalf("DELETE overrides: %d %s", code, raw)
	}
	limit, _ := waitAutopilot(t, c, "released", func(l int, r string, _ bool) bool { return r != "pinned" })
	if limit > 20 || limit < 5 {
		t.Fatalf("released from a pin at 50: limit %d, want within [5, 20]", limit)
	}

	// The store goes: the limit freezes.
	srv.Stop()
	frozenAt, _ := waitAutopilot(t, c, "frozen", func(_ int, _ string, f bool) bool { return f })
	if frozenAt != limit {
		t.Fatalf("frozen at %d, want the last limit %d", frozenAt, limit)
	}
	time.Sleep(1500 * time.Millisecond)
	if l, r, f, _ := autopilotOf(t, c); l != limit || !f || !strings.Contains(r, "frozen") {
		t.Fatalf("store down: limit %d %q frozen %v, want %d frozen", l, r, f, limit)
	}
	if v := shopGauge(t, app, "waitroom_autopilot_limit"); v != fmt.Sprint(limit) {
		t.Fatalf("store down: waitroom_autopilot_limit %s, want the frozen %d", v, limit)
	}
	if v := shopGauge(t, app, "waitroom_autopilot_frozen"); v != "1" {
		t.Fatalf("store down: waitroom_autopilot_frozen %s, want 1", v)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitAutopilot(t, c, "thawed", func(_ int, _ string, f bool) bool { return !f })
}
