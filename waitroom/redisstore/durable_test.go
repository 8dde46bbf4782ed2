package redisstore_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// waitCalls is how many WAIT commands the server has run (INFO
// commandstats).
func waitCalls(tb testing.TB, c redis.UniversalClient) int64 {
	tb.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_wait:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestDurable_OnReplicaWhenCallReturns: with wait_replicas 1 and a real
// replica, an override, an admission batch and a release are on the
// replica by the time the call returns, because WAIT ran after each on the
// write's own connection.
func TestDurable_OnReplicaWhenCallReturns(t *testing.T) {
	master := redistest.Start(t)
	rep := startReplica(t, master)
	rc := rep.client()
	defer rc.Close()
	prefix := freshPrefix()
	var short atomic.Int64
	s := redisstore.New(master.NewClient(), redisstore.WithKeyPrefix(prefix), redisstore.WithWait(1, 10*time.Second),
		redisstore.WithEvents(redisstore.Events{WaitShort: func(int, int) { short.Add(1) }}))
	t.Cleanup(func() { _ = s.Close() })
	onReplica := redisstore.New(rc, redisstore.WithKeyPrefix(prefix))
	ctx := context.Background()
	// The first durable write learns the master's replicas (ROLE).
	if err := s.ClearOverride(ctx, "concert"); err != nil {
		t.Fatal(err)
	}
	before := waitCalls(t, master.Client())
	key := "{" + prefix + ":concert}:override"
	for i := range 20 {
		msg := fmt.Sprintf("back at %d", i)
		if err := s.SetOverride(ctx, "concert", waitroom.Override{Message: &msg}); err != nil {
			t.Fatal(err)
		}
		if got := rc.HGet(ctx, key, "message").Val(); got != msg {
			t.Fatalf("write %d: replica holds message %q when SetOverride returned, want %q", i, got, msg)
		}
	}
	lim := limits(100)
	lim.MaxActive = 0 // nobody in at once: the tick admits them
	ids := make([]waitroom.Visitor, 5)
	for i := range ids {
		ids[i] = join(t, s, lim, waitroom.StateWaiting)
	}
	lim.MaxActive = 100
	if a, err := s.AdmitN(ctx, "concert", lim, 5); err != nil || a.Admitted != 5 {
		t.Fatalf("AdmitN: %+v, %v; want 5 admitted", a, err)
	}
	if st, err := onReplica.Stats(ctx, "concert"); err != nil || st.Active != 5 {
		t.Fatalf("replica's stats after the admission batch returned: %+v, %v; want 5 active", st, err)
	}
	if err := s.Release(ctx, "concert", ids[0].ID); err != nil {
		t.Fatal(err)
	}
	if st, err := onReplica.Stats(ctx, "concert"); err != nil || st.Active != 4 {
		t.Fatalf("replica's stats after the release returned: %+v, %v; want 4 active", st, err)
	}
	if n := waitCalls(t, master.Client()) - before; n < 22 {
		t.Errorf("master ran WAIT %d times for 22 durable writes, want one each", n)
	}
	if n := s.WaitShortfalls() + short.Load(); n != 0 {
		t.Errorf("%d shortfalls with a live replica, want 0", n)
	}
}

// TestDurable_WaitTimesOut: a replica that stops acknowledging (frozen,
// its connection still open) costs each durable write the timeout; the
// write stands on the master, the call succeeds, and the shortfall is
// counted and reported with what was wanted and got.
func TestDurable_WaitTimesOut(t *testing.T) {
	master := redistest.Start(t)
	rep := startReplica(t, master)
	prefix := freshPrefix()
	type report struct{ wanted, got int }
	reports := make(chan report, 10)
	const timeout = 200 * time.Millisecond
	s := redisstore.New(master.NewClient(), redisstore.WithKeyPrefix(prefix), redisstore.WithWait(1, timeout),
		redisstore.WithEvents(redisstore.Events{WaitShort: func(w, g int) {
			select {
			case reports <- report{w, g}:
			default:
			}
		}}))
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	if err := s.ClearOverride(ctx, "concert"); err != nil { // learns the replica
		t.Fatal(err)
	}
	rep.freeze(t)
	defer rep.thaw()
	msg := "held"
	start := time.Now()
	if err := s.SetOverride(ctx, "concert", waitroom.Override{Message: &msg}); err != nil {
		t.Fatalf("SetOverride with a frozen replica: %v, want the write to stand", err)
	}
	if took := time.Since(start); took < timeout {
		t.Errorf("SetOverride returned after %v, before WAIT's timeout %v: WAIT did not wait", took, timeout)
	}
	if o, err := s.Override(ctx, "concert"); err != nil || o.Message == nil || *o.Message != msg {
		t.Errorf("override on the master after the shortfall: %+v, %v; want message %q", o, err, msg)
	}
	if n := s.WaitShortfalls(); n != 1 {
		t.Errorf("WaitShortfalls %d, want 1", n)
	}
	select {
	case r := <-reports:
		if r != (report{1, 0}) {
			t.Errorf("WaitShort(%d, %d), want (1, 0)", r.wanted, r.got)
		}
	default:
		t.Error("no WaitShort event")
	}
}

// TestDurable_NoReplicaNeverWaits: on a Redis without replicas (the
// default single server) wait_replicas 1 costs no timeout: the store asks
// for at most the replicas the master reports.
func TestDurable_NoReplicaNeverWaits(t *testing.T) {
	srv := shared(t)
	const timeout = 5 * time.Second
	s := redisstore.New(srv.NewClient(), redisstore.WithKeyPrefix(freshPrefix()), redisstore.WithWait(1, timeout))
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	start := time.Now()
	for range 10 {
		msg := "x"
		if err := s.SetOverride(ctx, "concert", waitroom.Override{Message: &msg}); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took >= timeout {
		t.Errorf("10 overrides took %v: at least one waited out WAIT's timeout without a replica", took)
	}
	if n := s.WaitShortfalls(); n != 0 {
		t.Errorf("WaitShortfalls %d without replicas, want 0", n)
	}
}

// TestDurable_Conformance runs the store suite with WAIT on, against a
// master with a replica, so the durable path (pipelined EVALSHA, WAIT and
// ROLE, NOSCRIPT's fallback) behaves as the plain one.
func TestDurable_Conformance(t *testing.T) {
	master := redistest.Start(t)
	startReplica(t, master)
	storetest.RunUntimed(t, durableStores(master.NewClient))
}

// TestDurable_ClusterConformance runs the suite with WAIT on, on a
// 3-master Cluster: the durable writes go to the master of the room's
// slot (MasterForKey), which has no replica here, so ROLE says there is
// nothing to wait for.
func TestDurable_ClusterConformance(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	storetest.RunUntimed(t, durableStores(func() redis.UniversalClient {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: addrs, DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		})
	}))
}

// durableStores is newStores with wait_replicas 1.
func durableStores(newClient func() redis.UniversalClient) storetest.NewFunc {
	return func(tb testing.TB, n int) []waitroom.Store {
		prefix := freshPrefix()
		stores := make([]waitroom.Store, n)
		for i := range stores {
			client := newClient()
			s := redisstore.New(client, redisstore.WithKeyPrefix(prefix), redisstore.WithWait(1, 10*time.Second))
			tb.Cleanup(func() {
				_ = s.Close()
				_ = client.Close()
			})
			stores[i] = s
		}
		return stores
	}
}

// TestDurable_ConfigChecked: wait_replicas and wait_timeout are checked
// with the rest of the section, and WAIT's timeout must leave its reply
// time within read_timeout; with wait_replicas 0 the timeout is unused.
func TestDurable_ConfigChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		replicas      int
		timeout, read string
		want          string
	}{
		{1, "50ms", "500ms", ""},
		{0, "", "500ms", ""},
		{0, "nonsense", "500ms", ""},
		{-1, "50ms", "500ms", "wait_replicas: must be >= 0 (0: no WAIT), got -1"},
		{1, "soon", "500ms", `wait_timeout: want a duration such as "90s" or "2m", got "soon"`},
		{1, "300ms", "500ms", `wait_timeout: must be at most half of read_timeout (500ms), got "300ms"`},
	} {
		cfg := redisstore.DefaultConfig()
		cfg.WaitReplicas, cfg.WaitTimeout, cfg.ReadTimeout = c.replicas, c.timeout, c.read
		err := cfg.Validate()
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("wait_replicas %d, wait_timeout %q: %v, want %q", c.replicas, c.timeout, err, c.want)
		}
	}
}

// TestDurable_OpenWaitsByDefault: a store opened from the default
// configuration (wait_replicas 1) waits for the replica its master has.
func TestDurable_OpenWaitsByDefault(t *testing.T) {
	master := redistest.Start(t)
	startReplica(t, master)
	cfg := redisstore.DefaultConfig()
	cfg.Addrs, cfg.KeyPrefix = []string{master.Addr()}, freshPrefix()
	s, err := redisstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.ClearOverride(ctx, "concert"); err != nil { // learns the replica
		t.Fatal(err)
	}
	before := waitCalls(t, master.Client())
	for range 3 {
		if err := s.ClearOverride(ctx, "concert"); err != nil {
			t.Fatal(err)
		}
	}
	if n := waitCalls(t, master.Client()) - before; n != 3 {
		t.Errorf("the master ran WAIT %d times for 3 overrides of a store opened with the defaults, want 3", n)
	}
}
