package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// BenchmarkRedisStore_MillionWaiting puts 1,000,000 visitors in one line
// through decide.lua, on a server of its own, and measures what a spike of
// that size costs: the joins, the memory per waiting visitor, a waiting
// visitor's poll (single calls, one after another, at random places in the
// line), and admission ticks over the full line. It ignores b.N and runs
// once (the framework stops after one run that outlasts -benchtime); about
// a minute. Targets: poll p99 at most 2ms, at most 150 bytes a visitor, and
// ticks that stay bounded however long the line.
//
//	go test -run '^$' -bench MillionWaiting -benchtime 1x ./waitroom/redisstore/
func BenchmarkRedisStore_MillionWaiting(b *testing.B) {
	const n = 1_000_000
	srv := redistest.Start(b) // its own server: used_memory must see nothing else
	client := srv.Client()
	ctx := context.Background()
	s := New(client, WithKeyPrefix("mil"))
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 10 * time.Minute}
	if _, _, err := storetest.Enter(ctx, s, "concert", lim, "warm-up"); err != nil {
		b.Fatal(err) // creates the room and loads the script
	}
	before := usedMemory(b, client)

	ResetCommandStats(b, client)
	start := time.Now()
	line := joinPipelined(b, s, "concert", lim, n-1)
	fill := time.Since(start)
	b.ReportMetric(fill.Seconds(), "fill-s")
	b.ReportMetric(ScriptCost(b, client), "redis-µs/join")

	perKey, total := roomMemory(b, s, "concert")
	used := usedMemory(b, client) - before
	b.ReportMetric(float64(total)/n, "bytes/visitor")
	b.ReportMetric(float64(used)/n, "used-bytes/visitor")
	b.Logf("%d joins in %v (%.0f/s); MEMORY USAGE %d bytes (%s), %.1f a visitor; used_memory grew %d, %.1f a visitor",
		n, fill.Round(time.Millisecond), n/fill.Seconds(), total, perKey, float64(total)/n, used, float64(used)/n)
	if float64(total)/n > 150 {
		b.Errorf("%.1f bytes a waiting visitor, want at most 150", float64(total)/n)
	}

	ResetCommandStats(b, client)
	polls := pollLatencies(b, s, lim, line, 20_000)
	b.ReportMetric(ScriptCost(b, client), "redis-µs/poll")
	b.ReportMetric(micros(polls[len(polls)/2]), "poll-p50-µs")
	b.ReportMetric(micros(polls[len(polls)*99/100]), "poll-p99-µs")
	b.ReportMetric(micros(polls[len(polls)-1]), "poll-max-µs")
	if p99 := polls[len(polls)*99/100]; p99 > 2*time.Millisecond {
		b.Errorf("poll p99 %v with %d waiting, want at most 2ms", p99, n)
	}

	// A full room: ticks only expire and sweep, 4096 places a tick.
	full, _ := tickLatencies(b, s, lim, 250, 0)
	b.ReportMetric(micros(full[len(full)/2]), "tick-full-p50-µs")
	b.ReportMetric(micros(full[len(full)-1]), "tick-full-max-µs")
	// Room for everyone: each tick admits its batch of a thousand, until
	// the head has passed half the last-poll string, which is then trimmed.
	open := lim
	open.MaxActive = 2 * n
	admitting, trim := tickLatencies(b, s, open, 520, 1000)
	b.ReportMetric(micros(admitting[len(admitting)/2]), "tick-admit-p50-µs")
	b.ReportMetric(micros(admitting[len(admitting)*99/100]), "tick-admit-p99-µs")
	b.ReportMetric(micros(admitting[len(admitting)-1]), "tick-admit-max-µs")
	b.ReportMetric(micros(trim), "tick-trim-µs")
	seen := client.StrLen(ctx, s.cache.keys(s.prefix, "concert")[2]).Val()
	b.Logf("ticks with a full room: p50 %v, max %v; admitting a thousand: p50 %v, p99 %v, max %v; the one that trimmed the last-poll string to %d bytes: %v",
		full[len(full)/2], full[len(full)-1], admitting[len(admitting)/2], admitting[len(admitting)*99/100], admitting[len(admitting)-1], seen, trim)
	if trim == 0 || seen > n/2*seenBytes {
		b.Errorf("last-poll string %d bytes: not trimmed after the head passed half of it", seen)
	}
}

// seenBytes is the size of one last-poll entry (lua/prelude.lua).
const seenBytes = 7

// joinPipelined joins n new visitors in room, 250 EVALSHAs of decide.lua
// a round trip from four connections at once: the calls Decide makes,
// without n round trips. A ticket must come back within the placement
// window (1 s in some callers), which four pipelines of a thousand each
// overran on a loaded machine. It returns them in no particular order.
func joinPipelined(tb testing.TB, s *Store, room string, lim waitroom.Limits, n int) []waitroom.Visitor {
	tb.Helper()
	line := make([]waitroom.Visitor, n)
	for i := range line {
		line[i].ID = newID()
	}
	const workers, batch = 4, 250
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for from := w * batch; from < n; from += workers * batch {
				if err := joinBatch(s, room, lim, line[from:min(from+batch, n)]); err != nil {
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
	return line
}

// joinBatch joins vs in one pipeline and sets their tickets.
func joinBatch(s *Store, room string, lim waitroom.Limits, vs []waitroom.Visitor) error {
	// Two pipelines, as two requests of each visitor: a ticket, then the
	// ticket brought back to take its place.
	for _, join := range []waitroom.Join{waitroom.JoinTicket, waitroom.JoinNone} {
		ctx := context.Background()
		pipe := s.client.Pipeline()
		cmds := make([]*redis.Cmd, len(vs))
		for i, v := range vs {
			cmds[i] = pipe.EvalSha(ctx, decideScript.Hash(), s.decideKeys(room, lim, v, join), s.decideArgs(lim, v, join)...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		for i, cmd := range cmds {
			var r [9]int64
			if err := replyInts(decideScript.name, cmd.Val(), r[:]); err != nil {
				return err
			}
			if r[0] != replyWaiting || r[5]&flagJoined == 0 {
				return fmt.Errorf("%s: a join answered %v, want waiting and joined", decideScript.name, r)
			}
			vs[i].Ticket, vs[i].Placed = r[1], r[5]&flagPlaced != 0
			vs[i].Issued, vs[i].Seen = time.Now(), time.Now()
		}
	}
	return nil
}

// pollLatencies times k polls of visitors picked at random, one call at a
// time as a page's poll makes it, and returns the times sorted.
func pollLatencies(tb testing.TB, s *Store, lim waitroom.Limits, line []waitroom.Visitor, k int) []time.Duration {
	tb.Helper()
	ctx := context.Background()
	out := make([]time.Duration, k)
	for i := range out {
		v := line[rand.IntN(len(line))]
		start := time.Now()
		d, err := s.Decide(ctx, "concert", lim, v, waitroom.JoinTicket)
		out[i] = time.Since(start)
		if err != nil || d.State != waitroom.StateWaiting || d.Ticket != v.Ticket {
			tb.Fatalf("poll of ticket %d: %+v, %v; want waiting on its ticket", v.Ticket, d, err)
		}
	}
	slices.Sort(out)
	return out
}

// tickLatencies times k admission ticks, each of which must admit want,
// and returns the times sorted, and how long the tick took that trimmed the
// last-poll string's dead front (0 if none did).
func tickLatencies(tb testing.TB, s *Store, lim waitroom.Limits, k, want int) ([]time.Duration, time.Duration) {
	tb.Helper()
	ctx := context.Background()
	seen := s.cache.keys(s.prefix, "concert")[2]
	size := s.client.StrLen(ctx, seen).Val()
	out := make([]time.Duration, k)
	var trim time.Duration
	for i := range out {
		start := time.Now()
		a, err := s.Admit(ctx, "concert", lim)
		out[i] = time.Since(start)
		if err != nil || a.Admitted != want || a.Abandoned != 0 {
			tb.Fatalf("tick %d: %+v, %v; want %d admitted, none abandoned", i+1, a, err, want)
		}
		if now := s.client.StrLen(ctx, seen).Val(); now < size {
			trim, size = out[i], now
		}
	}
	slices.Sort(out)
	return out, trim
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
