package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestRedisStore_RedisRestartPutsTicketsBack: Redis restarts empty (no
// persistence). The same Store carries on without being re-created; the
// new counter starts above every old ticket; visitors who come back with
// old tickets, in any order, go back in ticket order ahead of everyone who
// arrived since, and the recovery grace lets them in before the newcomers.
func TestRedisStore_RedisRestartPutsTicketsBack(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	ctx := context.Background()
	lim := limits(0)
	lim.RecoveryGrace = time.Minute
	old := make([]waitroom.Visitor, 5)
	for i := range old {
		old[i] = join(t, s, lim, waitroom.StateWaiting)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	n1, n2 := join(t, s, lim, waitroom.StateWaiting), join(t, s, lim, waitroom.StateWaiting)
	if n1.Ticket <= old[4].Ticket {
		t.Fatalf("first ticket after the restart %d, not above the last before it %d", n1.Ticket, old[4].Ticket)
	}
	for _, i := range []int{3, 0, 4, 1, 2} {
		d := decide(t, s, lim, old[i], true)
		if d.State != waitroom.StateWaiting || d.Ticket != old[i].Ticket || !d.Joined {
			t.Fatalf("visitor back with ticket %d: %+v, want its place back", old[i].Ticket, d)
		}
	}
	line := append(old, n1, n2)
	for i, v := range line {
		if d := decide(t, s, lim, v, true); d.Position != int64(i+1) || d.Line != 7 {
			t.Errorf("ticket %d at %d of %d, want %d of 7", v.Ticket, d.Position, d.Line, i+1)
		}
	}
	room := lim
	room.MaxActive = 10
	if a, err := s.Admit(ctx, "concert", room); err != nil || a.Admitted != len(old) {
		t.Errorf("tick during the grace: %+v, %v; want the %d restored admitted, not the newcomers", a, err, len(old))
	}
	if d := decide(t, s, room, n1, false); d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Errorf("first newcomer after the tick: %+v, want waiting at the head", d)
	}
}

// decide asks about a visitor of room "concert".
// join true hands a newcomer a ticket and, as a browser's next request
// would, brings it back to take its place.
func decide(tb testing.TB, s *redisstore.Store, lim waitroom.Limits, v waitroom.Visitor, join bool) waitroom.Decision {
	tb.Helper()
	j := waitroom.JoinNone
	if join {
		j = waitroom.JoinTicket
	}
	if v.Seen.IsZero() {
		v.Seen = time.Now()
	}
	d, err := s.Decide(context.Background(), "concert", lim, v, j)
	if err != nil {
		tb.Fatalf("Decide: %v", err)
	}
	if join && d.State == waitroom.StateWaiting && !d.Placed {
		v.Ticket, v.Issued = d.Ticket, time.Now()
		if d, err = s.Decide(context.Background(), "concert", lim, v, waitroom.JoinNone); err != nil {
			tb.Fatalf("Decide: %v", err)
		}
	}
	return d
}

// join brings in a new visitor to room "concert" and checks its state.
func join(tb testing.TB, s *redisstore.Store, lim waitroom.Limits, want waitroom.State) waitroom.Visitor {
	tb.Helper()
	v, d, err := enter(context.Background(), s, "concert", lim, visitorID())
	if err != nil || d.State != want || !d.Joined {
		tb.Fatalf("new visitor: %+v, %v; want %v and joined", d, err, want)
	}
	return v
}

// TestRedisStore_RedisDown: with the default timeouts, a Redis that is
// stuck or gone turns every call into ErrUnavailable within
// two attempts' worth of timeouts, not a hang; when it is back, the same
// Store works again.
func TestRedisStore_RedisDown(t *testing.T) {
	srv := redistest.Start(t)
	cfg := redisstore.DefaultConfig()
	cfg.Addrs = []string{"unix:" + srv.Addr()}
	s, err := redisstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	lim := limits(0)
	v := join(t, s, lim, waitroom.StateWaiting)

	// Stuck: Redis accepts connections and commands but answers nothing.
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	expectUnavailable(t, "decide", 1500*time.Millisecond, func() error {
		_, err := s.Decide(context.Background(), "concert", lim, v, waitroom.JoinTicket)
		return err
	})
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}

	// Down.
	srv.Stop()
	calls := map[string]func() error{
		"decide": func() error {
			_, err := s.Decide(context.Background(), "concert", lim, v, waitroom.JoinTicket)
			return err
		},
		"admit":   func() error { _, err := s.Admit(context.Background(), "concert", lim); return err },
		"release": func() error { return s.Release(context.Background(), "concert", v.ID) },
		"stats":   func() error { _, err := s.Stats(context.Background(), "concert"); return err },
		"ping":    func() error { return s.Ping(context.Background()) },
	}
	for name, call := range calls {
		expectUnavailable(t, name, 3*time.Second, call)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// go-redis stops dialing a server that refused a pool's worth of dials
	// and probes it once a second, so allow a few seconds.
	var d waitroom.Decision
	for stop := time.Now().Add(10 * time.Second); time.Now().Before(stop); time.Sleep(50 * time.Millisecond) {
		if d, err = s.Decide(context.Background(), "concert", lim, v, waitroom.JoinTicket); err == nil {
			break
		}
	}
	if err != nil || d.State != waitroom.StateWaiting || d.Ticket != v.Ticket {
		t.Fatalf("after Redis came back (empty): %+v, %v; want the visitor back on its ticket", d, err)
	}
}

func expectUnavailable(t *testing.T, name string, within time.Duration, call func() error) {
	t.Helper()
	start := time.Now()
	err := call()
	took := time.Since(start)
	if !errors.Is(err, waitroom.ErrUnavailable) || errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("%s with Redis away: %v, want ErrUnavailable", name, err)
	}
	if took > within {
		t.Errorf("%s with Redis away took %v, want at most %v", name, took, within)
	}
	if name == "decide" && (err == nil || !strings.Contains(err.Error(), `deciding room "concert": running decide.lua: `)) {
		t.Errorf("error %q does not say what failed", err)
	}
}

// TestRedisStore_ClosedAndCanceled: a closed store says so; a canceled
// context gives the context's error, not "unavailable"; a store made with
// New leaves its client open, one made with Open closes it.
func TestRedisStore_ClosedAndCanceled(t *testing.T) {
	srv := shared(t)
	client := srv.NewClient()
	s := newStore(t, client, freshPrefix())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Decide(ctx, "concert", limits(1), waitroom.Visitor{ID: visitorID()}, waitroom.JoinTicket); !errors.Is(err, context.Canceled) || errors.Is(err, waitroom.ErrUnavailable) {
		t.Errorf("Decide with a canceled context: %v, want context.Canceled", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close() // twice is harmless
	if _, err := s.Admit(context.Background(), "concert", limits(1)); !errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("Admit after Close: %v, want ErrClosed", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("Ping after Close: %v, want ErrClosed", err)
	}
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Errorf("client of a closed New store: %v, want it left open", err)
	}

	cfg := redisstore.DefaultConfig()
	cfg.Addrs = []string{srv.Addr()}
	owned, err := redisstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := owned.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := owned.Close(); err != nil {
		t.Errorf("Close of an Open store: %v", err)
	}
}
