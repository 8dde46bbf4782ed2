package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
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

// TestPolls_NeverGrowAcrossGateways: a visitor behind a load balancer
// whose polls land on two gateways in turn, each answering near the
// front from its own tick's view (the two tick unaligned, one read before
// the other's admission), is never told a larger position than it was
// told before: a view older than the visitor's ticket (its anchor) shows
// the ticket's place, not the view's. One visitor starts near place 60
// (within exactFront, answered from Stats.Head), one near 110 (answered
// from the anchor and then the head), one near 140 (from the anchor, past
// the head's 128 places, for a while). The line is built while the room is
// closed and opened after, so it moves only once both are polling.
func TestPolls_NeverGrowAcrossGateways(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	room := "    max_active: 0\n    admit_rate: 600/m\n    admit_burst: 10\n    tick: 1s\n    join_limit: unlimited\n    page: { refresh: 1s }"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	cfg = strings.Replace(cfg, ", dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms", "", 1)
	app, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	bases := []string{a, b}
	const n = 150
	vs := make([]*visitor, n)
	for i := range vs {
		vs[i] = newVisitor(t, bases[i%2])
		placeOnce(vs[i], "/events/1")
		if r := placeOnce(vs[i], "/events/1"); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("visitor %d placed: %s at %d", i, r.state(), r.position())
		}
	}
	time.Sleep(2500 * time.Millisecond) // both gateways' views hold the line
	open := 1000
	if err := app.store.SetOverride(context.Background(), "concert", waitroom.Override{MaxActive: &open}); err != nil {
		t.Fatal(err)
	}
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	watched := []int{59, 109, 139}
	prev := []int{60, 110, 140}
	polls := make([]int, len(watched))
	inside := make([]bool, len(watched))
	for k, deadline := 0, time.Now().Add(2*time.Minute); slices.Contains(inside, false); k++ {
		if time.Now().After(deadline) {
			t.Fatalf("not all admitted within 2 minutes: at %v after %v polls", prev, polls)
		}
		for j, i := range watched {
			if inside[j] {
				continue
			}
			v := vs[i]
			v.base = bases[(k+j)%2]
			r := v.getJSON(status)
			if r.state() == "admitted" {
				inside[j] = true
				continue
			}
			p := r.position()
			if r.state() != "waiting" || p < 1 || p > prev[j] {
				t.Fatalf("visitor %d, poll %d through %s: %s at %d after %d", i+1, polls[j]+1, v.base, r.state(), p, prev[j])
			}
			prev[j] = p
			polls[j]++
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("polls before admission: %v", polls)
	if polls[0] < 20 || polls[1] < 40 || polls[2] < 60 {
		t.Errorf("polls before admission %v, want at least 20, 40 and 60: the line moved faster than the test looked", polls)
	}
}
