package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The attacks of "one person, one place", each played through a real
// gateway, on the memory store and on Redis.

// trustedConfig is gwConfig on store (memory when addr is ""), with
// 127.0.0.1 a trusted proxy, so a test can speak for any client network
// through X-Forwarded-For.
func trustedConfig(upstream, room, addr string) string {
	cfg := gwConfig(upstream, room)
	if addr != "" {
		cfg = redisConfig(upstream, room, addr, "closed", "")
	}
	return strings.Replace(cfg, "listen: \"127.0.0.1:0\"\n", "listen: \"127.0.0.1:0\"\nserver: { trusted_proxies: [127.0.0.1/32] }\n", 1)
}

// from makes the visitor's requests come from client through the trusted
// proxy.
func (v *visitor) from(client, method, path string, hdr ...string) reply {
	v.t.Helper()
	return v.do(method, path, append([]string{"X-Forwarded-For", client, "Accept", "application/json"}, hdr...)...)
}

// stores runs fn on the memory store (srv nil, addr "") and on a fresh
// Redis.
func stores(t *testing.T, fn func(t *testing.T, srv *redistest.Server, addr string)) {
	t.Run("memory", func(t *testing.T) { fn(t, nil, "") })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		fn(t, srv, srv.Addr())
	})
}

// A flood of cookieless requests from one network takes no place: nobody's
// position or the room's waiting count changes, and on Redis each costs
// less than 20 bytes (a ticket number, no line entry).
func TestGuard_CookielessFloodTakesNoPlace(t *testing.T) {
	stores(t, func(t *testing.T, srv *redistest.Server, addr string) {
		_, site := newUpstream(t)
		app, base := startGateway(t, trustedConfig(site.URL, "    max_active: 0\n    join_limit: unlimited\n    tick: 50ms", addr))
		real := newVisitor(t, base)
		real.from("198.51.100.9", http.MethodGet, "/events/1")
		if r := real.from("198.51.100.9", http.MethodGet, "/events/1"); r.state() != "waiting" || r.position() != 1 {
			t.Fatalf("the real visitor: %v", r.json)
		}
		var before int64
		if srv != nil {
			before = keyBytes(t, srv.Client())
		}
		const flood = 500
		for i := range flood {
			bot := newVisitor(t, base)
			if r := bot.from("203.0.113.7", http.MethodGet, "/events/1"); r.state() != "waiting" {
				t.Fatalf("bot %d: %d %v", i, r.status, r.json)
			}
		}
		if srv != nil {
			grew := keyBytes(t, srv.Client()) - before
			t.Logf("Redis keys grew %d bytes (MEMORY USAGE) for %d never-returned joins (%.1f bytes each)", grew, flood, float64(grew)/flood)
			if grew > 20*flood {
				t.Errorf("Redis grew %d bytes for %d never-returned joins, more than 20 each", grew, flood)
			}
		}
		if r := real.from("198.51.100.9", http.MethodGet, "/.waitroom/status?room=concert"); r.position() != 1 {
			t.Errorf("the real visitor after the flood: %v", r.json)
		}
		waitFor(t, 2*time.Second, func() bool {
			_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
			return num(m, "waiting") == 1
		})
	})
}

// keyBytes sums MEMORY USAGE over every key of a server the test owns:
// what its data holds, without the server's own buffers and caches,
// which move by more than a small room's data between two readings.
func keyBytes(t testing.TB, c redis.UniversalClient) int64 {
	t.Helper()
	ctx := context.Background()
	var total int64
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		n, err := c.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// join_limit is one quota shared by every instance: two gateways on one
// Redis give a network five places in all (tickets brought back), then
// 429 with Retry-After to its newcomers; another network is not affected.
func TestGuard_JoinLimitIsOneAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := trustedConfig(site.URL, "    max_active: 0\n    join_limit: 5/m\n    tick: 50ms", srv.Addr())
	cfg = strings.Replace(cfg, "key_prefix: gw", "key_prefix: quota", 1) // one prefix for both
	_, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	for i := range 5 {
		base := []string{a, b}[i%2]
		v := newVisitor(t, base)
		if r := v.from("203.0.113.7", http.MethodGet, "/events/1"); r.status != 200 || r.state() != "waiting" {
			t.Fatalf("ticket %d of the network through %s: %d %v", i+1, base, r.status, r.json)
		}
		v.base = []string{a, b}[(i+1)%2] // brought back through the other
		if r := v.from("203.0.113.7", http.MethodGet, "/events/1"); r.status != 200 || r.state() != "waiting" || num(r.json, "position") != i+1 {
			t.Fatalf("ticket %d of the network brought back: %d %v", i+1, r.status, r.json)
		}
	}
	r := newVisitor(t, b).from("203.0.113.8", http.MethodGet, "/events/1") // the same /24
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || r.state() != "limited" || retry < 1 || retry > 60 {
		t.Fatalf("the sixth ticket of the network: %d Retry-After %q %v", r.status, r.header.Get("Retry-After"), r.json)
	}
	if r.header.Get("Set-Cookie") != "" {
		t.Fatal("a refused newcomer got a ticket")
	}
	if r := newVisitor(t, a).from("198.51.100.7", http.MethodGet, "/events/1"); r.status != 200 || r.state() != "waiting" {
		t.Fatalf("another network: %d %v", r.status, r.json)
	}
}

// The site's signed account keys the place: two browsers of one account
// share one place, a forged signature is anonymous, and with required a
// visitor without one is refused.
func TestGuard_IdentityOnePlacePerAccount(t *testing.T) {
	const secret = "an-identity-secret-of-32-bytes-or-more"
	id, err := waitroom.IdentityConfig{Cookie: "acct", Secret: secret}.Build()
	if err != nil {
		t.Fatal(err)
	}
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		room := fmt.Sprintf("    max_active: 0\n    tick: 50ms\n    identity: { cookie: acct, secret: %q }", secret)
		app, base := startGateway(t, trustedConfig(site.URL, room, addr))
		phone, laptop, other := newVisitor(t, base), newVisitor(t, base), newVisitor(t, base)
		phone.from("198.51.100.1", http.MethodGet, "/events/1", "Cookie", "acct="+id.Sign("kim@example.com", time.Now().Add(time.Hour)))
		p1 := phone.from("198.51.100.1", http.MethodGet, "/events/1", "Cookie", "acct="+id.Sign("kim@example.com", time.Now().Add(time.Hour)))
		other.from("198.51.100.2", http.MethodGet, "/events/1", "Cookie", "acct="+id.Sign("lee@example.com", time.Now().Add(time.Hour)))
		other.from("198.51.100.2", http.MethodGet, "/events/1", "Cookie", "acct="+id.Sign("lee@example.com", time.Now().Add(time.Hour)))
		laptop.from("203.0.113.5", http.MethodGet, "/events/1", "Waitroom-Identity", id.Sign("kim@example.com", time.Now().Add(time.Hour)))
		p2 := laptop.from("203.0.113.5", http.MethodGet, "/events/1", "Waitroom-Identity", id.Sign("kim@example.com", time.Now().Add(time.Hour)))
		if p1.position() != 1 || p2.position() != 1 {
			t.Fatalf("one account from two devices: %v and %v, want one place, the first", p1.json, p2.json)
		}
		forged := id.Sign("kim@example.com", time.Now().Add(time.Hour))
		forged = forged[:len(forged)-2] + "AA"
		mallory := newVisitor(t, base)
		mallory.from("192.0.2.9", http.MethodGet, "/events/1", "Waitroom-Identity", forged)
		if r := mallory.from("192.0.2.9", http.MethodGet, "/events/1", "Waitroom-Identity", forged); r.position() != 3 {
			t.Fatalf("a forged identity: %v, want an anonymous place of its own (3)", r.json)
		}
		waitFor(t, 2*time.Second, func() bool {
			_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
			return num(m, "waiting") == 3
		})

		_, strict := startGateway(t, trustedConfig(site.URL, room[:len(room)-2]+", required: true }", addr))
		r := newVisitor(t, strict).from("198.51.100.3", http.MethodGet, "/events/1")
		if r.status != http.StatusForbidden || r.state() != "identity" || r.header.Get("Set-Cookie") != "" {
			t.Fatalf("no identity where it is required: %d %v", r.status, r.json)
		}
		if r := newVisitor(t, strict).from("198.51.100.3", http.MethodGet, "/events/1", "Waitroom-Identity", id.Sign("park@example.com", time.Now().Add(time.Hour))); r.status != 200 {
			t.Fatalf("a signed-in visitor where identity is required: %d %v", r.status, r.json)
		}
	})
}

// An admitted ticket serves session_clients clients at once: replayed from
// ten other networks, one is served beside the owner and the rest are
// refused (409 shared, their copy kept, no new ticket), while the owner
// keeps going; session_max ends a session after that much use.
func TestGuard_SharedTicketAndSessionMax(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		up, site := newUpstream(t)
		_, base := startGateway(t, trustedConfig(site.URL, "    max_active: 1\n    session_clients: 2\n    tick: 50ms", addr))
		owner := newVisitor(t, base)
		if r := owner.from("198.51.100.1", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
			t.Fatalf("the owner: %d %q", r.status, r.body)
		}
		cookie := "waitroom_concert=" + owner.cookieValue("concert")
		served := 0
		for i := range 10 {
			resale := newVisitor(t, base) // a fresh jar: the copied cookie only
			r := resale.from(fmt.Sprintf("203.0.%d.9", 113+i), http.MethodGet, "/events/1", "Cookie", cookie)
			switch {
			case r.body == "site:/events/1":
				served++
			case r.status == http.StatusConflict && r.state() == "shared" && r.header.Get("Set-Cookie") == "" && r.header.Get("Retry-After") != "":
			default:
				t.Fatalf("the ticket replayed from network %d: %d %v", i, r.status, r.json)
			}
			if r := owner.from("198.51.100.1", http.MethodGet, "/events/2"); r.body != "site:/events/2" {
				t.Fatalf("the owner after replay %d: %d %q", i, r.status, r.body)
			}
		}
		if served != 1 {
			t.Fatalf("%d other networks were served on one admission, want 1 (session_clients 2 with the owner's)", served)
		}
		up.mu.Lock()
		visitors := len(up.visitors)
		up.mu.Unlock()
		if visitors != 1 {
			t.Fatalf("the site saw %d visitor ids, want the owner's only", visitors)
		}

		_, capped := startGateway(t, trustedConfig(site.URL, "    max_active: 1\n    session_max: 3s\n    tick: 50ms", addr))
		v, next := newVisitor(t, capped), newVisitor(t, capped)
		start := time.Now()
		if r := v.from("198.51.100.1", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
			t.Fatalf("session_max: first request %d", r.status)
		}
		next.from("198.51.100.2", http.MethodGet, "/events/1")
		if s := next.from("198.51.100.2", http.MethodGet, "/events/1").state(); s != "waiting" {
			t.Fatalf("the next visitor: %s", s)
		}
		for time.Since(start) < 2500*time.Millisecond {
			if r := v.from("198.51.100.1", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
				t.Fatalf("session_max 3s: ended after %v", time.Since(start))
			}
			time.Sleep(250 * time.Millisecond)
		}
		// Then it ends however much it is used, and the slot goes on.
		waitFor(t, 2*time.Second, func() bool {
			return v.from("198.51.100.1", http.MethodGet, "/events/1").body != "site:/events/1"
		})
		if took := time.Since(start); took > 4*time.Second {
			t.Fatalf("session_max 3s: still inside after %v", took)
		}
		next.waitAdmitted("concert", 2*time.Second)
	})
}

// Requests that never come back hold no slot for long: five fire-and-forget
// cookieless requests fill a room of five, and a real visitor is in within
// abandon_after and two ticks.
func TestGuard_FireAndForgetHoldsNoSlot(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		room := "    max_active: 5\n    abandon_after: 2s\n    tick: 100ms\n    page: { refresh: 1s, refresh_max: 1s }"
		_, base := startGateway(t, trustedConfig(site.URL, room, addr))
		for i := range 5 {
			if r := newVisitor(t, base).from("203.0.113.7", http.MethodGet, "/events/1"); r.body != "site:/events/1" {
				t.Fatalf("request %d: %d %v", i, r.status, r.json)
			}
		}
		start := time.Now()
		real := newVisitor(t, base)
		if s := real.from("198.51.100.9", http.MethodGet, "/events/1").state(); s != "waiting" {
			t.Fatalf("the real visitor in a room the flood filled: %s", s)
		}
		for real.from("198.51.100.9", http.MethodGet, "/.waitroom/status?room=concert").state() != "admitted" {
			// abandon_after, two ticks, and a poll's worth of slack.
			if time.Since(start) > 2*time.Second+200*time.Millisecond+300*time.Millisecond {
				t.Fatalf("not admitted %v after the flood (abandon_after 2s, tick 100ms)", time.Since(start))
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("the real visitor went in %v after five fire-and-forget requests filled the room", time.Since(start))
	})
}

// A data loss cannot be farmed: tickets that stopped polling before the
// loss come back at the back, behind a visitor who arrived after it; and
// a restored admission counts toward max_active, so with max_active 1 a
// restored visitor and a newcomer are never two inside, whichever comes
// first.
func TestGuard_DataLossCannotBeFarmed(t *testing.T) {
	room := "    max_active: 0\n    abandon_after: 2s\n    tick: 50ms\n    page: { refresh: 1s, refresh_max: 1s }"
	stores(t, func(t *testing.T, srv *redistest.Server, addr string) {
		_, site := newUpstream(t)
		cfg := trustedConfig(site.URL, room, addr)
		_, base := startGateway(t, cfg)
		var hoard []*visitor
		for range 5 {
			v := newVisitor(t, base)
			v.getJSON("/events/1")
			v.getJSON("/events/1")
			hoard = append(hoard, v)
		}
		time.Sleep(2500 * time.Millisecond) // they stop polling for longer than abandon_after
		base = lose(t, srv, cfg, base)
		newcomer := newVisitor(t, base)
		newcomer.getJSON("/events/1")
		if p := newcomer.getJSON("/events/1").position(); p != 1 {
			t.Fatalf("the newcomer after the loss at %d: %v", p, newcomer.getJSON("/events/1").json)
		}
		for i, v := range hoard {
			v.base = base
			v.getJSON("/events/1")
			if p := v.getJSON("/events/1").position(); p <= 1 {
				t.Fatalf("hoarded ticket %d came back at %d, ahead of the newcomer", i, p)
			}
		}
		if p := newcomer.getJSON("/.waitroom/status?room=concert").position(); p != 1 {
			t.Fatalf("the newcomer after the hoard came back: %d, want still 1", p)
		}
	})
	for _, first := range []string{"restored", "newcomer"} {
		t.Run("max_active 1, "+first+" first", func(t *testing.T) {
			stores(t, func(t *testing.T, srv *redistest.Server, addr string) {
				up, site := newUpstream(t)
				cfg := trustedConfig(site.URL, "    max_active: 1\n    tick: 50ms", addr)
				// Every request asks the store: a gateway's session cache
				// would let the visitor inside finish its interval (1s by
				// default) on the gateway's word, which is the cache's
				// documented trade, not a restore.
				cfg = strings.Replace(cfg, "kind: redis", "kind: redis\n  session_cache: 0s", 1)
				if addr == "" {
					cfg += "store: { session_cache: 0s }\n"
				}
				_, base := startGateway(t, cfg)
				inside := newVisitor(t, base)
				inside.get("/events/1")
				if r := inside.get("/events/1"); r.body != "site:/events/1" {
					t.Fatalf("inside before the loss: %d", r.status)
				}
				base = lose(t, srv, cfg, base)
				lost := up.count()
				newcomer := newVisitor(t, base)
				inside.base = base
				order := []*visitor{inside, newcomer}
				if first == "newcomer" {
					order = []*visitor{newcomer, inside}
				}
				for range 3 {
					for _, v := range order {
						v.get("/events/1")
					}
				}
				if in := up.since(lost); len(in) != 1 {
					t.Fatalf("%d visitors reached the site after the loss, max_active 1", len(in))
				}
			})
		})
	}
}

// lose makes the store lose its data: Redis restarts empty, or, on the
// memory store, a new gateway takes over with the same keys (its memory is
// empty). It returns the base to talk to afterwards.
func lose(t *testing.T, srv *redistest.Server, cfg, base string) string {
	t.Helper()
	if srv == nil {
		_, base = startGateway(t, cfg)
		return base
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	v := newVisitor(t, base)
	waitFor(t, 5*time.Second, func() bool { return v.getJSON("/festival/").status == http.StatusOK })
	return base
}

// A gateway that starts with an opens_at already past, on a room whose
// line grew in FIFO order, draws nobody: only a pre-queue is ever shuffled.
func TestGuard_PastOpeningKeepsFIFO(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 0\n    tick: 50ms", srv.Addr(), "closed", "fifo")
	_, base := startGateway(t, cfg)
	var line []*visitor
	for range 6 {
		v := newVisitor(t, base)
		v.getJSON("/events/1")
		v.getJSON("/events/1")
		line = append(line, v)
	}
	opened := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	late := strings.Replace(cfg, "    tick: 50ms", "    tick: 50ms\n    schedule: { opens_at: \""+opened+"\" }", 1)
	app, base2 := startGateway(t, late)
	waitFor(t, 3*time.Second, func() bool {
		_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
		sc, _ := m["schedule"].(map[string]any)
		_, drawn := sc["shuffle_seed"]
		return drawn
	})
	for i, v := range line {
		v.base = base2
		if p := v.getJSON("/.waitroom/status?room=concert").position(); p != i+1 {
			t.Fatalf("visitor %d of a FIFO line at %d after a gateway with a past opens_at ticked", i+1, p)
		}
	}
}
