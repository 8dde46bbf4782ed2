package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// One redis-server for the package; tests that need a fresh backend take a
// fresh key prefix on it. Tests that stop or restart Redis start their own.
var (
	server    *redistest.Server
	serverErr error
)

func TestMain(m *testing.M) {
	server, serverErr = redistest.New()
	code := m.Run()
	if server != nil {
		server.Close()
	}
	os.Exit(code)
}

// shared returns the package's server, or skips (or fails) the test when
// there is none.
func shared(tb testing.TB) *redistest.Server {
	tb.Helper()
	redistest.Require(tb, serverErr)
	return server
}

var prefixes atomic.Int64

// freshPrefix is a key prefix no other test uses: an empty backend.
func freshPrefix() string {
	return fmt.Sprintf("t%d-%04x", prefixes.Add(1), rand.Uint32N(1<<16))
}

// newStores is storetest's NewFunc: n stores sharing a fresh prefix, each
// with its own client, as n gateway instances have their own pools.
func newStores(newClient func() redis.UniversalClient) storetest.NewFunc {
	return func(tb testing.TB, n int) []waitroom.Store {
		prefix := freshPrefix()
		stores := make([]waitroom.Store, n)
		for i := range stores {
			stores[i] = newStore(tb, newClient(), prefix)
		}
		return stores
	}
}

// newStore makes a store on client and closes both when the test ends.
func newStore(tb testing.TB, client redis.UniversalClient, prefix string) *redisstore.Store {
	s := redisstore.New(client, redisstore.WithKeyPrefix(prefix))
	tb.Cleanup(func() {
		_ = s.Close()
		_ = client.Close()
	})
	return s
}

func TestRedisStore(t *testing.T) {
	srv := shared(t)
	storetest.Run(t, newStores(srv.NewClient))
}

// TestRedisStore_Cluster runs the suite on a 3-master Redis Cluster: each
// room's keys share a hash tag, so its scripts run on the node owning that
// slot, and the rooms of the suite spread over all three.
func TestRedisStore_Cluster(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	storetest.Run(t, newStores(func() redis.UniversalClient {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: addrs, DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		})
	}))
}
