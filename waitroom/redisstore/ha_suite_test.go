package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// haClient is a client made as the gateway makes it (redisstore.NewClient,
// so with its hooks), with addrs and master as store.redis says them, but
// with generous timeouts: the suite runs many tests at once on a busy
// machine, and a timeout here would be the machine's, not the store's.
func haClient(tb testing.TB, addrs []string, master string) redis.UniversalClient {
	tb.Helper()
	cfg := redisstore.DefaultConfig()
	cfg.Addrs, cfg.MasterName = addrs, master
	cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout = "10s", "10s", "10s"
	c, err := redisstore.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestRedisStore_Sentinel runs the suite through go-redis's failover
// client on a Sentinel group (a master, two replicas, three sentinels),
// started once for the whole suite. The cases timed against the wall
// clock run on one server and a Cluster (TestRedisStore); here they would
// test the machine's load, not the client (storetest.RunUntimed).
func TestRedisStore_Sentinel(t *testing.T) {
	redistest.Long(t, "the store suite on a Sentinel group")
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	storetest.RunUntimed(t, newStores(func() redis.UniversalClient {
		return haClient(t, s.SentinelAddrs(), s.MasterName())
	}))
}

// TestRedisStore_ClusterReplicas runs the suite on a Cluster of 3 masters
// with a replica each, through the Cluster client NewClient makes.
func TestRedisStore_ClusterReplicas(t *testing.T) {
	redistest.Long(t, "the store suite on a Cluster with replicas")
	c := redistest.StartClusterReplicas(t, 3, 1)
	storetest.RunUntimed(t, newStores(func() redis.UniversalClient {
		return haClient(t, c.Addrs(), "")
	}))
}
