package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

var prefixSeq atomic.Int64

// redisConfig is gwConfig on a shared Redis, with short timeouts so that an
// outage shows within a test's patience. Every call gets its own key prefix
// unless one is given, so tests on one server do not share lines.
func redisConfig(upstream, room, addr, onError, prefix string) string {
	if prefix == "" {
		prefix = fmt.Sprintf("gw%d", prefixSeq.Add(1))
	}
	return gwConfig(upstream, room) + fmt.Sprintf(`
store:
  kind: redis
  on_error: %s
  redis: { addrs: [%q], key_prefix: %s, dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms }
`, onError, addr, prefix)
}

// Three gateways with their own listeners on one Redis are one waiting
// room: a visitor who joins through A and polls through B and C keeps one
// place, and a release through one lets the next visitor in through another.
func TestRedis_ThreeGatewaysOneLine(t *testing.T) {
	srv := redistest.Start(t)
	up, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 1\n    tick: 50ms\n    page: { refresh: 1s }", srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	a, b, c := bases[0], bases[1], bases[2]
	inside := newVisitor(t, a)
	if r := inside.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("first visitor through A: %d %q", r.status, r.body)
	}
	// Cookies are per host, not per port: one jar serves a visitor across
	// the three gateways, as one browser behind a load balancer would.
	waiting := newVisitor(t, a)
	if p := waiting.getJSON("/events/1").position(); p != 1 {
		t.Fatalf("joined through A at %d, want 1", p)
	}
	for i := range 10 {
		base := []string{b, c}[i%2]
		waiting.base = base
		if r := waiting.getJSON("/events/1"); r.state() != "waiting" || r.position() != 1 {
			t.Fatalf("poll %d through %s: %v", i, base, r.json)
		}
	}
	later := newVisitor(t, c)
	if p := later.getJSON("/events/1").position(); p != 2 {
		t.Fatalf("a later visitor through C at %d, want 2", p)
	}
	inside.base = b
	inside.get("/events/done") // the site releases the first visitor through B
	waiting.base = c
	waiting.waitAdmitted("concert", 3*time.Second)
	if r := waiting.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("after the release, through C: %d", r.status)
	}
	if n := len(up.visitors); n != 2 {
		t.Fatalf("the site saw %d visitors, want 2", n)
	}
}

// A gateway restart loses nobody: the line is in Redis and the tickets in
// the visitors' cookies, under the same keys.
func TestRedis_GatewayRestartLosesNobody(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 0\n    tick: 50ms", srv.Addr(), "closed", "")
	app, err := NewApp(mustParse(t, cfg), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	base := "http://" + app.Addr().String()
	var vs []*visitor
	for i := range 5 {
		v := newVisitor(t, base)
		if p := v.getJSON("/events/").position(); p != i+1 {
			t.Fatalf("visitor %d at %d", i, p)
		}
		vs = append(vs, v)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = app.Close()

	_, base2 := startGateway(t, cfg)
	for i, v := range vs {
		v.base = base2
		if r := v.getJSON("/events/"); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("after the gateway restart visitor %d: %v", i, r.json)
		}
	}
}

// Redis restarted without persistence: returning ticket holders are put
// back in ticket order, ahead of whoever arrived after the restart.
func TestRedis_RestartPutsTicketHoldersBackInOrder(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	_, base := startGateway(t, redisConfig(site.URL, "    max_active: 0\n    tick: 50ms", srv.Addr(), "closed", ""))
	var holders []*visitor
	for range 3 {
		v := newVisitor(t, base)
		v.getJSON("/events/")
		holders = append(holders, v)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	newcomer := newVisitor(t, base)
	waitFor(t, 3*time.Second, func() bool { return newcomer.getJSON("/events/").state() == "waiting" })
	for _, i := range []int{1, 0, 2} { // they come back out of order
		holders[i].getJSON("/events/")
	}
	for i, v := range holders {
		if p := v.getJSON("/events/").position(); p != i+1 {
			t.Errorf("ticket holder %d back at %d, want %d", i, p, i+1)
		}
	}
	if p := newcomer.getJSON("/events/").position(); p != 4 {
		t.Errorf("the newcomer at %d, want 4 (behind every returning holder)", p)
	}
}

// Redis stopped mid-run: under "closed", admitted visitors still reach the
// site, new ones get the hold page quickly; under "open" everyone passes.
// Redis back: service resumes without a gateway restart.
func TestRedis_StoppedMidRun(t *testing.T) {
	for _, mode := range []string{"closed", "open"} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.Start(t)
			up, site := newUpstream(t)
			// open_after 0s: open at the first failure (TestDoors_OpenOnlyAfterOpenAfter
			// covers the delay).
			gw, base := startGateway(t, redisConfig(site.URL, "    max_active: 1\n    tick: 50ms", srv.Addr(), mode+"\n  open_after: 0s", ""))
			inside, waiting := newVisitor(t, base), newVisitor(t, base)
			inside.get("/events/1")
			if waiting.getJSON("/events/1").state() != "waiting" {
				t.Fatal("the second visitor must wait")
			}
			srv.Stop()
			ready := &adminClient{t: t, base: "http://" + gw.AdminAddr().String()}
			// Ready all the same: the hold page is this instance's to give.
			if code, _, body := ready.do("GET", "/readyz", ""); code != http.StatusOK || !strings.Contains(body, "store: down") {
				t.Fatalf("/readyz with Redis stopped: %d %s", code, body)
			}
			if r := inside.get("/events/2"); r.body != "site:/events/2" {
				t.Fatalf("admitted visitor during the outage: %d %q", r.status, r.body)
			}
			start := time.Now()
			r := newVisitor(t, base).getJSON("/events/3")
			took := time.Since(start)
			if took > 2*time.Second {
				t.Fatalf("a new visitor waited %v during the outage", took)
			}
			switch mode {
			case "closed":
				if r.status != 200 || r.state() != "hold" {
					t.Fatalf("new visitor under closed: %d %q", r.status, r.body)
				}
				if r := waiting.getJSON("/events/1"); r.state() != "hold" {
					t.Fatalf("waiting visitor under closed: %v", r.json)
				}
			case "open":
				if r.body != "site:/events/3" {
					t.Fatalf("new visitor under open: %d %q", r.status, r.body)
				}
			}
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			// Redis came back empty: the visitor who was inside stays inside.
			// It asks first: during the recovery grace a restored waiting
			// ticket may take a free slot by a tick (the contract,
			// storetest's RecoveryGrace), and the one who was inside would
			// then wait at the head of the line for the next.
			waitFor(t, 5*time.Second, func() bool { return inside.get("/events/4").body == "site:/events/4" })
			waitFor(t, 5*time.Second, func() bool { return waiting.getJSON("/events/1").state() == "waiting" })
			if code, _, _ := ready.do("GET", "/readyz", ""); code != http.StatusOK {
				t.Fatalf("/readyz after Redis came back: %d", code)
			}
			if strings.Contains(strings.Join(up.paths, ","), "/events/1,/events/1") {
				t.Fatalf("the waiting visitor reached the site during the outage: %v", up.paths)
			}
		})
	}
}

func mustParse(t testing.TB, yaml string) *Settings {
	t.Helper()
	cfg, err := parseConfig("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func waitFor(t testing.TB, within time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("condition not met within %v", within)
}

// An override made through gateway A's admin API takes effect on gateway B
// within one tick: it lives in Redis, not in A.
func TestRedis_OverrideReachesEveryInstance(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 0\n    tick: 100ms", srv.Addr(), "closed", "")
	a, _ := startGateway(t, cfg)
	b, baseB := startGateway(t, cfg)
	v := newVisitor(t, baseB)
	if s := v.getJSON("/events/1").state(); s != "waiting" {
		t.Fatalf("joined through B: %s", s)
	}
	// B's admitter must read the change itself: B's own view shows it
	// within a tick (A's admitter, sharing the line, could otherwise admit
	// the visitor and hide that B never looked).
	start := time.Now()
	if code, _, body := newAdmin(t, a).do("PATCH", "/admin/api/rooms/concert", `{"max_active":1}`); code != 200 {
		t.Fatalf("PATCH through A: %d %s", code, body)
	}
	waitFor(t, time.Second, func() bool {
		_, m, _ := newAdmin(t, b).do("GET", "/admin/api/rooms/concert", "")
		eff, _ := m["effective"].(map[string]any)
		return num(eff, "max_active") == 1
	})
	t.Logf("B applied the override %v after the change through A (tick 100ms)", time.Since(start))
	v.waitAdmitted("concert", 2*time.Second)
	// One tick of B (100 ms) is the design; allow for a loaded machine, not
	// for the change being missed.
	took := time.Since(start)
	t.Logf("admitted through B %v after the change through A (tick 100ms)", took)
	if took > time.Second {
		t.Fatalf("the override took %v to reach B, ten ticks", took)
	}
	_, m, _ := (&adminClient{t: t, base: "http://" + a.AdminAddr().String(), token: adminToken}).do("GET", "/admin/api/rooms/concert", "")
	if eff, _ := m["effective"].(map[string]any); num(eff, "max_active") != 1 {
		t.Fatalf("A's view of the room: %v", m)
	}
}
