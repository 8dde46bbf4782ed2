package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelOptions shape a Sentinel group. Zero values take the defaults.
type SentinelOptions struct {
	// DownAfter is the sentinels' down-after-milliseconds: how long a
	// master may not answer before it is deemed down. Default 1s.
	DownAfter time.Duration
	// FailoverTimeout is the sentinels' failover-timeout. Default 5s.
	FailoverTimeout time.Duration
	// MinReplicasToWrite is min-replicas-to-write on every data node (the
	// master refuses writes with fewer replicas acknowledging within
	// min-replicas-max-lag, 1 s here). Default 0: off.
	MinReplicasToWrite int
}

const sentinelMaster = "wrmaster"

// Sentinel is a Sentinel group on loopback TCP ports: one master, two
// replicas and three sentinels (redis-server --sentinel) with quorum 2, so
// a master that does not answer for DownAfter is replaced by a replica. No
// persistence: a killed node restarts empty.
type Sentinel struct {
	opts      SentinelOptions
	dir       string
	nodes     []*Node // data nodes; nodes[0] the first master
	sentinels []*Node

	mu       sync.Mutex
	switches []switchEvent // every +switch-master seen, in order
	changed  chan struct{} // closed and replaced on each new switch

	cancel context.CancelFunc
	subs   sync.WaitGroup
}

// switchEvent is one +switch-master: from and to addresses, and when the
// first sentinel's message arrived.
type switchEvent struct {
	from, to string
	at       time.Time
}

// StartSentinel starts a Sentinel group for the test and stops it when the
// test ends.
func StartSentinel(tb testing.TB, o SentinelOptions) *Sentinel {
	tb.Helper()
	s, err := NewSentinel(o)
	Require(tb, err)
	tb.Cleanup(s.Close)
	return s
}

// NewSentinel starts a Sentinel group without a test (for mains and
// TestMain); the caller must Close it. It returns once the replicas are in
// sync and every sentinel knows both replicas and the two other sentinels,
// so a failover can be authorised from then on.
func NewSentinel(o SentinelOptions) (*Sentinel, error) {
	if o.DownAfter <= 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout <= 0 {
		o.FailoverTimeout = 5 * time.Second
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoBinary
	}
	dir, err := shortTempDir("rs")
	if err != nil {
		return nil, err
	}
	s := &Sentinel{opts: o, dir: dir, changed: make(chan struct{})}
	if err := s.start(bin); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Sentinel) start(bin string) error {
	// Every data node gets the same settings, since any may become master:
	// replicas announce the loopback address the sentinels and clients
	// reach them on, sync at once without a disk (the 5 s default delay of
	// a diskless sync would slow every start and resync), and
	// min-replicas-to-write applies to whichever is master.
	common := []string{
		"--replica-announce-ip", "127.0.0.1",
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--min-replicas-to-write", strconv.Itoa(s.opts.MinReplicasToWrite), "--min-replicas-max-lag", "1",
	}
	m, err := startNode(bin, s.dir, common...)
	if err != nil {
		return err
	}
	s.nodes = append(s.nodes, m)
	host, port := splitAddr(m.addr)
	for range 2 {
		r, err := startNode(bin, s.dir, append([]string{"--replicaof", host, port}, common...)...)
		if err != nil {
			return err
		}
		s.nodes = append(s.nodes, r)
	}
	for i := range 3 {
		n, err := s.startSentinel(bin, i, m.addr)
		if err != nil {
			return err
		}
		s.sentinels = append(s.sentinels, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, n := range s.sentinels {
		s.subs.Add(1)
		go s.watch(ctx, n)
	}
	wait, done := context.WithTimeout(context.Background(), time.Minute)
	defer done()
	if err := s.waitKnown(wait); err != nil {
		return err
	}
	return s.WaitSynced(wait)
}

// startSentinel writes sentinel i's config file (a sentinel rewrites it
// with what it learns, so each has its own) and starts it on a free port.
func (s *Sentinel) startSentinel(bin string, i int, master string) (*Node, error) {
	host, port := splitAddr(master)
	conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", i))
	name := sentinelMaster
	body := strings.Join([]string{
		"sentinel announce-ip 127.0.0.1",
		fmt.Sprintf("sentinel monitor %s %s %s 2", name, host, port),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", name, s.opts.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", name, s.opts.FailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", name),
		"",
	}, "\n")
	var last error
	for range 5 {
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(p)
		args := []string{conf, "--sentinel", "--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--dir", s.dir, "--daemonize", "no"}
		pr, err := launchArgs(bin, args...)
		if err != nil {
			return nil, err
		}
		if last = pr.waitPing("tcp", addr); last == nil {
			return &Node{addr: addr, bin: bin, args: args, proc: pr}, nil
		}
	}
	return nil, last
}

// waitKnown waits until every sentinel knows the two replicas and the two
// other sentinels (they find each other through the master's hello
// channel, every 2 s): before that a failover could not gather its quorum
// and majority.
func (s *Sentinel) waitKnown(ctx context.Context) error {
	for _, sn := range s.sentinels {
		err := poll(ctx, "sentinel "+sn.addr+" knowing the group", func() (bool, error) {
			v, err := sn.query(ctx, "SENTINEL", "MASTER", sentinelMaster)
			if err != nil {
				return false, err
			}
			f := fields(v)
			return f["num-slaves"] == "2" && f["num-other-sentinels"] == "2", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// watch records every +switch-master that sentinel n publishes, until ctx
// ends. Each sentinel publishes the switch; the first report counts.
func (s *Sentinel) watch(ctx context.Context, n *Node) {
	defer s.subs.Done()
	c := redis.NewClient(&redis.Options{Addr: n.addr, DialTimeout: 2 * time.Second, MaxRetries: -1})
	defer c.Close()
	// The channel reconnects by itself when the sentinel restarts; Close
	// ends it.
	ps := c.Subscribe(ctx, "+switch-master")
	go func() {
		<-ctx.Done()
		_ = ps.Close()
	}()
	for msg := range ps.Channel() {
		s.record(msg.Payload, time.Now())
	}
}

// record notes a switch from "<name> <old ip> <old port> <new ip> <new
// port>", once across the sentinels.
func (s *Sentinel) record(payload string, at time.Time) {
	f := strings.Fields(payload)
	if len(f) != 5 || f[0] != sentinelMaster {
		return
	}
	e := switchEvent{from: f[1] + ":" + f[2], to: f[3] + ":" + f[4], at: at}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := len(s.switches); k > 0 && s.switches[k-1].from == e.from && s.switches[k-1].to == e.to {
		return // another sentinel's report of the same switch
	}
	s.switches = append(s.switches, e)
	close(s.changed)
	s.changed = make(chan struct{})
}

// MasterName is the name the sentinels monitor the master under, for
// store.redis.master_name.
func (s *Sentinel) MasterName() string { return sentinelMaster }

// SentinelAddrs are the sentinels' "127.0.0.1:port" addresses, for
// store.redis.addrs.
func (s *Sentinel) SentinelAddrs() []string {
	out := make([]string, len(s.sentinels))
	for i, n := range s.sentinels {
		out[i] = n.addr
	}
	return out
}

// Sentinels are the sentinel processes themselves, to stage their faults.
func (s *Sentinel) Sentinels() []*Node { return s.sentinels }

// Master is the data node the sentinels name master now (the first
// answering sentinel's word), or nil when none answers or it names none of
// the group's nodes.
func (s *Sentinel) Master() *Node {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, sn := range s.sentinels {
		if !sn.alive() {
			continue
		}
		v, err := sn.query(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinelMaster)
		if err != nil {
			continue
		}
		a, ok := v.([]any)
		if !ok || len(a) != 2 {
			continue
		}
		return s.node(fmt.Sprint(a[0]) + ":" + fmt.Sprint(a[1]))
	}
	return nil
}

// Replicas are the data nodes other than Master, killed or paused ones
// included.
func (s *Sentinel) Replicas() []*Node {
	m := s.Master()
	var out []*Node
	for _, n := range s.nodes {
		if n != m {
			out = append(out, n)
		}
	}
	return out
}

// Nodes are the three data nodes, in start order.
func (s *Sentinel) Nodes() []*Node { return s.nodes }

func (s *Sentinel) node(addr string) *Node {
	for _, n := range s.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// WaitSwitch waits for the sentinels' +switch-master away from from (the
// master when the fault was staged) and returns the new master and when
// the first sentinel announced it. A switch that happened before the call
// counts (the group records every switch from its start), as long as it
// came after from last became master.
func (s *Sentinel) WaitSwitch(ctx context.Context, from *Node) (*Node, time.Time, error) {
	if from == nil {
		return nil, time.Time{}, errors.New("redistest: WaitSwitch from no node")
	}
	for {
		s.mu.Lock()
		changed := s.changed
		start := 0
		for i, e := range s.switches {
			if e.to == from.addr {
				start = i + 1
			}
		}
		for _, e := range s.switches[start:] {
			if e.from == from.addr {
				s.mu.Unlock()
				to := s.node(e.to)
				if to == nil {
					return nil, e.at, fmt.Errorf("redistest: +switch-master to %s, not a node of the group", e.to)
				}
				return to, e.at, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, time.Time{}, fmt.Errorf("redistest: no +switch-master from %s: %w", from.addr, ctx.Err())
		case <-changed:
		}
	}
}

// WaitSynced waits until every replica that runs (not killed, not paused)
// replicates the current master with its link up and has its replication
// offset: nothing written before the call is then only on the master.
func (s *Sentinel) WaitSynced(ctx context.Context) error {
	return poll(ctx, "replicas in sync", func() (bool, error) {
		m := s.Master()
		if m == nil {
			return false, errors.New("no master named")
		}
		if !m.alive() {
			return false, fmt.Errorf("master %s does not run", m.addr)
		}
		mi, err := m.info(ctx, "replication")
		if err != nil {
			return false, err
		}
		if mi["role"] != "master" {
			return false, fmt.Errorf("%s is %s, not yet master", m.addr, mi["role"])
		}
		mhost, mport := splitAddr(m.addr)
		for _, r := range s.nodes {
			if r == m || !r.alive() {
				continue
			}
			ri, err := r.info(ctx, "replication")
			if err != nil {
				return false, err
			}
			if ri["master_host"] != mhost || ri["master_port"] != mport || ri["master_link_status"] != "up" {
				return false, fmt.Errorf("%s not linked to %s: %s:%s %s", r.addr, m.addr, ri["master_host"], ri["master_port"], ri["master_link_status"])
			}
			if ri["slave_repl_offset"] != mi["master_repl_offset"] {
				return false, fmt.Errorf("%s at offset %s, master at %s", r.addr, ri["slave_repl_offset"], mi["master_repl_offset"])
			}
		}
		return true, nil
	})
}

// Close stops the sentinels and the nodes and removes the directory.
func (s *Sentinel) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.subs.Wait()
	for _, n := range s.sentinels {
		n.close()
	}
	for _, n := range s.nodes {
		n.close()
	}
	_ = os.RemoveAll(s.dir)
}

// fields turns a flat [k1 v1 k2 v2 …] reply (SENTINEL MASTER) into a map.
func fields(v any) map[string]string {
	out := map[string]string{}
	switch a := v.(type) {
	case []any:
		for i := 0; i+1 < len(a); i += 2 {
			out[fmt.Sprint(a[i])] = fmt.Sprint(a[i+1])
		}
	case map[any]any:
		for k, val := range a {
			out[fmt.Sprint(k)] = fmt.Sprint(val)
		}
	}
	return out
}

func splitAddr(addr string) (host, port string) {
	i := strings.LastIndex(addr, ":")
	return addr[:i], addr[i+1:]
}
