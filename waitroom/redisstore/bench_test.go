package redisstore_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
)

// roundTrips counts the commands a client sends, one round trip each: a
// script Redis does not know yet shows as two (EVALSHA, then EVAL).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

var _ redis.Hook = (*roundTrips)(nil)

// countingStore is a store on a fresh prefix whose client counts round
// trips.
func countingStore(tb testing.TB) (*redisstore.Store, *roundTrips) {
	client := shared(tb).NewClient()
	rt := &roundTrips{}
	client.AddHook(rt)
	return newStore(tb, client, freshPrefix()), rt
}

// TestRedisStore_OneRoundTripPerDecide: an admitted visitor's request costs
// one round trip and, within the renew interval, writes nothing; so does a
// waiting visitor's poll.
func TestRedisStore_OneRoundTripPerDecide(t *testing.T) {
	s, rt := countingStore(t)
	lim := limits(1)
	in := join(t, s, lim, waitroom.StateAdmitted)
	out := join(t, s, lim, waitroom.StateWaiting)
	rt.n.Store(0)
	for range 50 {
		if d := decide(t, s, lim, in, true); d.State != waitroom.StateAdmitted || d.Renewed {
			t.Fatalf("admitted visitor: %+v, want admitted, not renewed within the renew interval", d)
		}
		decide(t, s, lim, out, true)
	}
	if got := rt.n.Load(); got != 100 {
		t.Errorf("100 decisions took %d round trips, want 100", got)
	}
}

func BenchmarkRedisStore_Decide(b *testing.B) {
	lim := limits(1)
	lim.SessionTTL = 10 * time.Minute // renewals once a minute: none during the run
	b.Run("admitted", func(b *testing.B) {
		s, rt := countingStore(b)
		v := join(b, s, lim, waitroom.StateAdmitted)
		v.Until = decide(b, s, lim, v, false).Until // as the gate sends it from the cookie
		benchDecide(b, s, rt, lim, []waitroom.Visitor{v})
	})
	b.Run("waiting", func(b *testing.B) {
		s, rt := countingStore(b)
		line := joinMany(b, s, lim, 1000)
		benchDecide(b, s, rt, lim, line[1:]) // line[0] is inside
	})
}

func benchDecide(b *testing.B, s *redisstore.Store, rt *roundTrips, lim waitroom.Limits, vs []waitroom.Visitor) {
	ctx := context.Background()
	b.ReportAllocs()
	rt.n.Store(0)
	cost := redisCost(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Decide(ctx, "concert", lim, vs[rand.IntN(len(vs))], waitroom.JoinTicket); err != nil {
			b.Fatal(err)
		}
	}
	cost()
	b.ReportMetric(float64(rt.n.Load())/float64(b.N), "roundtrips/op")
}

// BenchmarkRedisStore_Join: a new visitor takes a ticket at the back of a
// growing line.
func BenchmarkRedisStore_Join(b *testing.B) {
	s, rt := countingStore(b)
	ctx := context.Background()
	lim := limits(0)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = visitorID()
	}
	b.ReportAllocs()
	rt.n.Store(0)
	cost := redisCost(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Decide(ctx, "concert", lim, waitroom.Visitor{ID: ids[i]}, waitroom.JoinTicket); err != nil {
			b.Fatal(err)
		}
	}
	cost()
	b.ReportMetric(float64(rt.n.Load())/float64(b.N), "roundtrips/op")
}

// BenchmarkRedisStore_Admit: one tick. "full": the room is full and 1000
// wait, so the tick only expires, sweeps and checks; "one": sessions last
// a microsecond, so each tick expires the last one and lets the next
// visitor in from a line of b.N.
func BenchmarkRedisStore_Admit(b *testing.B) {
	b.Run("full", func(b *testing.B) {
		s, rt := countingStore(b)
		lim := limits(0)
		joinMany(b, s, lim, 1000)
		benchAdmit(b, s, rt, lim)
	})
	b.Run("one", func(b *testing.B) {
		s, rt := countingStore(b)
		lim := limits(0)
		joinMany(b, s, lim, b.N)
		lim.MaxActive, lim.SessionTTL = 1, time.Microsecond
		benchAdmit(b, s, rt, lim)
	})
}

func benchAdmit(b *testing.B, s *redisstore.Store, rt *roundTrips, lim waitroom.Limits) {
	ctx := context.Background()
	b.ReportAllocs()
	rt.n.Store(0)
	cost := redisCost(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Admit(ctx, "concert", lim); err != nil {
			b.Fatal(err)
		}
	}
	cost()
	b.ReportMetric(float64(rt.n.Load())/float64(b.N), "roundtrips/op")
}

// BenchmarkRedisStore_DecideParallel: many waiting visitors poll at once,
// as a spike's pages do.
func BenchmarkRedisStore_DecideParallel(b *testing.B) {
	lim := limits(0)
	s, rt := countingStore(b)
	line := joinMany(b, s, lim, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	rt.n.Store(0)
	cost := redisCost(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Decide(ctx, "concert", lim, line[rand.IntN(len(line))], waitroom.JoinTicket); err != nil {
				b.Error(err)
				return
			}
		}
	})
	cost()
	b.ReportMetric(float64(rt.n.Load())/float64(b.N), "roundtrips/op")
}

// redisCost resets the shared server's command statistics; the function it
// returns reports the microseconds Redis spent per script call since, by its
// own accounting (redisstore.ScriptCost).
func redisCost(b *testing.B) (report func()) {
	b.Helper()
	client := shared(b).Client()
	redisstore.ResetCommandStats(b, client)
	return func() {
		b.StopTimer()
		b.ReportMetric(redisstore.ScriptCost(b, client), "redis-µs/call")
	}
}
