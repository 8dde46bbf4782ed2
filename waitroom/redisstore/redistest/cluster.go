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

// Cluster is a Redis Cluster of masters without replicas, on loopback
// ports (cluster nodes announce a host and port to each other, which a unix
// socket cannot give).
type Cluster struct {
	dir   string
	procs []*proc
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
	if masters < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, got %d", masters)
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
	for range masters {
		if err := c.startNode(bin); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.join(cli); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addrs are the nodes' "127.0.0.1:port" addresses.
func (c *Cluster) Addrs() []string { return c.addrs }

// Close stops every node and removes the directory.
func (c *Cluster) Close() {
	for _, p := range c.procs {
		p.kill()
	}
	c.procs = nil
	_ = os.RemoveAll(c.dir)
}

// startNode starts one node on a free port. Another process may take the
// port between the check and the bind, so a node that does not come up is
// tried again on another one.
func (c *Cluster) startNode(bin string) error {
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return err
		}
		p, err := launch(bin, c.dir, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-node-timeout", "5000",
			"--cluster-config-file", filepath.Join(c.dir, fmt.Sprintf("nodes-%d.conf", port)))
		if err != nil {
			return err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if last = p.waitPing("tcp", addr); last == nil {
			c.procs, c.addrs = append(c.procs, p), append(c.addrs, addr)
			return nil
		}
	}
	return last
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

// join makes the nodes one cluster, every slot covered, and waits until
// each node says so.
func (c *Cluster) join(cli string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redistest: redis-cli --cluster create: %w\n%s", err, out)
	}
	for _, addr := range c.addrs {
		if err := waitClusterOK(ctx, addr); err != nil {
			return err
		}
	}
	return nil
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
