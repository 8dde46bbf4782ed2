package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

func scheduleRoom(prequeue, opens, closes time.Time) string {
	at := func(t time.Time) string {
		if t.IsZero() {
			return `""`
		}
		return `"` + t.Format(time.RFC3339Nano) + `"`
	}
	// join_limit off: its visitors all come from one network, whose
	// tickets past PendingPerNetwork would otherwise carry no number.
	return fmt.Sprintf("    max_active: 0\n    tick: 50ms\n    join_limit: unlimited\n    schedule: { prequeue_from: %s, opens_at: %s, closes_at: %s }",
		at(prequeue), at(opens), at(closes))
}

// 300 visitors arrive during the pre-queue in a known order. At the
// opening the pre-queue is drawn once: the order is a permutation that is
// not the arrival order, that anyone can recompute from the recorded seed,
// and that puts every one of them before anyone who came after opening.
func TestSchedule_PrequeueIsShuffledOnceAtOpening(t *testing.T) {
	const n = 300
	_, srv := newUpstream(t)
	opens := time.Now().Add(6 * time.Second) // room for 300 arrivals on a slow machine
	app, base := startGateway(t, gwConfig(srv.URL, scheduleRoom(time.Now().Add(-time.Minute), opens, time.Time{})))
	codec := testTickets(t)
	early := make([]*visitor, n)
	ids := make([]string, n)
	for i := range early {
		v := newVisitor(t, base)
		r := v.getJSON("/events/")
		if r.state() != "prequeue" || r.position() != 0 {
			t.Fatalf("arrival %d before the opening: %v", i, r.json)
		}
		// Its page's first poll brings the ticket back: only a place
		// written before the opening is in the draw.
		if r = v.getJSON("/events/"); r.state() != "prequeue" {
			t.Fatalf("arrival %d polling before the opening: %v", i, r.json)
		}
		tk, err := codec.Decode("concert", v.cookieValue("concert"))
		if err != nil {
			t.Fatalf("arrival %d has no ticket: %v", i, err)
		}
		early[i], ids[i] = v, tk.Visitor
	}
	if time.Now().After(opens) {
		t.Fatal("the machine was too slow: the sale opened before the 300 arrived")
	}
	c := newAdmin(t, app)
	var seed string
	waitFor(t, 10*time.Second, func() bool {
		_, m, _ := c.do("GET", "/admin/api/rooms/concert", "")
		sc, _ := m["schedule"].(map[string]any)
		seed, _ = sc["shuffle_seed"].(string)
		return seed != ""
	})
	late := newVisitor(t, base)
	if p := late.getJSON("/events/").position(); p != n+1 {
		t.Fatalf("a visitor after the opening at %d, want %d", p, n+1)
	}
	want := slices.Clone(ids)
	slices.SortFunc(want, func(a, b string) int {
		return strings.Compare(waitroom.ShuffleOrder(seed, a), waitroom.ShuffleOrder(seed, b))
	})
	if slices.Equal(want, ids) {
		t.Fatal("the draw kept the arrival order")
	}
	rank := map[string]int{}
	for i, id := range want {
		rank[id] = i + 1
	}
	for i, v := range early {
		if p := v.getJSON("/.waitroom/status?room=concert").position(); p != rank[ids[i]] {
			t.Fatalf("arrival %d at %d, the seed %s says %d", i, p, seed, rank[ids[i]])
		}
	}
	// Room for exactly the pre-queue: all of it goes in, the late one waits.
	if code, _, body := c.do("PATCH", "/admin/api/rooms/concert", fmt.Sprintf(`{"max_active":%d}`, n)); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	waitFor(t, 10*time.Second, func() bool { return late.getJSON("/events/").position() == 1 })
	for i, v := range early {
		if s := v.getJSON("/.waitroom/status?room=concert").state(); s != "admitted" {
			t.Fatalf("arrival %d: %s once the pre-queue had room", i, s)
		}
	}
}

// Before the pre-queue nobody gets a ticket; after closing nobody new does.
func TestSchedule_BeforeAndAfterTheSale(t *testing.T) {
	_, srv := newUpstream(t)
	now := time.Now()
	_, base := startGateway(t, gwConfig(srv.URL, scheduleRoom(now.Add(time.Hour), now.Add(2*time.Hour), time.Time{})))
	r := newVisitor(t, base).getJSON("/events/")
	if r.state() != "prequeue" || len(r.header.Values("Set-Cookie")) != 0 || r.json["eta_seconds"] == nil {
		t.Fatalf("before the pre-queue: %v, Set-Cookie %v", r.json, r.header.Values("Set-Cookie"))
	}
	_, base2 := startGateway(t, gwConfig(srv.URL, scheduleRoom(time.Time{}, now.Add(-2*time.Hour), now.Add(-time.Hour))))
	v := newVisitor(t, base2)
	r = v.getJSON("/events/")
	if r.state() != "closed" || len(r.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("after closing: %v, Set-Cookie %v", r.json, r.header.Values("Set-Cookie"))
	}
	if r := v.do(http.MethodPost, "/events/buy"); r.status != http.StatusServiceUnavailable {
		t.Fatalf("a POST after closing: %d", r.status)
	}
}
