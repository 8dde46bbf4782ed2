package main

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The binary is built once for the package's tests.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "chaos-bin"); buildErr == nil {
			builtBin, buildErr = Build(context.Background(), buildDir)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// ciOptions are DefaultOptions with a shorter watch: one run of each
// fault stays near 20 s, the five near two minutes on a busy machine.
func ciOptions() Options {
	o := DefaultOptions()
	o.Visitors = 200
	o.Observe = 10 * time.Second
	return o
}

// holds runs the fault once and fails the test for each invariant it broke,
// with the figures: every one is a definite violation (verdict.go says why).
func holds(t *testing.T, name string) {
	redistest.Long(t, "a chaos run ("+name+")")
	f, ok := FaultNamed(name)
	if !ok {
		t.Fatalf("no fault %q", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r, err := Run(ctx, binary(t), f, ciOptions())
	redistest.Require(t, err)
	t.Log(Line(r, 1))
	v := r.Verdict
	if v.Admitted < 2*v.MaxActive {
		t.Errorf("only %d visitors admitted in the run: the line did not move enough to check anything", v.Admitted)
	}
	if v.Anonymous > 0 {
		t.Errorf("the site saw %d requests without a visitor's header", v.Anonymous)
	}
	for _, p := range r.Problems {
		t.Error(p)
	}
	if t.Failed() {
		t.Log(r.Logs)
	}
}

// The Sentinel master is killed (SIGKILL); a replica is promoted.
func TestChaos_SentinelMasterKilled(t *testing.T) { holds(t, "sentinel-kill") }

// The Sentinel master is frozen past down-after, a replica promoted, the
// old master thawed with the gateways' connections still open.
func TestChaos_SentinelSplitBrain(t *testing.T) { holds(t, "sentinel-freeze") }

// One replica lags 2 s of writes (frozen, its link cut), then the master
// dies and the lagging one is promoted: real partial data loss.
func TestChaos_SentinelLaggingReplica(t *testing.T) { holds(t, "sentinel-lag") }

// The Cluster master serving the room's slot is killed; its replica takes
// the slot.
func TestChaos_ClusterSlotMasterKilled(t *testing.T) { holds(t, "cluster-kill") }

// One of three gateways is killed mid-tick.
func TestChaos_GatewayKilled(t *testing.T) { holds(t, "gateway-kill") }
