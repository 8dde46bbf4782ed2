package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// 200 visitors, each with its own cookie jar, queue for a room of 10. They
// all keep polling; each, once in, makes one request and finishes (the site
// releases the slot). Everyone must get in exactly once, and nobody while
// someone with an earlier ticket still waits. A ticket takes its place
// when it comes back, and a later one that came back first may rightly go
// in before it: so the room opens (max_active 10 by override) only once
// every ticket has come back once.
func TestGateway_ConcurrentVisitorsInTicketOrder(t *testing.T) {
	const n = 200
	up, srv := newUpstream(t)
	// join_limit off: every visitor comes from one network here, whose
	// tickets past PendingPerNetwork would otherwise carry no number.
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms\n    join_limit: unlimited\n    page: { refresh: 1s }"))
	codec := testTickets(t)
	room := app.current().cfg.Rooms["concert"]
	lim := mustRoom(t, room).Limits

	visitors := make([]*visitor, n)
	ids := make([]string, n)
	tickets := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n { // everyone joins at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			visitors[i] = newVisitor(t, base)
			visitors[i].getJSON("/events/")
			tk, err := codec.Decode("concert", visitors[i].cookieValue("concert"))
			if err != nil {
				t.Errorf("visitor %d has no valid ticket: %v", i, err)
				return
			}
			ids[i], tickets[i] = tk.Visitor, tk.Number
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := range n { // every ticket comes back once and takes its place
		wg.Go(func() {
			if st := visitors[i].getJSON("/.waitroom/status?room=concert").state(); st != "waiting" {
				t.Errorf("visitor %d back with its ticket: %s, want waiting", i, st)
			}
		})
	}
	wg.Wait()
	ctx := context.Background()
	ten := 10
	if err := app.store.SetOverride(ctx, "concert", waitroom.Override{MaxActive: &ten}); err != nil {
		t.Fatal(err)
	}
	order := make([]int, n) // visitor indexes by ticket number
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return tickets[order[a]] < tickets[order[b]] })
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r
	}

	// The deadline is generous: 200 visitors go through 10 slots one
	// request and one tick at a time, which on a busy machine (the
	// visitors' own polls included) takes far longer than on an idle one.
	// Polls every 100ms keep that crowd's own load down; the order check
	// below asks the store, so it needs no timing.
	errs := make(chan error, n)
	deadline := time.Now().Add(3 * time.Minute)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := visitors[i]
			for {
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("visitor %d (ticket rank %d) never admitted", i, rank[i])
					return
				}
				if v.getJSON("/.waitroom/status?room=concert").state() == "admitted" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Nobody with an earlier ticket may still be waiting now.
			for _, j := range order[:rank[i]] {
				d, err := app.store.Decide(ctx, "concert", lim, waitroom.Visitor{ID: ids[j], Ticket: tickets[j]}, waitroom.JoinNone)
				if err == nil && d.State == waitroom.StateWaiting {
					errs <- fmt.Errorf("visitor of rank %d admitted while rank %d still waits", rank[i], rank[j])
					break
				}
			}
			if r := v.get("/events/done"); r.status != 200 {
				errs <- fmt.Errorf("visitor %d inside got %d", i, r.status)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	// Everyone ends exactly one session, and nobody reached the site but
	// the 200.
	if len(up.visitors) != n || len(up.done) != n {
		t.Fatalf("%d distinct visitors reached the site and %d finished, want %d", len(up.visitors), len(up.done), n)
	}
	for id, c := range up.done {
		if c != 1 {
			t.Errorf("visitor %s finished %d sessions, want one", id, c)
		}
	}
	st, err := app.store.Stats(ctx, "concert")
	if err != nil || st.AdmittedTotal != n || st.Joined != n {
		t.Fatalf("stats: %+v, %v", st, err)
	}
}

func mustRoom(t testing.TB, rc RoomConfig) waitroom.Room {
	r, err := rc.RoomConfig.Build("concert")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
