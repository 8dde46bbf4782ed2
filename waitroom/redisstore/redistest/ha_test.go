package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestSentinel_KillMaster: the group fails over a killed master, and the
// helpers name the new one.
func TestSentinel_KillMaster(t *testing.T) {
	redistest.Long(t, "a Sentinel failover")
	t.Parallel()
	t0 := time.Now()
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	t.Logf("started in %v", time.Since(t0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := s.Master()
	if m == nil {
		t.Fatal("no master")
	}
	if err := m.Client().Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	m.Kill()
	to, at, err := s.WaitSwitch(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("switch %s -> %s after %v", m, to, at.Sub(killed))
	if got := s.Master(); got != to {
		t.Fatalf("Master() = %v, want %v", got, to)
	}
	if v, err := to.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("get on new master: %q %v", v, err)
	}
}

// TestClusterReplicas_KillMaster: the replica of a killed master takes
// its slots, and MasterForKey names it at once.
func TestClusterReplicas_KillMaster(t *testing.T) {
	redistest.Long(t, "a Cluster failover")
	t.Parallel()
	t0 := time.Now()
	c := redistest.StartClusterReplicas(t, 3, 1)
	t.Logf("started in %v", time.Since(t0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := c.MasterForKey("{room}:x")
	reps := c.ReplicasOf(m)
	if m == nil || len(reps) != 1 {
		t.Fatalf("master %v replicas %v", m, reps)
	}
	killed := time.Now()
	m.Kill()
	to, at, err := c.WaitPromoted(ctx, "{room}:x", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("promoted %s -> %s after %v", m, to, at.Sub(killed))
	if to != reps[0] {
		t.Fatalf("promoted %v, want %v", to, reps[0])
	}
	if got := c.MasterForKey("{room}:x"); got != to {
		t.Fatalf("MasterForKey = %v, want %v", got, to)
	}
}
