package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestPlace_FarApartCostsPerCluster: a batch of fifty tickets with one
// far below them (an old pending cookie replayed, 70,000 numbers down)
// costs place.lua's positions a few commands per cluster of tickets (one
// ZCOUNT, one ZRANGEBYSCORE, one GETRANGE each, a BITCOUNT per gap and
// for the line's length), not two a ticket nor a walk over the gap; the
// positions stay exact (storetest's BatchedFarApart checks them).
func TestPlace_FarApartCostsPerCluster(t *testing.T) {
	srv := redistest.Start(t) // its own server: nothing else may run commands
	client := srv.Client()
	ctx := context.Background()
	s := New(client)
	lim := waitroom.Limits{AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
	reserve := func(n int64) int64 {
		first, err := s.Reserve(ctx, "concert", lim, n, 0)
		if err != nil || first == 0 {
			t.Fatalf("Reserve(%d): %d, %v", n, first, err)
		}
		return first
	}
	old := reserve(1)
	const span, near = 70_000, 50
	mid := reserve(span)
	last := reserve(near + 1)
	now := time.Now()
	// One place behind them all first: the line is not empty, so no ticket
	// of the batch may go in at once (which counts the sessions).
	if _, err := s.Place(ctx, "concert", lim, []waitroom.Placement{{Visitor: waitroom.Visitor{ID: newID(), Ticket: last + near, Issued: now}}}, nil); err != nil {
		t.Fatal(err)
	}
	ps := []waitroom.Placement{{Visitor: waitroom.Visitor{ID: newID(), Ticket: old, Issued: now}}}
	for i := range int64(near) {
		ps = append(ps, waitroom.Placement{Visitor: waitroom.Visitor{ID: newID(), Ticket: last + i, Issued: now}})
	}
	ResetCommandStats(t, client)
	got, err := s.Place(ctx, "concert", lim, ps, []waitroom.Span{{First: mid, Last: mid + span - 2}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := commandCalls(info)
	for i, p := range got {
		want := int64(1)
		if i > 0 {
			want = int64(i) + 2 // the old place and mid's last number, pending, ahead
		}
		if p.Ask || p.Decision.State != waitroom.StateWaiting || p.Decision.Position != want {
			t.Fatalf("ticket %d: %+v, want waiting at %d", p.Decision.Ticket, p, want)
		}
	}
	if calls["zcount"] != 2 || calls["zrangebyscore"] > 1 || calls["getrange"] > 1 || calls["bitcount"] > 3 {
		t.Errorf("positions of two clusters cost %v; want 2 ZCOUNT, at most 1 ZRANGEBYSCORE, 1 GETRANGE and 3 BITCOUNT", calls)
	}
}
