package main

import (
	"net/http"
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
		v.getJSON("/events/1") // a ticket
		if r := v.getJSON("/events/1"); r.state() != "waiting" || r.position() != i+1 {
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
