package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster on loopback ports (cluster nodes announce a
// host and port to each other, which a unix socket cannot give): masters
// alone (StartCluster), or masters with replicas that take over a failed
// master's slots (StartClusterReplicas).
type Cluster struct {
	dir   string
	nodes []*Node
	addrs []string
}

// StartCluster starts a cluster of masters nodes (at least 3) for the test,
// waits until every node reports cluster_state:ok, returns the nodes'
// addresses and stops the cluster when the test ends.
func StartCluster(tb testing.TB, masters int) []string {
	tb.Helper()
	c, err := NewCluster(masters)
	Require(tb, err)
	tb.Cleanup(c.Close)
	return c.Addrs()
}

// NewCluster starts a cluster without a test; the caller must Close it.
func NewCluster(masters int) (*Cluster, error) {
	return newCluster(masters, 0, 5000)
}

// StartClusterReplicas starts a cluster of masters masters (at least 3),
// each with replicasEach replicas, for the test and stops it when the test
// ends. A master that stops answering for cluster-node-timeout (1 s here)
// is failed over to one of its replicas.
func StartClusterReplicas(tb testing.TB, masters, replicasEach int) *Cluster {
	tb.Helper()
	c, err := NewClusterReplicas(masters, replicasEach)
	Require(tb, err)
	tb.Cleanup(c.Close)
	return c
}

// NewClusterReplicas is StartClusterReplicas without a test; the caller
// must Close it.
func NewClusterReplicas(masters, replicasEach int) (*Cluster, error) {
	return newCluster(masters, replicasEach, ClusterNodeTimeout.Milliseconds())
}

// ClusterNodeTimeout is the cluster-node-timeout of StartClusterReplicas's
// nodes: short, so a failover takes a few seconds, not the default 15 s.
const ClusterNodeTimeout = time.Second

func newCluster(masters, replicasEach int, nodeTimeoutMS int64) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, got %d", masters)
	}
	if replicasEach < 0 {
		return nil, fmt.Errorf("redistest: replicasEach must be >= 0, got %d", replicasEach)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoBinary
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found: %w", ErrNoBinary)
	}
	dir, err := shortTempDir("rc")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	for range masters * (1 + replicasEach) {
		// cluster-replica-validity-factor 0: a replica may always take
		// over, however long since it last heard from its master (on a
		// busy machine that can exceed the default's bound, and the
		// failover would never come). Diskless sync without delay: a
		// replica is in sync at once.
		n, err := startNode(bin, dir,
			"--cluster-enabled", "yes", "--cluster-node-timeout", strconv.FormatInt(nodeTimeoutMS, 10),
			"--cluster-config-file", filepath.Join(dir, "nodes-{port}.conf"),
			"--cluster-replica-validity-factor", "0",
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
		if err != nil {
			c.Close()
			return nil, err
		}
		c.nodes, c.addrs = append(c.nodes, n), append(c.addrs, n.addr)
	}
	if err := c.join(cli, replicasEach); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addrs are the nodes' "127.0.0.1:port" addresses.
func (c *Cluster) Addrs() []string { return c.addrs }

// Nodes are every node, masters and replicas, in start order.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Close stops every node and removes the directory.
func (c *Cluster) Close() {
	for _, n := range c.nodes {
		n.close()
	}
	c.nodes = nil
	_ = os.RemoveAll(c.dir)
}

// freePort finds a port that is free, and whose cluster bus port (port +
// 10000) is free too.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("redistest: finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, fmt.Errorf("redistest: no free port pair found")
}

// join makes the nodes one cluster, every slot covered, each master with
// replicasEach replicas, and waits until each node says so.
func (c *Cluster) join(cli string, replicasEach int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasEach), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redistest: redis-cli --cluster create: %w\n%s", err, out)
	}
	for _, addr := range c.addrs {
		if err := waitClusterOK(ctx, addr); err != nil {
			return err
		}
	}
	if replicasEach == 0 {
		return nil
	}
	// Every node must know every replica's master and each replica be in
	// sync, or a failover right after the start would find no replica.
	masters := len(c.nodes) / (1 + replicasEach)
	return poll(ctx, "cluster replicas in place", func() (bool, error) {
		for _, n := range c.nodes {
			view, err := c.view(ctx, n)
			if err != nil {
				return false, err
			}
			if len(view.masters()) != masters || len(view.replicaOf) != len(c.nodes)-masters {
				return false, fmt.Errorf("%s sees %d masters, %d replicas", n.addr, len(view.masters()), len(view.replicaOf))
			}
		}
		for _, n := range c.nodes {
			ri, err := n.info(ctx, "replication")
			if err != nil {
				return false, err
			}
			if ri["role"] == "slave" && ri["master_link_status"] != "up" {
				return false, fmt.Errorf("replica %s: link %s", n.addr, ri["master_link_status"])
			}
		}
		return true, nil
	})
}

func waitClusterOK(ctx context.Context, addr string) error {
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	for {
		info, err := client.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: node %s never reported cluster_state:ok: %v %q", addr, err, info)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
