package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestPolls_RedisCommandsPerPoll: a line of 2,000 on one Redis, every
// visitor polling through three gateways in turn for several ticks, costs
// Redis at most 0.05 commands a poll beyond what the gateways' ticks cost
// without polls (INFO commandstats: the scripts and the commands inside
// them): a poll far back is answered from its ticket's anchor and one near
// the front from the tick's view of the line's first places, and their
// marks reach Redis in one touch a tick, a BITFIELD per thousand.
// Nobody moves (max_active 0), so every position is known: exact in the
// first 100 places, within 1% beyond.
func TestPolls_RedisCommandsPerPoll(t *testing.T) {
	srv := redistest.Start(t) // its own server: the count is this test's
	_, site := newUpstream(t)
	const tick = 2 * time.Second
	room := fmt.Sprintf("    max_active: 0\n    tick: %s\n    abandon_after: 10m\n    join_limit: unlimited", tick)
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "scale")
	cfg = strings.Replace(cfg, ", dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms", "", 1)
	const n = 2000
	cookies := seedLine(t, srv, n, "scale")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	c := benchClient()
	// A page keeps the ticket each answer sets, as a browser does: the
	// store's answer anchors it.
	var mu sync.Mutex
	poll := func(i, gw int) error {
		req, _ := http.NewRequest(http.MethodGet, bases[gw%3]+"/.waitroom/status?room=concert", nil)
		req.Header.Set("Accept", "application/json")
		mu.Lock()
		req.Header.Set("Cookie", cookies[i])
		mu.Unlock()
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		for _, ck := range res.Cookies() {
			if name, _, _ := strings.Cut(cookies[i], "="); ck.Name == name {
				mu.Lock()
				cookies[i] = ck.Name + "=" + ck.Value
				mu.Unlock()
			}
		}
		var a struct {
			State    string `json:"state"`
			Position int64  `json:"position"`
		}
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			return fmt.Errorf("visitor %d through gateway %d: %d, %v", i, gw%3, res.StatusCode, err)
		}
		want := int64(i + 1)
		if a.State != "waiting" || a.Position < want || (i < 100 && a.Position != want) || a.Position > want+max(10, want/100) {
			return fmt.Errorf("visitor %d through gateway %d: %s at %d, want waiting at %d", i, gw%3, a.State, a.Position, want)
		}
		return nil
	}
	// rounds has the visitors poll in line order, round after round, each
	// round through the gateways in turn, 8 at a time: for d, or once each
	// when d is 0. It returns the polls made.
	rounds := func(d time.Duration) int64 {
		var failed atomic.Value
		var next, done atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for failed.Load() == nil && (d == 0 || time.Since(start) < d) {
					k := next.Add(1) - 1
					if d == 0 && k >= n {
						return
					}
					if err := poll(int(k%n), int(k%n+k/n)); err != nil {
						failed.CompareAndSwap(nil, err)
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if err := failed.Load(); err != nil {
			t.Fatal(err)
		}
		return done.Load()
	}
	// Every gateway's view holds the line after a tick, and every
	// near-front ticket was polled once.
	rounds(0)
	time.Sleep(tick + 500*time.Millisecond)
	rc := &redisCmds{srv: srv}
	count := func() int64 {
		c, s := rc.read(t)
		return c + s
	}
	// The gateways' ticks cost Redis the same with polls or without (a
	// few scripts per instance per tick, whatever the line): their rate is
	// measured first, over as many ticks as the polls then run for (so
	// each window holds the same whole number of each instance's ticks),
	// and what the polls add is the rest. At this test's pace (about a thousand polls a second, under
	// the race detector) the ticks alone are about 0.1 a poll; at a real
	// instance's thousands a second they are nothing (docs/scale.md).
	i0, idleStart := count(), time.Now()
	time.Sleep(4 * tick)
	idle := float64(count()-i0) / time.Since(idleStart).Seconds()
	c0, r0, start := count(), redisCalls(t, srv, "zrank"), time.Now()
	polls := rounds(4 * tick)
	total := count() - c0
	// Exactly: no poll asked the store where it stands (a waiting
	// visitor's Decide ranks it), near the front or far back. The
	// amortized figure below is noisier, the ticks' share varying with how
	// the machine keeps their time.
	if got := redisCalls(t, srv, "zrank") - r0; got != 0 {
		t.Errorf("%d polls made Redis rank a visitor %d times, want none", polls, got)
	}
	el := time.Since(start)
	per := (float64(total) - idle*el.Seconds()) / float64(polls)
	t.Logf("%d polls in %v (%.0f/s): %d Redis commands and scripts, %.4f a poll; the ticks alone %.0f a second; the polls' own %.4f a poll",
		polls, el.Round(time.Millisecond), float64(polls)/el.Seconds(), total, float64(total)/float64(polls), idle, per)
	if per > 0.05 {
		t.Errorf("%.4f Redis commands a poll beyond the ticks', want at most 0.05", per)
	}
}

// TestPolls_KeepPollingWithoutTheStore: visitors who keep polling, near
// the front and beyond the first 100 places, through three gateways in
// turn, are answered at their exact places without Redis ranking anyone
// (ZRANK, which only a waiting visitor's Decide runs) for longer than a
// seal may get old (half abandon_after, 5 s here) and twice that: the
// gateways seal and anchor their answers again (renewAnchor) instead of
// asking the store, and nobody is dropped, their marks reaching Redis.
func TestPolls_KeepPollingWithoutTheStore(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	room := "    max_active: 0\n    tick: 200ms\n    abandon_after: 10s\n    join_limit: unlimited\n    page: { refresh: 1s, refresh_max: 2s }"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	const n = 110 // past exactFront (100), within Stats.Head (128)
	vs := make([]*visitor, n)
	for i := range vs {
		vs[i] = newVisitor(t, bases[0])
		placeOnce(vs[i], "/events/1") // a ticket
		if r := placeOnce(vs[i], "/events/1"); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("visitor %d placed: %s at %d", i, r.state(), r.position())
		}
	}
	time.Sleep(time.Second) // every gateway's view has ticked since
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	before := redisCalls(t, srv, "zrank")
	start := time.Now()
	for round := 0; time.Since(start) < 12*time.Second; round++ {
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					v := vs[i]
					v.base = bases[(round+i)%3]
					if r := v.getJSON(status); r.state() != "waiting" || r.position() != i+1 {
						errs <- fmt.Sprintf("round %d, visitor %d through %s: %s at %d, want waiting at %d", round, i, v.base, r.state(), r.position(), i+1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := redisCalls(t, srv, "zrank") - before; got != 0 {
		t.Errorf("%d visitors polling for 12s made Redis rank visitors %d times, want none", n, got)
	}
}
