package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestClusterFailover_KillSlotMaster: the master serving a room's slot is
// killed (SIGKILL); its replica takes the slot over within
// cluster-node-timeout and an election, and the store, through the
// Cluster client a gateway makes (redisstore.NewClient), serves the room
// again within moments of that. go-redis alone reloads its slot map only
// on MOVED or READONLY or once a minute, so it kept dialling the dead
// master for up to 60 s (issue 22); topologyHook reloads the map when a
// node is lost.
func TestClusterFailover_KillSlotMaster(t *testing.T) {
	redistest.Long(t, "a Cluster failover")
	t.Parallel()
	clusterFailover(t, "killed", func(n *redistest.Node) { n.Kill() })
}

// TestClusterFailover_FreezeSlotMaster: the same with the master frozen
// (SIGSTOP), so calls to it time out rather than being refused; thawed
// after the promotion, it becomes a replica of the new master.
func TestClusterFailover_FreezeSlotMaster(t *testing.T) {
	redistest.Long(t, "a Cluster failover")
	t.Parallel()
	clusterFailover(t, "frozen", func(n *redistest.Node) {
		if err := n.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Resume() })
	})
}

func clusterFailover(t *testing.T, what string, fault func(*redistest.Node)) {
	c := redistest.StartClusterReplicas(t, 3, 1)
	prefix := freshPrefix()
	s := newStore(t, gatewayClient(t, c.Addrs(), ""), prefix)
	const room = "r"
	l := line(t, s, room, 5)
	old := c.MasterForKey(roomTag(prefix, room))
	if old == nil || len(c.ReplicasOf(old)) != 1 {
		t.Fatalf("the room's master %v has replicas %v, want one", old, c.ReplicasOf(old))
	}
	// The replica has every write before the kill (WAIT), so the line
	// must survive whole: what is measured is the client, not Redis's
	// asynchronous replication.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n, err := old.Client().Do(ctx, "WAIT", 1, 10_000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err)
	}
	killed := time.Now()
	fault(old)
	promoted := make(chan time.Time, 1)
	go func() {
		to, at, err := c.WaitPromoted(ctx, roomTag(prefix, room), old)
		if err != nil {
			t.Error(err)
		} else {
			t.Logf("replica %s serves the slot", to)
		}
		promoted <- at
	}()
	back, failed := servedAgain(t, s, room, 50*time.Second)
	at := <-promoted
	t.Logf("slot master %s %s; replica promoted after %v; store served again after %v (%v after the promotion), %d rounds failed",
		old, what, at.Sub(killed).Round(time.Millisecond), back.Sub(killed).Round(time.Millisecond),
		back.Sub(at).Round(time.Millisecond), failed)
	// The client's part: serving soon after the replica does. Without
	// the topology hook this is the rest of go-redis's 60 s reload
	// interval.
	if lag := back.Sub(at); lag > 2*time.Second {
		t.Errorf("the store served again %v after the promotion, want within 2s", lag)
	}
	keptPlaces(t, s, room, l)
}
