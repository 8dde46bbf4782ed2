package redisstore

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// Redis runs scripts on its one thread, so the time it spends in them, not
// a client's ns/op, bounds what one server serves. Benchmarks read it from
// Redis's own accounting, INFO commandstats. The helpers are exported for
// the benchmarks of package redisstore_test.

// ResetCommandStats zeroes the server's command statistics.
func ResetCommandStats(tb testing.TB, client redis.UniversalClient) {
	tb.Helper()
	if err := client.ConfigResetStat(context.Background()).Err(); err != nil {
		tb.Fatal(err)
	}
}

// ScriptCost is the microseconds Redis spent per script call (EVALSHA,
// EVAL, FCALL) since the last ResetCommandStats; 0 without calls.
func ScriptCost(tb testing.TB, client redis.UniversalClient) float64 {
	tb.Helper()
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	calls, usec := scriptStats(info)
	if calls == 0 {
		return 0
	}
	return usec / calls
}

// scriptStats sums the calls and microseconds of the script commands in
// INFO commandstats, whose lines read
// "cmdstat_evalsha:calls=3,usec=36,usec_per_call=12.00,...".
func scriptStats(info string) (calls, usec float64) {
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval" && name != "cmdstat_fcall") {
			continue
		}
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

func TestScriptStats_SumsScriptCommands(t *testing.T) {
	t.Parallel()
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=3,usec=36,usec_per_call=12.00,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_eval:calls=1,usec=20,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_zscore:calls=9,usec=9,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	if calls, usec := scriptStats(info); calls != 4 || usec != 56 {
		t.Errorf("scriptStats = %v calls, %v µs; want 4 and 56", calls, usec)
	}
}

// commandCalls reads the calls of every command in INFO commandstats.
func commandCalls(info string) map[string]int64 {
	calls := make(map[string]int64)
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		n, _ := strings.CutPrefix(strings.Split(fields, ",")[0], "calls=")
		calls[cmd], _ = strconv.ParseInt(n, 10, 64)
	}
	return calls
}

// TestDecide_HotPathCommands pins what the commonest answers cost Redis,
// command by command (Redis 7 counts a script's commands in commandstats):
// an admitted visitor's request within the renew interval is TIME and one
// ZSCORE; a waiting visitor's poll adds the room's counters (one HMGET),
// its progress (another, for the gate's anchored polls), its last poll,
// the pending tickets (one BITCOUNT), its place and the
// line's length, and refreshes no key's lifetime (only the line's last
// visitor's poll adds a PEXPIRE NX, since its write ends the last-poll
// string); a newcomer at the back of the line looks in both sets, then
// takes a number and counts it, and writes nothing in the line.
func TestDecide_HotPathCommands(t *testing.T) {
	srv := redistest.Start(t) // its own server: nothing else may run commands
	client := srv.Client()
	ctx := context.Background()
	s := New(client)
	lim := waitroom.Limits{MaxActive: 1, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: time.Minute}
	var vs [4]waitroom.Visitor // one inside, three waiting
	for i := range vs {
		v, d, err := storetest.Enter(ctx, s, "concert", lim, newID())
		if err != nil || !d.Placed {
			t.Fatalf("visitor %d: %+v, %v", i, d, err)
		}
		v.Until = d.Until // as the gate's cookie carries it
		vs[i] = v
	}
	// The one inside uses its session once: its first session slides.
	if d, err := s.Decide(ctx, "concert", lim, vs[0], waitroom.JoinTicket); err != nil || !d.Renewed {
		t.Fatalf("first use of the session: %+v, %v", d, err)
	}
	const rounds = 10
	commands(t, client, func() {
		for range rounds {
			for i, want := range []waitroom.State{waitroom.StateAdmitted, waitroom.StateWaiting, waitroom.StateWaiting} {
				if d, err := s.Decide(ctx, "concert", lim, vs[i], waitroom.JoinTicket); err != nil || d.State != want || d.Renewed {
					t.Fatalf("visitor %d: %+v, %v; want %v", i, d, err, want)
				}
			}
		}
	}, map[string]int64{"evalsha": 3 * rounds, "time": 3 * rounds, "zscore": 3 * rounds,
		"hmget": 4 * rounds, "setrange": 2 * rounds, "bitcount": 2 * rounds, "zrank": 2 * rounds, "zcard": 2 * rounds})
	commands(t, client, func() {
		for range rounds {
			if d, err := s.Decide(ctx, "concert", lim, waitroom.Visitor{ID: newID()}, waitroom.JoinTicket); err != nil || !d.Joined || d.Placed || d.State != waitroom.StateWaiting {
				t.Fatalf("newcomer: %+v, %v; want a ticket, no place yet", d, err)
			}
		}
	}, map[string]int64{"evalsha": rounds, "time": rounds, "zscore": 2 * rounds, "hmget": rounds, "zcard": 2 * rounds,
		"hincrby": 2 * rounds, "bitcount": rounds})
}

// commands checks which commands, and how many of each, fn makes Redis run.
func commands(tb testing.TB, client redis.UniversalClient, fn func(), want map[string]int64) {
	tb.Helper()
	ResetCommandStats(tb, client)
	fn()
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	got := commandCalls(info)
	delete(got, "info")
	delete(got, "config|resetstat")
	if !maps.Equal(got, want) {
		tb.Errorf("commands run:\n got %v\nwant %v", got, want)
	}
}
