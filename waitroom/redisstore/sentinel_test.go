package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// TestSentinelFailover_SplitBrain: the master is frozen (SIGSTOP) past
// down-after, a replica is promoted, and the old master is thawed while a
// gateway keeps serving. go-redis's failover client drops its
// connections to the old master when it hears +switch-master, so no call
// it makes after the switch goes there; what the old master does run
// once thawed are the scripts gateways sent it while it was frozen (those
// calls had already failed on the read timeout). With min-replicas-to-write
// 0 it runs them to the end, writes that vanish when the sentinels turn it
// into a replica; with min-replicas-to-write 1 it refuses the writes of
// any that it runs (its replicas left it, its good-replica count drops)
// -- but a thawed master counts its replicas again only in its once-a-
// second cron, so what its sockets held may slip in first: the test
// reports the figures and holds what must hold in both: the line's places
// survive, and the store serves again.
func TestSentinelFailover_SplitBrain(t *testing.T) {
	redistest.Long(t, "two Sentinel failovers")
	t.Parallel()
	for _, minReplicas := range []int{0, 1} {
		t.Run(fmt.Sprintf("min-replicas-to-write=%d", minReplicas), func(t *testing.T) {
			t.Parallel()
			splitBrain(t, minReplicas)
		})
	}
}

func splitBrain(t *testing.T, minReplicas int) {
	g := redistest.StartSentinel(t, redistest.SentinelOptions{DownAfter: time.Second, MinReplicasToWrite: minReplicas})
	s := newStore(t, gatewayClient(t, g.SentinelAddrs(), g.MasterName()), freshPrefix())
	const room = "r"
	l := line(t, s, room, 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	old := g.Master()
	if err := old.Client().ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// A gateway serving the room all along.
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if served(s, room) == nil {
				ok.Add(1)
			} else {
				failed.Add(1)
			}
		}
	}()
	frozen := time.Now()
	if err := old.Pause(); err != nil {
		t.Fatal(err)
	}
	to, switched, err := g.WaitSwitch(ctx, old)
	if err != nil {
		_ = old.Resume()
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the gateway serves from the new master
	okBefore := ok.Load()
	if err := old.Resume(); err != nil {
		t.Fatal(err)
	}
	thawed := time.Now()
	// Until the sentinels turn the thawed master into a replica of the
	// new one, a client that still reaches it (one that does not follow
	// the sentinels, or a gateway whose sentinel connection missed the
	// switch) writes there: a plain SET every 20 ms says whether it takes
	// writes, and until when.
	var demoted, lastAccepted time.Time
	accepted, refused := 0, 0
	for demoted.IsZero() {
		role, err := old.Client().Do(ctx, "ROLE").Slice()
		switch {
		case err == nil && len(role) > 0 && role[0] == "slave":
			demoted = time.Now()
			continue
		case ctx.Err() != nil:
			t.Fatalf("the thawed master was never demoted: %v %v", role, err)
		}
		if err := old.Client().Set(ctx, "stale-write", "x", 0).Err(); err == nil {
			accepted++
			lastAccepted = time.Now()
		} else if redis.HasErrorPrefix(err, "NOREPLICAS") || redis.HasErrorPrefix(err, "READONLY") {
			refused++
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stop)
	<-done
	calls, scriptFailed := scriptStats(t, old.Client())
	window := time.Duration(0)
	if accepted > 0 {
		window = lastAccepted.Sub(thawed)
	}
	t.Logf("min-replicas-to-write %d: frozen master %s replaced by %s after %v; thawed %v later, demoted %v after the thaw; "+
		"a stale client's writes on it meanwhile: %d accepted (the last %v after the thaw), %d refused; "+
		"the gateway's scripts it ran once thawed: %d (%d refused a write inside); gateway rounds: %d served (%d before the thaw), %d failed",
		minReplicas, old, to, switched.Sub(frozen).Round(time.Millisecond), thawed.Sub(switched).Round(time.Millisecond),
		demoted.Sub(thawed).Round(time.Millisecond), accepted, window.Round(time.Millisecond), refused,
		calls, scriptFailed, ok.Load(), okBefore, failed.Load())
	// min-replicas-to-write 1: the thawed master counts no replica with a
	// lag under min-replicas-max-lag (they follow the new master), so it
	// refuses writes once its cron (each second) has counted them again.
	// Without it, it takes writes until it is demoted: lost writes.
	switch {
	case minReplicas > 0 && accepted > 0 && window > 1500*time.Millisecond:
		t.Errorf("with min-replicas-to-write %d the thawed master took writes %v after the thaw", minReplicas, window)
	case minReplicas == 0 && accepted == 0:
		t.Errorf("without min-replicas-to-write the thawed master took no write before its demotion (%d refused)", refused)
	}
	if okBefore == 0 {
		t.Error("the gateway never served from the new master while the old one was frozen")
	}
	if ok.Load() == okBefore {
		t.Error("the gateway did not serve after the thaw")
	}
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	keptPlaces(t, s, room, l)
}
