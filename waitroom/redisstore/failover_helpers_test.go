package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
)

// gatewayClient is a client exactly as a gateway makes it from
// store.redis (redisstore.NewClient with the default timeouts: dial 1s,
// read and write 500ms), for the tests of what a failover costs it.
func gatewayClient(tb testing.TB, addrs []string, master string) redis.UniversalClient {
	tb.Helper()
	cfg := redisstore.DefaultConfig()
	cfg.Addrs, cfg.MasterName = addrs, master
	c, err := redisstore.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// line puts n visitors in line in room (nobody goes in: MaxActive 0) and
// returns them, first first.
func line(t *testing.T, s waitroom.Store, room string, n int) []waitroom.Visitor {
	t.Helper()
	ctx := context.Background()
	out := make([]waitroom.Visitor, 0, n)
	for i := range n {
		v, d, err := enter(ctx, s, room, limits(0), visitorID())
		if err != nil || d.State != waitroom.StateWaiting || d.Position != int64(i+1) {
			t.Fatalf("visitor %d entering: %+v %v, want waiting at %d", i+1, d, err, i+1)
		}
		out = append(out, v)
	}
	return out
}

// served is one round of what gateways do for a room: a newcomer enters,
// a tick admits. It fails if either call fails.
func served(s waitroom.Store, room string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, _, err := enter(ctx, s, room, limits(0), visitorID()); err != nil {
		return err
	}
	_, err := s.Admit(ctx, room, limits(0))
	return err
}

// servedAgain calls served every 20 ms from now until a round succeeds,
// and returns when that round began, with the number of rounds that
// failed. It fails the test past limit.
func servedAgain(t *testing.T, s waitroom.Store, room string, limit time.Duration) (time.Time, int) {
	t.Helper()
	stop := time.Now().Add(limit)
	failed := 0
	for {
		began := time.Now()
		err := served(s, room)
		if err == nil {
			return began, failed
		}
		failed++
		if time.Now().After(stop) {
			t.Fatalf("the store never served again within %v: %v", limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keptPlaces wants every visitor of l still in line at its place.
func keptPlaces(t *testing.T, s waitroom.Store, room string, l []waitroom.Visitor) {
	t.Helper()
	ctx := context.Background()
	for i, v := range l {
		d, err := s.Decide(ctx, room, limits(0), v, waitroom.JoinNone)
		if err != nil || d.State != waitroom.StateWaiting || d.Position != int64(i+1) {
			t.Errorf("visitor %d after the failover: %+v %v, want waiting at %d", i+1, d, err, i+1)
		}
	}
}

// roomTag is the hash tag every key of room has under prefix (keys.go), to
// find the Cluster node serving the room.
func roomTag(prefix, room string) string { return "{" + prefix + ":" + room + "}" }

// scriptStats is how many scripts node n ran (EVALSHA and EVAL, as INFO
// commandstats counts them) and how many of those failed while running
// (a write refused inside the script: NOREPLICAS, READONLY).
func scriptStats(t *testing.T, n redis.UniversalClient) (calls, failed int64) {
	t.Helper()
	info, err := n.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			c, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += c
			case "failed_calls":
				failed += c
			}
		}
	}
	return calls, failed
}
