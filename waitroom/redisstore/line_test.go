package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestRedisStore_LargeLine exercises what only a long line reaches: the
// last-poll string is swept 4096 entries a tick, so half of 10,000 visitors
// going quiet takes three ticks to prune, exactly; admitting the rest trims
// the string's dead front once the head has moved past 4096 entries and
// half the string, and positions stay right across the trim; an empty line
// leaves no string behind.
func TestRedisStore_LargeLine(t *testing.T) {
	redistest.Long(t, "a 10,000-visitor line")
	const n = 10_000
	srv := shared(t)
	prefix := freshPrefix()
	client := srv.NewClient()
	s := newStore(t, client, prefix)
	seen := "{" + prefix + ":concert}:seen"
	lim := limits(0)
	start := time.Now()
	line := joinMany(t, s, lim, n)
	joined := time.Now()
	// What follows (5,000 polls, ticks, 2,000 more polls) must end within
	// abandon_after of the even half's polls, or they go stale too. It is
	// a fraction of the 20,000 calls joinMany made, so abandon_after is
	// twice the time those took (3s at least): slower machines wait longer
	// instead of failing. joinMany placed everyone under a minute-long
	// abandon_after; Redis weighs a last poll against the tick's limits.
	lim.AbandonAfter = max(3*time.Second, 2*joined.Sub(start))
	t.Logf("10,000 joins took %v; abandon_after %v", joined.Sub(start).Round(time.Millisecond), lim.AbandonAfter)
	time.Sleep(lim.AbandonAfter + 200*time.Millisecond) // everyone is stale now
	keep := make([]waitroom.Visitor, 0, n/2)
	for i := 0; i < n; i += 2 {
		keep = append(keep, line[i])
	}
	pollAll(t, s, lim, keep) // the even half polls again
	for i, want := range []int{2048, 2048, 904} {
		if a := admit(t, s, lim); a.Abandoned != want || a.Admitted != 0 {
			t.Fatalf("tick %d: %+v, want %d abandoned: the odd tickets of the next 4096", i+1, a, want)
		}
	}
	if time.Since(joined) > 2*lim.AbandonAfter {
		t.Fatalf("inconclusive, the machine stalled: %v since the joins", time.Since(joined))
	}
	checkExpiries(t, client, prefix)

	open := lim
	open.MaxActive = n
	for range 3 {
		if a := admit(t, s, open); a.Admitted != 1000 || a.Abandoned != 0 {
			t.Fatalf("admission tick: %+v, want 1000 (a tick's batch) admitted", a)
		}
	}
	// The head is now entry 6000 of 10000: the front was trimmed, and the
	// string ends at the line's last ticket.
	want := (keep[len(keep)-1].Ticket - keep[3000].Ticket + 1) * 7
	if size := client.StrLen(context.Background(), seen).Val(); size != want {
		t.Errorf("last-poll string is %d bytes, want %d after the trim", size, want)
	}
	for i, v := range keep[3000:] {
		if d := decide(t, s, open, v, false); d.State != waitroom.StateWaiting || d.Position != int64(i+1) {
			t.Fatalf("ticket %d after the trim: %+v, want waiting at %d", v.Ticket, d, i+1)
		}
	}
	for range 2 {
		admit(t, s, open)
	}
	if got := client.Exists(context.Background(), seen).Val(); got != 0 {
		t.Errorf("empty line still has its last-poll string")
	}
	st, err := s.Stats(context.Background(), "concert")
	if err != nil || st.Joined != n || st.Abandoned != n/2 || st.AdmittedTotal != n/2 || st.Waiting != 0 {
		t.Errorf("stats %+v, %v", st, err)
	}
}

// joinMany brings n visitors into room "concert" from 8 goroutines and
// returns them in ticket order. Each takes a ticket, then brings it back;
// the lowest comes back first, so every place sits in the last-poll
// string, as a line's do when its visitors arrive over time.
//
// Taking and bringing back n tickets may outlast lim's placement window on
// a busy machine (10,000 with the race detector, both cores shared): the
// window here is a minute, so the test's own AbandonAfter counts only from
// the placements, never against them.
func joinMany(tb testing.TB, s *redisstore.Store, lim waitroom.Limits, n int) []waitroom.Visitor {
	lim.PlaceWithin = time.Minute
	vs := make([]waitroom.Visitor, n)
	each := func(do func(i int) error) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					if err := do(i); err != nil {
						tb.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if tb.Failed() {
			tb.FailNow()
		}
	}
	ctx := context.Background()
	each(func(i int) error {
		v := waitroom.Visitor{ID: visitorID(), Issued: time.Now(), Seen: time.Now()}
		d, err := s.Decide(ctx, "concert", lim, v, waitroom.JoinTicket)
		if err != nil || !d.Joined || d.Placed {
			return fmt.Errorf("ticket: %+v, %v", d, err)
		}
		v.Ticket = d.Ticket
		vs[i] = v
		return nil
	})
	slices.SortFunc(vs, func(a, b waitroom.Visitor) int { return int(a.Ticket - b.Ticket) })
	place := func(i int) error {
		d, err := s.Decide(ctx, "concert", lim, vs[i], waitroom.JoinNone)
		if err != nil || !d.Placed || d.State != waitroom.StateWaiting {
			return fmt.Errorf("ticket %d back: %+v, %v", vs[i].Ticket, d, err)
		}
		vs[i].Placed = true
		return nil
	}
	if err := place(0); err != nil {
		tb.Fatal(err)
	}
	each(func(i int) error {
		if i == 0 {
			return nil
		}
		return place(i)
	})
	return vs
}

// pollAll has every visitor poll once, from 8 goroutines.
func pollAll(tb testing.TB, s *redisstore.Store, lim waitroom.Limits, vs []waitroom.Visitor) {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(vs); i += 8 {
				if d, err := s.Decide(context.Background(), "concert", lim, vs[i], waitroom.JoinNone); err != nil || d.State != waitroom.StateWaiting {
					tb.Errorf("poll: %+v, %v", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func admit(tb testing.TB, s *redisstore.Store, lim waitroom.Limits) waitroom.Admitted {
	tb.Helper()
	a, err := s.Admit(context.Background(), "concert", lim)
	if err != nil {
		tb.Fatalf("Admit: %v", err)
	}
	return a
}

// checkExpiries: every key of the room expires by itself: the counter, the
// restored set and the override in about a month, the rest within a few
// hours.
func checkExpiries(tb testing.TB, client redis.UniversalClient, prefix string) {
	tb.Helper()
	ctx := context.Background()
	keys, err := client.Keys(ctx, "{"+prefix+":concert}:*").Result()
	if err != nil || len(keys) < 4 {
		tb.Fatalf("keys of the room: %v, %v", keys, err)
	}
	for _, k := range keys {
		ttl := client.PTTL(ctx, k).Val()
		long := k == "{"+prefix+":concert}:meta" || k == "{"+prefix+":concert}:restored" || k == "{"+prefix+":concert}:override"
		switch {
		case ttl <= 0:
			tb.Errorf("key %s never expires (PTTL %v)", k, ttl)
		case long && ttl < 29*24*time.Hour:
			tb.Errorf("key %s expires in %v, want about 30 days", k, ttl)
		case !long && (ttl < 30*time.Minute || ttl > 24*time.Hour):
			tb.Errorf("key %s expires in %v, want between 30 minutes and a day", k, ttl)
		}
	}
}

// TestRedisStore_RestoredVisitorsAbandoned: restored tickets keep their
// last poll in a sorted set of their own; one who stops polling is dropped
// like anyone, while the others keep their order, and the set empties with
// the line.
func TestRedisStore_RestoredVisitorsAbandoned(t *testing.T) {
	srv := shared(t)
	before := newStore(t, srv.NewClient(), freshPrefix())
	o1, o2 := join(t, before, limits(0), waitroom.StateWaiting), join(t, before, limits(0), waitroom.StateWaiting)
	time.Sleep(20 * time.Millisecond)
	prefix := freshPrefix() // a new, empty backend: the data was lost
	client := srv.NewClient()
	s := newStore(t, client, prefix)
	lim := limits(0)
	// 3s: the two who keep polling poll every 50ms, and a busy machine
	// may stall a poll for a second without making them stale.
	lim.AbandonAfter = 3 * time.Second
	for _, v := range []waitroom.Visitor{o1, o2} {
		if d := decide(t, s, lim, v, true); d.Ticket != v.Ticket || d.State != waitroom.StateWaiting {
			t.Fatalf("restore: %+v", d)
		}
	}
	n1 := join(t, s, lim, waitroom.StateWaiting)
	last := time.Now()
	for start := time.Now(); time.Since(start) < lim.AbandonAfter+200*time.Millisecond; time.Sleep(50 * time.Millisecond) {
		if time.Since(last) >= lim.AbandonAfter {
			t.Fatalf("inconclusive, the machine stalled for %v", time.Since(last))
		}
		last = time.Now()
		decide(t, s, lim, o2, false)
		decide(t, s, lim, n1, false)
	}
	if a := admit(t, s, lim); a.Abandoned != 1 {
		t.Fatalf("tick: %+v, want the quiet restored visitor dropped", a)
	}
	if d := decide(t, s, lim, o1, false); d.State != waitroom.StateNone {
		t.Errorf("quiet restored visitor: %+v, want gone", d)
	}
	for i, v := range []waitroom.Visitor{o2, n1} {
		if d := decide(t, s, lim, v, false); d.Position != int64(i+1) || d.Line != 2 {
			t.Errorf("visitor %d: %+v, want %d of 2", i, d, i+1)
		}
	}
	lim.MaxActive = 2
	if a := admit(t, s, lim); a.Admitted != 2 {
		t.Errorf("tick: %+v, want both admitted", a)
	}
	if n := client.Exists(context.Background(), "{"+prefix+":concert}:rseen").Val(); n != 0 {
		t.Errorf("restored visitors' last-poll set outlived them")
	}
}
