package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// redisCalls is how often Redis ran cmd so far (INFO commandstats).
func redisCalls(t *testing.T, srv *redistest.Server, cmd string) int64 {
	t.Helper()
	info, err := srv.Client().Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
	return n
}

// Three gateways on one Redis: a visitor far back in line, anchored once,
// is answered by any of them without a store call (Redis runs no ZRANK,
// which only a waiting visitor's Decide does), at its exact place while
// nobody moves; its polls still keep its place (Store.Touch), while those
// who stop polling are dropped, after which its place is the store's again.
func TestAnchored_PollsSkipTheStoreAndKeepThePlace(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	room := "    max_active: 0\n    tick: 100ms\n    abandon_after: 6s\n    join_limit: unlimited\n    page: { refresh: 1s, refresh_max: 3s }"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	const n, far = 130, 10
	vs := make([]*visitor, n)
	for i := range vs {
		vs[i] = newVisitor(t, bases[0])
		vs[i].getJSON("/events/1") // a ticket
		if r := vs[i].getJSON("/events/1"); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("visitor %d placed: %s at %d", i, r.state(), r.position())
		}
	}
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	// One more poll anchors the tickets: the place answer itself carries
	// none. Then the gateways' views must have ticked since.
	for _, v := range vs[n-far:] {
		v.getJSON(status)
	}
	time.Sleep(300 * time.Millisecond)
	before := redisCalls(t, srv, "zrank")
	// An anchor serves for half abandon_after (a seal's age, 3s here);
	// three rounds take far less, even on a loaded machine.
	for round := range 3 {
		for i, v := range vs[n-far:] {
			v.base = bases[(round+i)%3]
			if r := v.getJSON(status); r.state() != "waiting" || r.position() != n-far+i+1 {
				t.Fatalf("round %d, visitor %d through %s: %s at %d, want waiting at %d", round, n-far+i, v.base, r.state(), r.position(), n-far+i+1)
			}
		}
	}
	if got := redisCalls(t, srv, "zrank") - before; got != 0 {
		t.Errorf("30 anchored polls made Redis rank visitors %d times, want none", got)
	}
	// Only the far ten keep polling, through the anchors, past
	// abandon_after: the others are dropped, and they are not.
	deadline := time.Now().Add(12 * time.Second)
	for {
		for i, v := range vs[n-far:] {
			r := v.getJSON(status)
			if r.state() != "waiting" {
				t.Fatalf("visitor %d, polling: %s", n-far+i, r.state())
			}
			// Shown places are never below the true one (at least i+1
			// remain ahead or at it), nor above the anchored one.
			if p := r.position(); p < i+1 || p > n-far+i+1 {
				t.Fatalf("visitor %d at %d, want between %d and %d", n-far+i, p, i+1, n-far+i+1)
			}
		}
		if vs[n-1].getJSON(status).position() == far {
			break // the drops moved the anchor out of bounds: the store answered
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last visitor still at %d after the others stopped for 12s", vs[n-1].getJSON(status).position())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i, v := range vs[n-far:] {
		if r := v.getJSON(status); r.state() != "waiting" || r.position() != i+1 {
			t.Errorf("visitor %d after the drops: %s at %d, want waiting at %d", n-far+i, r.state(), r.position(), i+1)
		}
	}
	if r := vs[0].getJSON(status); r.state() == "waiting" {
		t.Errorf("a visitor who stopped polling is still waiting at %d", r.position())
	}
}

// On one gateway that admits as it goes, a far visitor's place, answered
// mostly from its anchor, falls as the line moves and never grows, until
// it goes in; the marks of those polls reach the store as Touch calls.
func TestAnchored_PlaceFallsAsTheLineMoves(t *testing.T) {
	_, site := newUpstream(t)
	room := "    max_active: 1000\n    admit_rate: 50/s\n    admit_burst: 10\n    tick: 100ms\n    join_limit: unlimited\n    page: { refresh: 1s }"
	app, base := startGateway(t, gwConfig(site.URL, room))
	const n = 200
	vs := make([]*visitor, n)
	for i := range vs {
		vs[i] = newVisitor(t, base)
		vs[i].getJSON("/events/1")
		vs[i].getJSON("/events/1")
	}
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	decides := func() float64 {
		return metricValue(t, app, `waitroom_store_duration_seconds_count{op="decide",result="ok"}`)
	}
	last := vs[n-1]
	prev, polls, d0 := last.getJSON(status).position(), 0, decides()
	if prev <= 100 {
		t.Fatalf("the last visitor at %d: the line moved too fast to test", prev)
	}
	for deadline := time.Now().Add(15 * time.Second); ; {
		r := last.getJSON(status)
		if r.state() == "admitted" {
			break
		}
		polls++
		if p := r.position(); r.state() != "waiting" || p > prev || p < 1 {
			t.Fatalf("poll %d: %s at %d after %d", polls, r.state(), p, prev)
		} else {
			prev = p
		}
		if time.Now().After(deadline) {
			t.Fatalf("not admitted within 15s, at %d", prev)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Near the front every poll asks the store; further back most do not.
	if asked := decides() - d0; polls < 20 || asked > float64(polls)*3/4 {
		t.Errorf("%d polls asked the store %.0f times, want most far ones answered from the anchor", polls, asked)
	}
	if touches := metricValue(t, app, `waitroom_store_duration_seconds_count{op="touch",result="ok"}`); touches == 0 {
		t.Error("no Touch reached the store: the anchored polls' marks were lost")
	}
}
