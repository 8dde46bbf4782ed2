package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// TestRedisStore_KeysExpireWithoutTicks: ticks keep a room's keys alive,
// and Decide refreshes no lifetime, so every key Decide may create must get
// its lifetime when it creates it: a room used only through Decide (an
// immediate admission under a rate limit, a line, a restored ticket, a
// restored session) leaves nothing that never expires.
func TestRedisStore_KeysExpireWithoutTicks(t *testing.T) {
	client := shared(t).NewClient()
	prefix := freshPrefix()
	s := newStore(t, client, prefix)
	lim := limits(1)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 60, Per: time.Minute}, 1
	lim.RecoveryGrace = time.Minute
	join(t, s, lim, waitroom.StateAdmitted)
	checkExpiries(t, client, prefix)
	line := []waitroom.Visitor{join(t, s, lim, waitroom.StateWaiting), join(t, s, lim, waitroom.StateWaiting)}
	// Tickets older than the counter's seed: kept from before a data loss.
	restored := waitroom.Visitor{ID: visitorID(), Ticket: 1}
	if d := decide(t, s, lim, restored, true); d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("restored ticket: %+v, want waiting at the head", d)
	}
	keys := client.Keys(context.Background(), "{"+prefix+":concert}:*").Val()
	if len(keys) != 11 { // began too: the session let in at once
		t.Errorf("keys %v, want all but the override and the session networks", keys)
	}
	checkExpiries(t, client, prefix)
	for _, v := range append(line, restored) {
		decide(t, s, lim, v, true)
	}
	checkExpiries(t, client, prefix)

	// A room whose first session is a restored one.
	prefix = freshPrefix()
	s = newStore(t, client, prefix)
	join(t, s, limits(0), waitroom.StateWaiting)
	inside := waitroom.Visitor{ID: visitorID(), Ticket: 2, Until: time.Now().Add(time.Minute)}
	if d := decide(t, s, limits(1), inside, true); d.State != waitroom.StateAdmitted {
		t.Fatalf("restored session: %+v, want admitted", d)
	}
	checkExpiries(t, client, prefix)
}

// TestRedisStore_LostLastPollStringGetsALifetime: a poll that writes into
// a last-poll string that is gone (it expired before the line's key, say)
// creates it with a lifetime, though polls otherwise refresh none.
func TestRedisStore_LostLastPollStringGetsALifetime(t *testing.T) {
	srv := shared(t)
	prefix := freshPrefix()
	client := srv.NewClient()
	s := newStore(t, client, prefix)
	lim := limits(0)
	line := []waitroom.Visitor{join(t, s, lim, waitroom.StateWaiting), join(t, s, lim, waitroom.StateWaiting)}
	ctx := context.Background()
	seen := "{" + prefix + ":concert}:seen"
	for _, v := range line {
		client.Del(ctx, seen)
		if d := decide(t, s, lim, v, false); d.State != waitroom.StateWaiting {
			t.Fatalf("poll: %+v, want waiting", d)
		}
		if ttl := client.PTTL(ctx, seen).Val(); ttl < 30*time.Minute {
			t.Errorf("last-poll string written by ticket %d's poll expires in %v, want an hour or more", v.Ticket, ttl)
		}
	}
}
