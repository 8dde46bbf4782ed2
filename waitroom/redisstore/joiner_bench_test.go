package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
)

// BenchmarkRedisStore_BatchedJoin: one gateway's tick of batched joins
// (waitroom.Joiner) per op, a thousand joins a tick: a block reserved,
// then the thousand places written and the block's tail released, into a
// line that grows by a thousand a tick. Reported per join: the Redis
// commands, a script's own included as INFO commandstats counts them, and
// Redis's own time. The quota is the expensive part, a SET per network
// charged: "networks=1" is a thousand joins from one network (a NAT, a
// load test), "networks=1000" a thousand networks; "no-quota" a room
// without join_limit.
func BenchmarkRedisStore_BatchedJoin(b *testing.B) {
	const perTick = 1000
	for _, tc := range []struct {
		name     string
		networks int
	}{{"no-quota", 0}, {"networks=1", 1}, {"networks=1000", 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := countingStore(b)
			ctx := context.Background()
			lim := limits(0)
			if tc.networks > 0 {
				lim.JoinLimit = waitroom.Rate{N: 1 << 30, Per: time.Second} // charged, never refused
			}
			client := shared(b).Client()
			redisstore.ResetCommandStats(b, client)
			b.ResetTimer()
			for range b.N {
				first, err := s.Reserve(ctx, "concert", lim, perTick+perTick/4, 0)
				if err != nil || first == 0 {
					b.Fatalf("Reserve: %d, %v", first, err)
				}
				now := time.Now()
				ps := make([]waitroom.Placement, perTick)
				for i := range ps {
					v := waitroom.Visitor{ID: visitorID(), Ticket: first + int64(i), Issued: now}
					if tc.networks > 0 {
						v.Network = fmt.Sprintf("n%d", i%tc.networks)
					}
					ps[i] = waitroom.Placement{Visitor: v}
				}
				got, err := s.Place(ctx, "concert", lim, ps, []waitroom.Span{{First: first + perTick, Last: first + perTick + perTick/4 - 1}})
				if err != nil {
					b.Fatal(err)
				}
				if d := got[perTick-1].Decision; d.State != waitroom.StateWaiting || got[perTick-1].Ask {
					b.Fatalf("last place: %+v", got[perTick-1])
				}
			}
			b.StopTimer()
			info, err := client.Info(ctx, "commandstats").Result()
			if err != nil {
				b.Fatal(err)
			}
			cmds, usec := commandTotals(info)
			joins := float64(b.N * perTick)
			b.ReportMetric(cmds/joins, "redis-cmds/join")
			b.ReportMetric(usec/joins, "redis-µs/join")
		})
	}
}

// commandTotals sums INFO commandstats: every command's calls (a script's
// own commands and the script call itself, less the bookkeeping of INFO
// and CONFIG), and the microseconds of the script calls, which hold their
// commands' time. Lines read "cmdstat_evalsha:calls=3,usec=36,...".
func commandTotals(info string) (calls, scriptUsec float64) {
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var n, usec float64
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				n, _ = strconv.ParseFloat(v, 64)
			case "usec":
				usec, _ = strconv.ParseFloat(v, 64)
			}
		}
		switch cmd {
		case "info", "config|resetstat", "config|get", "ping", "hello", "client|setinfo", "script|load":
		case "evalsha", "eval":
			calls += n
			scriptUsec += usec
		default:
			calls += n
		}
	}
	return calls, scriptUsec
}
