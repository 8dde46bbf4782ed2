package redisstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
)

// TestRedisStore_IdleRoomLeavesOnlyItsOverride: a room with an Idle that
// nobody touches any more leaves nothing in Redis after about twice Idle,
// every key it had written included (the line, the sessions, the counter,
// the restored set, the session networks), but for its override: a
// "closed" the site asked for outlives the room, and reads back.
func TestRedisStore_IdleRoomLeavesOnlyItsOverride(t *testing.T) {
	client := shared(t).NewClient()
	prefix := freshPrefix()
	s := newStore(t, client, prefix)
	ctx := context.Background()
	lim := limits(1)
	lim.Idle = time.Second
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 60, Per: time.Minute}, 1
	lim.SessionClients = 2
	join(t, s, lim, waitroom.StateAdmitted)
	join(t, s, lim, waitroom.StateWaiting)
	if d := decide(t, s, lim, waitroom.Visitor{ID: visitorID(), Ticket: 1}, true); d.State != waitroom.StateWaiting {
		t.Fatalf("restored ticket: %+v, want waiting", d)
	}
	if err := s.SetOverride(ctx, "concert", waitroom.Override{Mode: waitroom.ModeReject}); err != nil {
		t.Fatal(err)
	}
	admit(t, s, lim)
	start := time.Now()

	override := "{" + prefix + ":concert}:override"
	keys := roomKeys(t, client, prefix)
	if len(keys) < 10 {
		t.Fatalf("room keys %v, want the line, the sessions and the rest written", keys)
	}
	for _, k := range keys {
		ttl := client.PTTL(ctx, k).Val()
		switch {
		case k == override && ttl < 29*24*time.Hour:
			t.Errorf("override expires in %v, want about a month whatever Idle says", ttl)
		case k != override && (ttl <= 0 || ttl > lim.Idle):
			t.Errorf("key %s expires in %v, want within Idle (%v)", k, ttl, lim.Idle)
		}
	}

	time.Sleep(2*lim.Idle + 200*time.Millisecond - time.Since(start))
	if left := roomKeys(t, client, prefix); !slices.Equal(left, []string{override}) {
		t.Errorf("keys left after twice Idle: %v, want the override alone", left)
	}
	if o, err := s.Override(ctx, "concert"); err != nil || o.Mode != waitroom.ModeReject {
		t.Errorf("override after the room expired: %+v, %v; want reject", o, err)
	}
	if st, err := s.Stats(ctx, "concert"); err != nil || st != (waitroom.Stats{}) {
		t.Errorf("stats after the room expired: %+v, %v; want an empty room", st, err)
	}
}

// TestRedisStore_TicksKeepTheOverrideAMonth: ticks refresh the override
// to its own month, not to the room's Idle, so an override on a room
// ticked for longer than a month still holds.
func TestRedisStore_TicksKeepTheOverrideAMonth(t *testing.T) {
	client := shared(t).NewClient()
	prefix := freshPrefix()
	s := newStore(t, client, prefix)
	ctx := context.Background()
	lim := limits(1)
	lim.Idle = time.Minute
	join(t, s, lim, waitroom.StateAdmitted)
	if err := s.SetOverride(ctx, "concert", waitroom.Override{Mode: waitroom.ModeReject}); err != nil {
		t.Fatal(err)
	}
	override := "{" + prefix + ":concert}:override"
	client.PExpire(ctx, override, 10*24*time.Hour) // written twenty days ago
	admit(t, s, lim)
	if ttl := client.PTTL(ctx, override).Val(); ttl < 29*24*time.Hour {
		t.Errorf("override after a tick expires in %v, want a month again", ttl)
	}
	if ttl := client.PTTL(ctx, "{"+prefix+":concert}:meta").Val(); ttl <= 0 || ttl > lim.Idle {
		t.Errorf("counter after a tick expires in %v, want within Idle", ttl)
	}
}

// roomKeys lists the keys of room "concert" that still exist, sorted. SCAN
// may return a key that expired but was not reclaimed yet; EXISTS reclaims
// it and says so.
func roomKeys(tb testing.TB, client redis.UniversalClient, prefix string) []string {
	tb.Helper()
	ctx := context.Background()
	var keys []string
	iter := client.Scan(ctx, 0, "{"+prefix+":concert}*", 100).Iterator()
	for iter.Next(ctx) {
		if client.Exists(ctx, iter.Val()).Val() == 1 {
			keys = append(keys, iter.Val())
		}
	}
	if err := iter.Err(); err != nil {
		tb.Fatalf("SCAN: %v", err)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
