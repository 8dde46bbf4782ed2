package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Node is one redis-server of a Sentinel group or a Cluster with replicas,
// on a loopback TCP port: replicas, sentinels and cluster nodes announce
// host and port to each other, which a unix socket cannot give. Its fault
// methods stage the failures a failover follows: Kill (the process dies),
// Pause and Resume (it freezes with its sockets open, then thaws).
type Node struct {
	addr string
	bin  string
	args []string // how it was launched, for Restart

	mu     sync.Mutex
	proc   *proc // nil once killed
	paused bool
	client redis.UniversalClient
}

// startNode launches redis-server with args and "--port <free port>" on
// loopback, retrying on another port when one was taken between the check
// and the bind (several test packages start servers at once).
func startNode(bin, dir string, args ...string) (*Node, error) {
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		full := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, args...)
		for i, a := range full {
			full[i] = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		}
		p, err := launch(bin, dir, full...)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if last = p.waitPing("tcp", addr); last == nil {
			return &Node{addr: addr, bin: bin, args: append([]string{"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"}, full...), proc: p}, nil
		}
	}
	return nil, last
}

// Addr is the node's "127.0.0.1:port".
func (n *Node) Addr() string { return n.addr }

// String is the node's address, for test logs.
func (n *Node) String() string { return n.addr }

// Kill ends the process with SIGKILL (a paused one too) and waits until it
// is gone. Killing a killed node does nothing.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		n.proc.kill()
		n.proc = nil
	}
	n.paused = false
}

// Pause freezes the process (SIGSTOP): its sockets stay open, clients
// connect and send and wait for replies that do not come, and the others
// see it stop answering, as with a swapping host or a network partition.
func (n *Node) Pause() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return errors.New("redistest: pausing a killed node")
	}
	if err := pause(n.proc.cmd.Process, true); err != nil {
		return err
	}
	n.paused = true
	return nil
}

// Resume thaws a paused node (SIGCONT).
func (n *Node) Resume() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return errors.New("redistest: resuming a killed node")
	}
	if err := pause(n.proc.cmd.Process, false); err != nil {
		return err
	}
	n.paused = false
	return nil
}

// Restart starts a killed node again on its port, empty (there is no
// persistence) and with its first configuration: a Sentinel group's
// sentinels then turn it into a replica of the current master (within
// their 10 s INFO period; until then the first master comes back as an
// empty master), a cluster node rejoins from its nodes file. A master
// restarted before the sentinels or the cluster failed it over is still
// the master, empty, and its replicas resync from it: the full loss. A
// running node is killed first.
func (n *Node) Restart() error {
	n.Kill()
	n.mu.Lock()
	defer n.mu.Unlock()
	p, err := launchArgs(n.bin, n.args...)
	if err != nil {
		return err
	}
	if err := p.waitPing("tcp", n.addr); err != nil {
		return err
	}
	n.proc = p
	return nil
}

// alive: running and not paused, so it answers.
func (n *Node) alive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && !n.paused
}

// Client is a plain client of this node, made on first use and closed
// with the group. Its timeouts are generous (the machine may be busy) and
// it does not retry; it does not follow a failover: it stays on this node.
func (n *Node) Client() redis.UniversalClient {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client == nil {
		n.client = redis.NewClient(&redis.Options{
			Addr: n.addr, DialTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
			MaxRetries: -1,
		})
	}
	return n.client
}

// close kills the node and closes its client.
func (n *Node) close() {
	n.Kill()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client != nil {
		_ = n.client.Close()
		n.client = nil
	}
}

// query runs one command on the node with a short timeout, on a fresh
// connection: the group's own bookkeeping must not hang on a paused node
// or reuse a connection a fault broke.
func (n *Node) query(ctx context.Context, args ...any) (any, error) {
	c := redis.NewClient(&redis.Options{
		Addr: n.addr, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		MaxRetries: -1, PoolSize: 1,
	})
	defer c.Close()
	return c.Do(ctx, args...).Result()
}

// info returns the fields of INFO section as a map.
func (n *Node) info(ctx context.Context, section string) (map[string]string, error) {
	v, err := n.query(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("redistest: INFO %s on %s: got %T", section, n.addr, v)
	}
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			out[k] = val
		}
	}
	return out, nil
}

// poll calls f every 20 ms until it says done, f fails past ctx, or ctx
// ends; the last error of f explains a timeout.
func poll(ctx context.Context, what string, f func() (bool, error)) error {
	var last error
	for {
		done, err := f()
		if done && err == nil {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s: %w (last: %v)", what, ctx.Err(), last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
