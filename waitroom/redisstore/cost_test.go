package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestCost_TurnedAwayAndNeverReturned measures what the newcomers who buy
// nothing cost Redis, each kind on a fresh room: the bytes their keys hold
// afterwards (MEMORY USAGE, every element counted) and Redis's own
// microseconds per call (INFO commandstats). A refused join must cost no
// memory, a ticket that never comes back less than 20 bytes from a network
// that sent many and 90 from a network of its own (its pending allowance,
// until the key expires), and a challenge no more than a join.
func TestCost_TurnedAwayAndNeverReturned(t *testing.T) {
	redistest.Long(t, "30,000 joins")
	const n = 10_000
	srv := redistest.Start(t) // its own server: the statistics must see nothing else
	client := srv.Client()
	ctx := context.Background()
	s := New(client, WithKeyPrefix("cost"))
	base := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 2 * time.Minute,
		JoinLimit: waitroom.Rate{N: 300, Per: time.Minute}}
	kinds := []struct {
		name     string
		join     waitroom.Join
		network  func(i int) string
		maxBytes float64
	}{
		// A network past its quota: 300 places taken, then refusals.
		// (at most the stats' counter of refusals, a few bytes in all).
		{"refused join (quota)", waitroom.JoinTicket, func(int) string { return "flooder" }, 0.01},
		// One network's first requests, never brought back: past its
		// PendingPerNetwork each is loose, a bit in the placement window.
		{"never-returned join (one network)", waitroom.JoinTicket, func(int) string { return "flooder" }, 20},
		// A ticket each from as many networks, never brought back: each
		// network's pending allowance is a key that lives a fifth of the
		// placement window (PendingPerNetwork), 24 s here.
		{"never-returned join", waitroom.JoinTicket, func(i int) string { return fmt.Sprintf("n%07d", i) }, 90},
		// A challenge's number each, from as many networks, never solved.
		// (its network's pending allowance key, as for a join).
		{"challenge issued", waitroom.JoinNumber, func(i int) string { return fmt.Sprintf("c%07d", i) }, 90},
	}
	for k, kind := range kinds {
		room := fmt.Sprintf("room-%d", k)
		lim := base
		if k == 0 {
			// The quota's 300 go first (a day's: one comes back every
			// 288s, so none during the run however busy the machine; an
			// hour's let one back after 12s); the refusals are measured.
			lim.JoinLimit = waitroom.Rate{N: 300, Per: 24 * time.Hour}
			for i := range 300 {
				v := waitroom.Visitor{ID: fmt.Sprintf("w%021d", i), Network: "flooder"}
				d, err := s.Decide(ctx, room, lim, v, kind.join)
				if err != nil || d.Refusal != "" {
					t.Fatalf("ticket %d within the quota: %+v, %v", i, d, err)
				}
				v.Ticket, v.Loose, v.Issued = d.Ticket, d.Ticket == 0, time.Now()
				if d, err := s.Decide(ctx, room, lim, v, waitroom.JoinNone); err != nil || !d.Placed {
					t.Fatalf("ticket %d within the quota brought back: %+v, %v", i, d, err)
				}
			}
		}
		// A line that exists, and one real visitor in it.
		if _, err := s.Decide(ctx, room, lim, waitroom.Visitor{ID: "warm-up-visitor-000000", Network: "home"}, waitroom.JoinTicket); err != nil {
			t.Fatal(err)
		}
		before := keySpace(t, client)
		ResetCommandStats(t, client)
		start := time.Now()
		for i := range n {
			v := waitroom.Visitor{ID: fmt.Sprintf("v%021d", i), Network: kind.network(i)}
			d, err := s.Decide(ctx, room, lim, v, kind.join)
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 && d.Refusal != waitroom.RefusedQuota {
				t.Fatalf("join %d past the quota: %+v", i, d)
			}
		}
		took := time.Since(start)
		usec := ScriptCost(t, client)
		grew := float64(keySpace(t, client)-before) / n
		t.Logf("%s: %.2f bytes and %.1f µs of Redis each (%.1f µs a call from here, round trip included)",
			kind.name, grew, usec, float64(took.Microseconds())/n)
		if grew > kind.maxBytes {
			t.Errorf("%s costs %.1f bytes each, want at most %.0f", kind.name, grew, kind.maxBytes)
		}
	}
}

// keySpace sums MEMORY USAGE over every key on the server.
func keySpace(t testing.TB, c redis.UniversalClient) int64 {
	t.Helper()
	ctx := context.Background()
	var total int64
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		n, err := c.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
