package redisstore_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// detectConfig is a store.redis section for addrs (and master, for
// Sentinel), with the default timeouts.
func detectConfig(addrs []string, master string) redisstore.Config {
	c := redisstore.DefaultConfig()
	c.Addrs, c.MasterName = addrs, master
	return c
}

// nodeClient is a plain client of one node at addr, with generous
// timeouts (the machine may be busy).
func nodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxRetries: -1})
}

// TestDetectFailover_Sentinel: a Sentinel group's down-after-milliseconds
// is read from the sentinels themselves, the largest of them (one
// sentinel set slower than the others decides), with failover-timeout
// and the address that gave it.
func TestDetectFailover_Sentinel(t *testing.T) {
	t.Parallel()
	g := redistest.StartSentinel(t, redistest.SentinelOptions{DownAfter: 8 * time.Second, FailoverTimeout: 20 * time.Second})
	ctx := context.Background()
	slow := g.Sentinels()[1]
	if err := slow.Client().Do(ctx, "SENTINEL", "SET", g.MasterName(), "down-after-milliseconds", "9000").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := redisstore.DetectFailover(ctx, detectConfig(g.SentinelAddrs(), g.MasterName()))
	if err != nil {
		t.Fatal(err)
	}
	if d.After != 9*time.Second || d.FailoverTimeout != 20*time.Second || !strings.Contains(d.Source, slow.Addr()) ||
		!strings.Contains(d.Source, "down-after-milliseconds") {
		t.Fatalf("detected %+v, want 9s (failover-timeout 20s) from sentinel %s", d, slow.Addr())
	}
	// A master the sentinels do not monitor: every sentinel says so, and
	// the error says it too, with no figure.
	d, err = redisstore.DetectFailover(ctx, detectConfig(g.SentinelAddrs(), "nosuchmaster"))
	if err == nil || !strings.Contains(err.Error(), "No such master") {
		t.Fatalf("an unknown master: %+v, %v; want the sentinels' refusal", d, err)
	}
}

// TestDetectFailover_Cluster: a Cluster's cluster-node-timeout is read
// from its nodes (CONFIG GET), the largest of the addresses given.
func TestDetectFailover_Cluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	ctx := context.Background()
	c := nodeClient(addrs[2])
	defer c.Close()
	if err := c.ConfigSet(ctx, "cluster-node-timeout", "8000").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := redisstore.DetectFailover(ctx, detectConfig(addrs, ""))
	if err != nil {
		t.Fatal(err)
	}
	if d.After != 8*time.Second || d.FailoverTimeout != 0 || !strings.Contains(d.Source, addrs[2]) ||
		!strings.Contains(d.Source, "cluster-node-timeout") {
		t.Fatalf("detected %+v, want 8s from node %s", d, addrs[2])
	}
}

// TestDetectFailover_ACLRefusesConfig: a least-privilege ACL user (+@all
// -@dangerous, as Redis's docs shape one) may not run CONFIG: no figure,
// and an error that says so, at once.
func TestDetectFailover_ACLRefusesConfig(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	ctx := context.Background()
	for _, a := range addrs {
		c := nodeClient(a)
		err := c.Do(ctx, "ACL", "SETUSER", "gw", "on", ">gw-pass", "~*", "&*", "+@all", "-@dangerous").Err()
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := detectConfig(addrs, "")
	cfg.Username, cfg.Password = "gw", "gw-pass"
	start := time.Now()
	d, err := redisstore.DetectFailover(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("as a user without CONFIG: %+v, %v; want NOPERM", d, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the refusal took %v", took)
	}
}

// TestDetectFailover_Unreachable: sentinels that do not answer (a port
// nobody listens on; a listener that accepts and never replies) give an
// error within the query's bounds, not a hang; one Redis server is no
// failover to ask about.
func TestDetectFailover_Unreachable(t *testing.T) {
	t.Parallel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	_ = closed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	d, err := redisstore.DetectFailover(ctx, detectConfig([]string{silent.Addr().String(), gone}, "mymaster"))
	if err == nil {
		t.Fatalf("no sentinel answers, yet %+v", d)
	}
	// The context's 1.5 s and the per-connection 1 s bound it; 10 s is
	// generous for a busy machine and still far from a hang.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the query took %v", took)
	}
	if _, err := redisstore.DetectFailover(ctx, detectConfig([]string{gone}, "")); err == nil {
		t.Error("one server: a detection time, want an error")
	}
}
