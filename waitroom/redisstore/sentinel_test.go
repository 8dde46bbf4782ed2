package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestSentinelFailover_KillMaster: the master of a Sentinel group is
// killed (SIGKILL); through the client a gateway makes (go-redis's
// failover client, redisstore.NewClient), the store serves again at once
// after the sentinels' +switch-master, so within down-after plus the
// election of the kill, and the line kept its places (the replicas were
// in sync).
func TestSentinelFailover_KillMaster(t *testing.T) {
	redistest.Long(t, "a Sentinel failover")
	t.Parallel()
	o := redistest.SentinelOptions{DownAfter: time.Second}
	g := redistest.StartSentinel(t, o)
	s := newStore(t, gatewayClient(t, g.SentinelAddrs(), g.MasterName()), freshPrefix())
	const room = "r"
	l := line(t, s, room, 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	old := g.Master()
	killed := time.Now()
	old.Kill()
	back, failed := servedAgain(t, s, room, 30*time.Second)
	to, switched, err := g.WaitSwitch(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("master %s killed; +switch-master to %s after %v; store served again after %v (%v after the switch), %d rounds failed",
		old, to, switched.Sub(killed).Round(time.Millisecond), back.Sub(killed).Round(time.Millisecond),
		back.Sub(switched).Round(time.Millisecond), failed)
	// What the client controls: how soon after the switch it serves. The
	// switch itself is the sentinels' (down-after plus an election).
	if lag := back.Sub(switched); lag > 2*time.Second {
		t.Errorf("the store served again %v after +switch-master, want within 2s", lag)
	}
	keptPlaces(t, s, room, l)
}
