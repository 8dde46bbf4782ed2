package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// junkConfig is templateConfig on store (memory when addr is "") with
// 127.0.0.1 a trusted proxy, so a test speaks for any client network
// through X-Forwarded-For. It returns the Redis key prefix too.
func junkConfig(upstream, template, addr string) (string, string) {
	cfg := templateConfig(upstream, template)
	prefix := fmt.Sprintf("junk%d", prefixSeq.Add(1))
	if addr != "" {
		cfg = strings.Replace(cfg, "routes:", fmt.Sprintf("store: { kind: redis, redis: { addrs: [%q], key_prefix: %s } }\nroutes:", addr, prefix), 1)
	}
	return strings.Replace(cfg, "listen: \"127.0.0.1:0\"\n", "listen: \"127.0.0.1:0\"\nserver: { trusted_proxies: [127.0.0.1/32] }\n", 1), prefix
}

// junkGet is one request of a client that keeps no cookie and never comes
// back, from client's network.
func junkGet(t testing.TB, c *http.Client, url, client string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Forwarded-For", client)
	req.Header.Set("Accept", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// roomsInService counts the rooms the admin APIs of apps show.
func roomsInService(t *testing.T, apps []*App) int {
	n := 0
	for _, app := range apps {
		n += len(liveRooms(t, app))
	}
	return n
}

// TestTemplate_JunkFillsNoRoom plays the audit's attacker against
// max_rooms: 20, on one gateway with memory and on three with Redis. A
// thousand status polls for invented events make no room anywhere; a
// thousand first requests from a thousand networks that never come back
// count no room; one network makes at most create_limit's rooms. Then
// twenty real events, each visitor back with its ticket through another
// gateway, all get their places, and a twenty-first is "full": exactly
// the real ones count.
func TestTemplate_JunkFillsNoRoom(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		instances int
		redis     bool
	}{{"memory", 1, false}, {"redis-3", 3, true}} {
		t.Run(c.name, func(t *testing.T) {
			_, site := newUpstream(t)
			var rdb redis.UniversalClient
			addr := ""
			if c.redis {
				srv := redistest.Start(t)
				addr, rdb = srv.Addr(), srv.Client()
			}
			cfg, prefix := junkConfig(site.URL, "    max_active: 0\n    tick: 200ms\n    max_rooms: 20", addr)
			var apps []*App
			var bases []string
			for range c.instances {
				app, base := startGateway(t, cfg)
				apps, bases = append(apps, app), append(bases, base)
			}
			plain := &http.Client{Timeout: 10 * time.Second}
			none := 0
			for i := range 1000 {
				code, body := junkGet(t, plain, fmt.Sprintf("%s/.waitroom/status?room=event-junk%d", bases[i%len(bases)], i), "203.0.113.9")
				if code == http.StatusOK && strings.Contains(body, `"state":"none"`) {
					none++
				}
			}
			made := roomsInService(t, apps)
			t.Logf("1,000 status polls for invented events: %d rooms made, %d answered none", made, none)
			if made != 0 || none != 1000 {
				t.Fatalf("status polls made %d rooms; %d of 1000 answered none", made, none)
			}
			for i := range 1000 {
				client := fmt.Sprintf("10.%d.%d.1", i/256, i%256)
				if code, body := junkGet(t, plain, fmt.Sprintf("%s/events/junk%d/", bases[i%len(bases)], i), client); code != http.StatusOK {
					t.Fatalf("junk request %d from %s: %d %.200s", i, client, code, body)
				}
			}
			limited := 0
			for i := range 100 {
				code, _ := junkGet(t, plain, fmt.Sprintf("%s/events/one%d/", bases[i%len(bases)], i), "192.0.2.1")
				if code == http.StatusTooManyRequests {
					limited++
				}
			}
			t.Logf("one network asked for 100 new events: %d refused (create_limit 10/m)", limited)
			if limited < 100-11 {
				t.Fatalf("one network made %d rooms, want at most 11", 100-limited)
			}
			realEvents(t, bases)
			if rdb != nil {
				n, err := rdb.ZCard(context.Background(), "{"+prefix+":tpl:event-{id}}").Result()
				if err != nil || n != 20 {
					t.Fatalf("rooms counted in Redis: %d (%v), want the 20 real ones", n, err)
				}
			}
		})
	}
}

// realEvents: max_rooms (20) real events each get a visitor who comes
// back with its ticket, through another gateway when there are several,
// and holds the first place; the visitor of a 21st gets its ticket and
// is told "full" when it comes back.
func realEvents(t *testing.T, bases []string) {
	t.Helper()
	for id := range 21 {
		v := newVisitor(t, bases[id%len(bases)])
		client, path := fmt.Sprintf("198.51.%d.7", id), fmt.Sprintf("/events/real%d/", id)
		if r := v.from(client, http.MethodGet, path); r.status != http.StatusOK || r.state() != "waiting" {
			t.Fatalf("event %d, first request: %d %v", id, r.status, r.json)
		}
		v.base = bases[(id+1)%len(bases)]
		r := v.from(client, http.MethodGet, path)
		switch {
		case id < 20 && (r.state() != "waiting" || r.position() != 1):
			t.Fatalf("real event %d, back with its ticket: %d %v", id, r.status, r.json)
		case id == 20 && (r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == ""):
			t.Fatalf("a 21st event past max_rooms: %d %v, want 503 full", r.status, r.json)
		}
	}
	if len(bases) < 3 {
		return
	}
	// Each real event is in service on two gateways; on the third, one
	// network's newcomers to all twenty spend none of its create_limit:
	// the store counts those rooms already.
	for id := range 20 {
		v := newVisitor(t, bases[(id+2)%3])
		if r := v.from("192.0.2.200", http.MethodGet, fmt.Sprintf("/events/real%d/", id)); r.state() != "waiting" {
			t.Fatalf("a newcomer to real event %d on its third gateway: %d %v", id, r.status, r.json)
		}
	}
}

// TestTemplate_OnlyATicketMakesARoom: the visitor endpoints and nginx's
// auth check, which take no ticket, make no room of a template: status
// answers "none" (as a room answers a visitor without a ticket), enter
// and leave 404, the check 401 with state none. A joining auth request
// (Traefik's) takes a ticket and makes the room; its visitor's status
// poll then finds its place.
func TestTemplate_OnlyATicketMakesARoom(t *testing.T) {
	_, site := newUpstream(t)
	cfg, _ := junkConfig(site.URL, "    max_active: 0\n    tick: 100ms", "")
	app, base := startGateway(t, cfg)
	v := newVisitor(t, base)
	if r := v.getJSON("/.waitroom/status?room=event-5"); r.status != http.StatusOK || r.state() != "none" {
		t.Fatalf("status of a room nobody made: %d %v", r.status, r.json)
	}
	for _, path := range []string{"/.waitroom/enter?room=event-5", "/.waitroom/leave?room=event-5"} {
		if r := v.do(http.MethodPost, path, "Sec-Fetch-Site", "same-origin"); r.status != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", path, r.status)
		}
	}
	r := v.do(http.MethodGet, "/.waitroom/auth", "X-Original-URI", "/events/5/", "X-Original-Method", "GET")
	if r.status != http.StatusUnauthorized || r.header.Get("Waitroom-State") != "none" {
		t.Fatalf("nginx's check about a room nobody made: %d %v", r.status, r.header)
	}
	if n := len(liveRooms(t, app)); n != 0 {
		t.Fatalf("requests that take no ticket made %d rooms", n)
	}
	r = v.do(http.MethodGet, "/.waitroom/auth", "X-Forwarded-Uri", "/events/5/", "X-Forwarded-Method", "GET", "Accept", "application/json")
	if r.state() != "waiting" {
		t.Fatalf("Traefik's auth request, a newcomer: %d %v", r.status, r.json)
	}
	if got := strings.Join(liveRooms(t, app), ","); got != "event-5" {
		t.Fatalf("rooms after a ticket was taken: %q", got)
	}
	if r := v.getJSON("/.waitroom/status?room=event-5"); r.state() != "waiting" || r.position() != 1 {
		t.Fatalf("the ticket holder's status: %v", r.json)
	}
}

// TestTemplate_IdleRoomsCostRedisNothing: three gateways each serve 300
// rooms whose only visitors never came back (no place, nobody inside).
// Once each room has ticked, Redis sees next to no commands for them
// (INFO commandstats over three seconds): they sleep until a request
// wakes them, and one that does is served at once.
func TestTemplate_IdleRoomsCostRedisNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	_, site := newUpstream(t)
	cfg, _ := junkConfig(site.URL, "    max_active: 0\n    tick: 1s", srv.Addr())
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	const rooms = 300
	plain := &http.Client{Timeout: 10 * time.Second}
	for i := range rooms {
		for j, base := range bases {
			client := fmt.Sprintf("10.%d.%d.1", j*2+i/256, i%256) // a network of its own
			if code, body := junkGet(t, plain, fmt.Sprintf("%s/events/idle%d/", base, i), client); code != http.StatusOK {
				t.Fatalf("room %d through gateway %d: %d %.200s", i, j, code, body)
			}
		}
	}
	time.Sleep(2500 * time.Millisecond) // every room ticked at least once
	before := commandCalls(t, rdb)
	const over = 3 * time.Second
	time.Sleep(over)
	after := commandCalls(t, rdb)
	var sum float64
	var busiest []string
	for name, n := range after {
		if d := n - before[name]; d > 0 {
			sum += d
			busiest = append(busiest, fmt.Sprintf("%s %.0f", name, d))
		}
	}
	perRoom := sum / over.Seconds() / rooms
	t.Logf("%d idle rooms on 3 gateways: %.1f Redis commands a second, %.3f per room (calls in %v: %s)",
		rooms, sum/over.Seconds(), perRoom, over, strings.Join(busiest, ", "))
	if perRoom >= 0.1 {
		t.Fatalf("idle rooms cost Redis %.3f commands per room per second, want < 0.1", perRoom)
	}
	// A visitor wakes its room: it takes its place (behind the three
	// tickets still inside their placement window) and the room ticks
	// again.
	v := newVisitor(t, bases[0])
	v.from("198.51.100.7", http.MethodGet, "/events/idle7/")
	if r := v.from("198.51.100.7", http.MethodGet, "/events/idle7/"); r.state() != "waiting" || r.position() < 1 || r.position() > 4 {
		t.Fatalf("a visitor of a sleeping room: %d %v", r.status, r.json)
	}
	woke := commandCalls(t, rdb)
	time.Sleep(1500 * time.Millisecond)
	if n := commandCalls(t, rdb)["evalsha"] - woke["evalsha"]; n < 2 {
		t.Fatalf("the room a visitor waits in ran %.0f scripts in 1.5s: it did not wake", n)
	}
}

// commandCalls reads the calls of every command in INFO commandstats but
// the test's own (INFO).
func commandCalls(t *testing.T, rdb redis.UniversalClient) map[string]float64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]float64{}
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		n, _, _ := strings.Cut(strings.TrimPrefix(fields, "calls="), ",")
		calls[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseFloat(n, 64)
	}
	return calls
}

// TestTemplate_SleepingRoomWakesToItsOverride: a room asleep on gateway B
// (nobody in line, nobody inside) while the site closes it through
// gateway A must not hand B's next newcomer a ticket on its old word.
// Here the woken tick may read the override first too;
// TestRooms_SleepingRoomReadsItsOverrideOnWaking pins that the waking
// request itself reads it.
func TestTemplate_SleepingRoomWakesToItsOverride(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg, _ := junkConfig(site.URL, "    max_active: 0\n    tick: 100ms", srv.Addr())
	a, baseA := startGateway(t, cfg)
	_, baseB := startGateway(t, cfg)
	v := newVisitor(t, baseA)
	v.from("198.51.100.1", http.MethodGet, "/events/1/")
	if r := v.from("198.51.100.1", http.MethodGet, "/events/1/"); r.state() != "waiting" {
		t.Fatalf("through A: %v", r.json)
	}
	if r := v.do(http.MethodPost, "/.waitroom/leave?room=event-1", "Sec-Fetch-Site", "same-origin", "X-Forwarded-For", "198.51.100.1"); r.status != http.StatusSeeOther {
		t.Fatalf("leave: %d", r.status)
	}
	if r := newVisitor(t, baseB).from("198.51.101.1", http.MethodGet, "/events/1/"); r.state() != "waiting" {
		t.Fatalf("a newcomer through B: %v", r.json)
	}
	time.Sleep(500 * time.Millisecond) // both rooms tick, find nobody, and sleep
	if code, _, body := newAdmin(t, a).do("PATCH", "/admin/api/rooms/event-1", `{"mode":"reject"}`); code != http.StatusOK {
		t.Fatalf("closing through A: %d %s", code, body)
	}
	if r := newVisitor(t, baseB).from("198.51.102.1", http.MethodGet, "/events/1/"); r.state() != "closed" {
		t.Fatalf("a newcomer through B after the room was closed through A: %d %v", r.status, r.json)
	}
}
