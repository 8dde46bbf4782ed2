package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// Fault is one failure the harness stages: the store it needs and what
// it does to it (or to a gateway) once admissions flow.
type Fault struct {
	Name string
	// Store starts the store: the topology for Inject, the gateways'
	// store.redis settings, and how to stop it.
	Store func() (any, StoreConfig, func(), error)
	// Inject stages the fault and returns when it happened and, for a
	// failover, when the promotion was announced.
	Inject func(ctx context.Context, e *env) (Window, string, error)
}

// downAfter is the sentinels' down-after-milliseconds in every Sentinel run.
const downAfter = time.Second

// Faults are the five, in the table's order.
func Faults() []Fault {
	return []Fault{
		{Name: "sentinel-kill", Store: sentinelStore, Inject: sentinelKill},
		{Name: "sentinel-freeze", Store: sentinelStore, Inject: sentinelFreeze},
		{Name: "sentinel-lag", Store: sentinelStore, Inject: sentinelLag},
		{Name: "cluster-kill", Store: clusterStore, Inject: clusterKill},
		{Name: "gateway-kill", Store: singleStore, Inject: gatewayKill},
	}
}

// FaultNamed is the fault called name.
func FaultNamed(name string) (Fault, bool) {
	for _, f := range Faults() {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

func singleStore() (any, StoreConfig, func(), error) {
	s, err := redistest.New()
	if err != nil {
		return nil, StoreConfig{}, nil, err
	}
	return s, StoreConfig{Addrs: []string{s.Addr()}}, s.Close, nil
}

func sentinelStore() (any, StoreConfig, func(), error) {
	s, err := redistest.NewSentinel(redistest.SentinelOptions{DownAfter: downAfter})
	if err != nil {
		return nil, StoreConfig{}, nil, err
	}
	return s, StoreConfig{Addrs: s.SentinelAddrs(), MasterName: s.MasterName()}, s.Close, nil
}

func clusterStore() (any, StoreConfig, func(), error) {
	c, err := redistest.NewClusterReplicas(3, 1)
	if err != nil {
		return nil, StoreConfig{}, nil, err
	}
	return c, StoreConfig{Addrs: c.Addrs()}, c.Close, nil
}

// switched waits for the sentinels' +switch-master away from m and puts
// the promotion on the run's clock.
func switched(ctx context.Context, e *env, s *redistest.Sentinel, m *redistest.Node, w *Window) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	to, at, err := s.WaitSwitch(ctx, m)
	if err != nil {
		return "", err
	}
	w.Promoted = at.Sub(e.clock.start)
	return fmt.Sprintf("+switch-master %s -> %s at +%.2fs", m.Addr(), to.Addr(), (w.Promoted - w.At).Seconds()), nil
}

// quiet waits until the replicas hold everything the master has, so a
// fault's losses are its own, not the warm-up's.
func quiet(ctx context.Context, s *redistest.Sentinel) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.WaitSynced(ctx)
}

// sentinelKill: the master dies (SIGKILL); a replica is promoted.
func sentinelKill(ctx context.Context, e *env) (Window, string, error) {
	s := e.store.(*redistest.Sentinel)
	if err := quiet(ctx, s); err != nil {
		return Window{}, "", err
	}
	m := s.Master()
	w := Window{At: e.clock.now(), Bound: downAfter + 3*time.Second}
	m.Kill()
	note, err := switched(ctx, e, s, m, &w)
	return w, note, err
}

// sentinelFreeze: the master is frozen (SIGSTOP) past down-after, so a
// replica is promoted while the old master still holds the gateways'
// connections, then thawed: the split-brain window, where a gateway may
// still write to the old master until the sentinels turn it into a
// replica, which drops those writes.
func sentinelFreeze(ctx context.Context, e *env) (Window, string, error) {
	s := e.store.(*redistest.Sentinel)
	if err := quiet(ctx, s); err != nil {
		return Window{}, "", err
	}
	m := s.Master()
	w := Window{At: e.clock.now(), Bound: downAfter + 3*time.Second}
	if err := m.Pause(); err != nil {
		return w, "", err
	}
	note, err := switched(ctx, e, s, m, &w)
	if rerr := m.Resume(); err == nil {
		err = rerr
	}
	return w, note + fmt.Sprintf("; old master thawed at +%.2fs", (e.clock.now()-w.At).Seconds()), err
}

// sentinelLag: one replica is frozen and cut off for 2 s, then the master
// dies and the frozen one is thawed; the other replica has replica-priority 0, so the
// sentinels must promote the one that lags: the writes of those 2 s are
// really lost, the rest of the data stays.
func sentinelLag(ctx context.Context, e *env) (Window, string, error) {
	s := e.store.(*redistest.Sentinel)
	if err := quiet(ctx, s); err != nil {
		return Window{}, "", err
	}
	m, reps := s.Master(), s.Replicas()
	if len(reps) != 2 {
		return Window{}, "", fmt.Errorf("want 2 replicas, have %d", len(reps))
	}
	lag, keep := reps[0], reps[1]
	if err := keep.Client().ConfigSet(ctx, "replica-priority", "0").Err(); err != nil {
		return Window{}, "", err
	}
	if err := lag.Pause(); err != nil {
		return Window{}, "", err
	}
	// A frozen process's socket still receives: the kernel would buffer
	// the master's stream and hand it over at the thaw, losing nothing.
	// Cutting the master's replication links makes the lag real: the
	// frozen replica cannot reconnect, the other one does at once.
	if err := m.Client().Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		_ = lag.Resume()
		return Window{}, "", err
	}
	sleep(ctx, 2*time.Second)
	lost := offset(ctx, m, "master_repl_offset")
	w := Window{At: e.clock.now(), Bound: downAfter + 3*time.Second}
	m.Kill()
	if err := lag.Resume(); err != nil {
		return w, "", err
	}
	sleep(ctx, 100*time.Millisecond) // it reads what its socket held
	lost -= offset(ctx, lag, "slave_repl_offset")
	note, err := switched(ctx, e, s, m, &w)
	return w, note + fmt.Sprintf("; promoted replica %s lagged %d bytes", lag.Addr(), lost), err
}

// clusterKill: the master of the room's slot dies; its replica takes the
// slot after cluster-node-timeout.
func clusterKill(ctx context.Context, e *env) (Window, string, error) {
	c := e.store.(*redistest.Cluster)
	m := c.MasterForKey(roomKey)
	if m == nil {
		return Window{}, "", fmt.Errorf("no master for %s", roomKey)
	}
	w := Window{At: e.clock.now(), Bound: redistest.ClusterNodeTimeout + 3*time.Second}
	m.Kill()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	to, at, err := c.WaitPromoted(wctx, roomKey, m)
	if err != nil {
		return w, "", err
	}
	w.Promoted = at.Sub(e.clock.start)
	return w, fmt.Sprintf("slot master %s -> %s at +%.2fs", m.Addr(), to.Addr(), (w.Promoted - w.At).Seconds()), nil
}

// gatewayKill: one of the three gateways is killed (SIGKILL) at a random
// moment of a tick, whatever its admitter was doing; the balancer sends
// its visitors to the other two. No store fails, so nothing is promoted.
func gatewayKill(ctx context.Context, e *env) (Window, string, error) {
	sleep(ctx, time.Duration(rand.Int64N(int64(e.room.Tick))))
	g := e.gateways[rand.IntN(len(e.gateways))]
	w := Window{At: e.clock.now(), Bound: 3 * time.Second}
	w.Promoted = w.At
	g.Kill()
	return w, "killed " + g.URL, nil
}

// offset reads a replication offset from n's INFO; 0 when n does not answer.
func offset(ctx context.Context, n *redistest.Node, field string) int64 {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := n.Client().Info(ctx, "replication").Result()
	if err != nil {
		return 0
	}
	var v int64
	for _, line := range strings.Split(info, "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), field+":%d", &v); err == nil {
			return v
		}
	}
	return 0
}
