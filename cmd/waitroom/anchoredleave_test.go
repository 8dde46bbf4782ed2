package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// Three gateways on one Redis. A ticket far back in line is copied to
// clients polling through B and C, which answer it from its anchor; its
// holder leaves through A. Within a tick of each gateway none of them
// shows the copies a place any more (before: "waiting, 130" for as long as
// the anchor served, here 30 s), and they stay without one.
func TestAnchored_LeaveHonouredOnEveryInstanceWithinATick(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	const tick = 100 * time.Millisecond
	room := "    max_active: 0\n    tick: 100ms\n    abandon_after: 60s\n    join_limit: unlimited\n    page: { refresh: 1s, refresh_max: 3s }"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	const n = 130
	var holder *visitor
	for i := range n {
		v := newVisitor(t, bases[0])
		placeOnce(v, "/events/1") // a ticket
		if r := placeOnce(v, "/events/1"); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("visitor %d placed: %s at %d", i, r.state(), r.position())
		}
		holder = v
	}
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	holder.getJSON(status) // anchors the ticket
	copied := "waitroom_concert=" + holder.cookieValue("concert")
	poll := func(base string) reply {
		return newVisitor(t, base).do(http.MethodGet, status, "Cookie", copied, "Accept", "application/json")
	}
	time.Sleep(3 * tick) // every gateway's view has ticked since
	before := redisCalls(t, srv, "zrank")
	for _, base := range bases[1:] {
		if r := poll(base); r.state() != "waiting" || r.position() != n {
			t.Fatalf("the copy through %s before the leave: %s at %d, want waiting at %d", base, r.state(), r.position(), n)
		}
	}
	if got := redisCalls(t, srv, "zrank") - before; got != 0 {
		t.Fatalf("the copies' polls asked Redis (%d ZRANK): they must be answered from the anchor for this test to mean anything", got)
	}

	left := time.Now()
	if r := holder.do(http.MethodPost, "/.waitroom/leave?room=concert", "Sec-Fetch-Site", "same-origin", "Accept", "application/json"); r.status != http.StatusOK {
		t.Fatalf("leave: %d", r.status)
	}
	// Each gateway's next tick reads the leave; on a busy machine a tick
	// may run late, so the bound is generous, and far below the anchor's
	// 30 s.
	for _, base := range bases {
		waitFor(t, 5*time.Second, func() bool { return poll(base).state() != "waiting" })
	}
	took := time.Since(left)
	t.Logf("the copies lost their place on all three gateways %v after the leave (tick %v)", took, tick)
	for round := range 5 {
		for _, base := range bases {
			if r := poll(base); r.state() == "waiting" {
				t.Fatalf("round %d: the copy through %s after the leave: waiting at %d", round, base, r.position())
			}
		}
	}
}

// Two gateways on one Redis, ticking every 2 s. 200 holders far back in
// line leave through A at once, more than a tick's list of left tickets
// holds (waitroom.MaxLeftTickets) between two of B's ticks: copies of all
// 200 polled through B are refused a place once B has ticked, and B is
// not blind for it: a visitor still in line before them is answered from
// its anchor again from its second poll after B's tick (before: every poll of every
// visitor asked Redis for a minute).
func TestAnchored_TwoHundredLeavesInATickAllHonoured(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	room := "    max_active: 0\n    tick: 2s\n    abandon_after: 60s\n    join_limit: unlimited\n    page: { refresh: 1s, refresh_max: 3s }"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	_, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	const status = "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	join := func(base string, want int) *visitor {
		v := newVisitor(t, base)
		placeOnce(v, "/events/1")
		if r := placeOnce(v, "/events/1"); r.state() != "waiting" || r.position() != want {
			t.Fatalf("visitor %d placed: %s at %d", want, r.state(), r.position())
		}
		return v
	}
	const ahead, leavers = 120, 200
	for i := range ahead {
		join(a, i+1)
	}
	probe := join(b, ahead+1)
	probe.getJSON(status) // anchored before the leaves
	copies := make([]string, leavers)
	for i := range leavers {
		v := join(a, ahead+i+2)
		v.getJSON(status) // anchors the ticket
		copies[i] = "waitroom_concert=" + v.cookieValue("concert")
	}
	poll := func(base, cookie string) reply {
		return newVisitor(t, base).do(http.MethodGet, status, "Cookie", cookie, "Accept", "application/json")
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, leavers)
	for _, c := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, a+"/.waitroom/leave?room=concert", nil)
			req.Header.Set("Cookie", c)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("leave: %d", resp.StatusCode)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d left through A in %v (B ticks every 2s)", leavers, time.Since(start))
	for i, c := range copies {
		waitFor(t, 10*time.Second, func() bool { return poll(b, c).state() != "waiting" })
		if i == 0 {
			t.Logf("the first copy lost its place on B %v after the leaves began", time.Since(start))
		}
	}
	for i, c := range copies {
		if r := poll(b, c); r.state() == "waiting" {
			t.Fatalf("copy %d through B after the leaves: waiting at %d", i, r.position())
		}
	}
	// The probe's polls ask Redis until B has ticked after the leaves: its
	// first because its anchor is older than the leaves, and the next ones
	// because the anchor that answer gave is newer than B's view (a copy
	// can lose its place from the store's answer before B ticks). Once B
	// has ticked, B answers it alone; before the fix no poll ever did.
	probed := func() int64 {
		before := redisCalls(t, srv, "zrank")
		if r := probe.getJSON(status); r.state() != "waiting" || r.position() != ahead+1 {
			t.Fatalf("the visitor before them: %s at %d, want waiting at %d", r.state(), r.position(), ahead+1)
		}
		return redisCalls(t, srv, "zrank") - before
	}
	waitFor(t, 10*time.Second, func() bool { return probed() == 0 })
	before := redisCalls(t, srv, "zrank")
	for range 3 {
		if r := probe.getJSON(status); r.state() != "waiting" || r.position() != ahead+1 {
			t.Fatalf("the visitor before them: %s at %d, want waiting at %d", r.state(), r.position(), ahead+1)
		}
	}
	if got := redisCalls(t, srv, "zrank") - before; got != 0 {
		t.Fatalf("B asked Redis %d times for a visitor re-anchored after the leaves: blind", got)
	}
}
