package redisstore_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// Each kind of store error an operator acts on is produced by a real
// redis-server and sorted: readonly (a replica), masterdown (a replica
// whose master is gone, with replica-serve-stale-data no), noreplicas
// (min-replicas-to-write unmet), clusterdown (a Cluster node without the
// slot's master), oom, unreachable. LOADING (a node reading a large
// dataset at start), TRYAGAIN (a multi-key call during a slot's
// migration) and BUSY (a script past busy-reply-threshold) are not
// produced: doing so for real takes a dataset, a migration or a script
// this store never runs; KindOf sorts them by go-redis's own predicates.

// kinds records the kinds Events.Error was told.
type kinds struct {
	mu sync.Mutex
	k  []redisstore.ErrorKind
}

func (k *kinds) add(e redisstore.ErrorKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.k = append(k.k, e)
}

func (k *kinds) last() redisstore.ErrorKind {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.k) == 0 {
		return ""
	}
	return k.k[len(k.k)-1]
}

// sortedStore is a store on client that records its error kinds.
func sortedStore(tb testing.TB, client redis.UniversalClient) (*redisstore.Store, *kinds) {
	k := &kinds{}
	s := redisstore.New(client, redisstore.WithKeyPrefix(freshPrefix()), redisstore.WithEvents(redisstore.Events{Error: k.add}))
	tb.Cleanup(func() { _ = s.Close(); _ = client.Close() })
	return s, k
}

// expectKind checks err's kind, the event, the store's last error and
// the state /readyz and the dashboard would show.
func expectKind(t *testing.T, s *redisstore.Store, k *kinds, err error, want redisstore.ErrorKind, state waitroom.StoreState) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	if !errors.Is(err, waitroom.ErrUnavailable) {
		t.Errorf("%v: not ErrUnavailable", err)
	}
	if got := redisstore.KindOf(err); got != want {
		t.Errorf("KindOf(%v) = %s, want %s", err, got, want)
	}
	if got := k.last(); got != want {
		t.Errorf("Events.Error was told %q, want %s", got, want)
	}
	if got, at := s.LastError(); got != want || at.IsZero() {
		t.Errorf("LastError %s at %v, want %s", got, at, want)
	}
	if got := s.State(err); got != state {
		t.Errorf("State(%v) = %s, want %s", err, got, state)
	}
	if got := s.LastState(); got != state {
		t.Errorf("LastState %s, want %s", got, state)
	}
}

func override(s *redisstore.Store) error {
	msg := "x"
	return s.SetOverride(context.Background(), "concert", waitroom.Override{Message: &msg})
}

func TestErrorKind_ReadOnlyReplica(t *testing.T) {
	master := redistest.Start(t)
	rep := startReplica(t, master)
	s, k := sortedStore(t, rep.client())
	expectKind(t, s, k, override(s), redisstore.KindReadOnly, waitroom.StoreFailingOver)
}

func TestErrorKind_MasterDown(t *testing.T) {
	master := redistest.Start(t)
	rep := startReplica(t, master, "--replica-serve-stale-data", "no")
	master.Stop()
	s, k := sortedStore(t, rep.client())
	// The replica notices its master gone when the link breaks; until
	// then it serves, so wait for the refusal.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err = s.Stats(context.Background(), "concert"); err != nil {
			break
		}
	}
	expectKind(t, s, k, err, redisstore.KindMasterDown, waitroom.StoreFailingOver)
}

func TestErrorKind_NoReplicas(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client().ConfigSet(context.Background(), "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	s, k := sortedStore(t, srv.NewClient())
	expectKind(t, s, k, override(s), redisstore.KindNoReplicas, waitroom.StoreFailingOver)
}

func TestErrorKind_OutOfMemory(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client().ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	s, k := sortedStore(t, srv.NewClient())
	expectKind(t, s, k, override(s), redisstore.KindOOM, waitroom.StoreUnreachable)
}

// TestErrorKind_ClusterDown: a Cluster node that serves no slot answers
// CLUSTERDOWN, as the nodes of a Cluster do for a slot whose master failed
// until a replica is promoted.
func TestErrorKind_ClusterDown(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		redistest.Require(t, redistest.ErrNoBinary)
	}
	dir, err := os.MkdirTemp("/tmp", "rc")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "c.sock")
	cmd := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.RemoveAll(dir) })
	client := redis.NewClient(&redis.Options{Addr: sock, DialTimeout: 10 * time.Second, MaxRetries: -1})
	for deadline := time.Now().Add(15 * time.Second); client.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("cluster node never answered")
		}
	}
	s, k := sortedStore(t, client)
	_, err = s.Stats(context.Background(), "concert")
	expectKind(t, s, k, err, redisstore.KindClusterDown, waitroom.StoreFailingOver)
}

// TestErrorKind_Unreachable: a store that does not answer is unreachable
// on one server, and failing over with Sentinel or a Cluster, whose
// replicas stand by to take over.
func TestErrorKind_Unreachable(t *testing.T) {
	srv := redistest.Start(t)
	s, k := sortedStore(t, srv.NewClient())
	srv.Stop()
	expectKind(t, s, k, s.Ping(context.Background()), redisstore.KindUnreachable, waitroom.StoreUnreachable)

	c, err := redistest.NewCluster(3)
	redistest.Require(t, err)
	cfg := redisstore.DefaultConfig()
	cfg.Addrs = c.Addrs()
	cfg.KeyPrefix = freshPrefix()
	ck := &kinds{}
	cs, err := redisstore.Open(cfg, redisstore.WithEvents(redisstore.Events{Error: ck.add}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(context.Background()); err != nil {
		t.Fatalf("cluster up: %v", err)
	}
	c.Close()
	expectKind(t, cs, ck, override(cs), redisstore.KindUnreachable, waitroom.StoreFailingOver)
}
