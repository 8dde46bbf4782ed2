package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// Redis replicates asynchronously: a write the master acknowledged may not
// have reached any replica when the master dies, and the promoted replica
// lacks it. Most of what a room holds can be rebuilt from the tickets
// visitors carry (their numbers, their places), but not all of it: an
// admission batch (who is inside), a release (a slot freed), an override
// and a room put or deleted through the API. After those writes the store
// sends WAIT numreplicas timeout in the same pipeline as the script, so on
// the same connection (WAIT waits for that connection's last write): the
// call returns once that many replicas hold the write, or at the timeout.
//
// WAIT makes a loss less likely, not impossible (Redis's own words: it
// does not make Redis strongly consistent); min-replicas-to-write is the
// guard against a master cut off from its replicas. When WAIT times out
// with fewer acknowledgements the write stands (it is on the master and
// the visitor's answer follows it); the shortfall is reported to
// Events.WaitShort, which counts it and logs the first of a run.

// Defaults of store.redis.wait_replicas and wait_timeout.
const (
	DefaultWaitReplicas = 1
	DefaultWaitTimeout  = "50ms"
)

// roleEvery is how often a node's connected replicas are read again
// (ROLE, riding in a durable write's pipeline): WAIT asks for at most
// that many, so a master without replicas never waits out the timeout,
// and a replica that went away costs at most this long of timeouts.
const roleEvery = 5 * time.Second

// Events receives what the store notices beyond a call's own result, for
// metrics and logs. A nil func is skipped. Each is called on the calling
// goroutine and must not block.
type Events struct {
	// Error is told the kind of every failure of a call to Redis.
	Error func(ErrorKind)
	// WaitShort is told that WAIT timed out with got of wanted replicas
	// acknowledging a write; the write stands.
	WaitShort func(wanted, got int)
}

// WithEvents sets the store's Events.
func WithEvents(e Events) Option {
	return func(s *Store) { s.events = e }
}

// WithWait makes the writes tickets cannot rebuild wait for up to
// replicas replicas, at most timeout each (store.redis.wait_replicas,
// wait_timeout). 0 replicas: no WAIT (New's default).
func WithWait(replicas int, timeout time.Duration) Option {
	return func(s *Store) { s.wait = waiter{replicas: replicas, timeout: timeout} }
}

// waiter is the store's WAIT settings and what it learned of each node.
type waiter struct {
	replicas int
	timeout  time.Duration
	nodes    sync.Map // node address -> *nodeReplicas
	// short counts WAITs that timed out with fewer acknowledgements.
	short atomic.Int64
}

// nodeReplicas is how many replicas a master had connected when last
// asked, and when (unix nanoseconds; 0: never, or asked to check again).
type nodeReplicas struct {
	connected atomic.Int64
	checked   atomic.Int64
	asking    atomic.Bool // one call at a time adds ROLE to its pipeline
}

// WaitShortfalls is how many WAITs timed out with fewer replicas than
// wanted since the store opened.
func (s *Store) WaitShortfalls() int64 { return s.wait.short.Load() }

// waitSettings checks wait_replicas and wait_timeout; WAIT's timeout must
// leave the reply time to arrive within read_timeout, or go-redis would
// give up on a call whose script ran.
func (c Config) waitSettings(p *conf.Problems) (int, time.Duration) {
	if c.WaitReplicas < 0 {
		p.Add("wait_replicas", "must be >= 0 (0: no WAIT), got %d", c.WaitReplicas)
	}
	if c.WaitReplicas <= 0 {
		return 0, 0 // wait_timeout unused
	}
	d := p.Duration("wait_timeout", c.WaitTimeout, time.Millisecond)
	read, err := conf.ParseDuration(c.ReadTimeout)
	if err == nil && read > 0 && d > 0 && 2*d > read {
		p.Add("wait_timeout", "must be at most half of read_timeout (%s), got %q", conf.Short(read), c.WaitTimeout)
	}
	return c.WaitReplicas, d
}

// runDurable is run for a write tickets cannot rebuild: the script, then
// WAIT on the same connection (see the top of this file).
func (s *Store) runDurable(ctx context.Context, sc script, room string, args []any, dst []int64) error {
	return s.runKeysDurable(ctx, sc, s.cache.keys(s.prefix, room), args, dst)
}

// runKeysDurable is runDurable with the keys given.
func (s *Store) runKeysDurable(ctx context.Context, sc script, keys []string, args []any, dst []int64) error {
	if s.wait.replicas <= 0 {
		return s.runKeys(ctx, sc, keys, args, dst)
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	reply, err := s.evalWait(ctx, sc, keys, args)
	if err != nil {
		return fmt.Errorf("running %s: %w", sc.name, s.failure(ctx, err))
	}
	if err := replyInts(sc.name, reply, dst); err != nil {
		return unavailable(err)
	}
	return nil
}

// evalWait runs sc and WAIT in one pipeline on the connection of the node
// that owns keys[0], and returns the script's reply.
func (s *Store) evalWait(ctx context.Context, sc script, keys []string, args []any) (any, error) {
	node, addr, err := s.nodeFor(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	nr := s.wait.node(addr)
	wanted := min(s.wait.replicas, int(nr.connected.Load()))
	ask := nr.due() && nr.asking.CompareAndSwap(false, true)
	if ask {
		defer nr.asking.Store(false)
	}
	if wanted == 0 && !ask {
		return sc.Run(ctx, s.client, keys, args...).Result()
	}
	ev, wait, role, err := pipeline(ctx, node, sc, keys, args, wanted, s.wait.timeout, ask, false)
	if err == nil && redis.HasErrorPrefix(ev.Err(), "NOSCRIPT") {
		// Redis does not know the script yet (first use, a restart, a
		// failover to a replica that never ran it): it did not run, so
		// sending its source is safe.
		ev, wait, role, err = pipeline(ctx, node, sc, keys, args, wanted, s.wait.timeout, ask, true)
	}
	if err != nil {
		return nil, err
	}
	if _, moved := redis.IsMovedError(ev.Err()); moved || isAsk(ev.Err()) {
		// The slot moved since the client's map was made: the script did
		// not run there. The cluster client follows the redirection and
		// refreshes its map; this one call goes without WAIT.
		return sc.Run(ctx, s.client, keys, args...).Result()
	}
	reply, err := ev.Result()
	if err != nil {
		return nil, err
	}
	if role != nil {
		nr.learn(role)
	}
	if wait != nil {
		got, werr := wait.Int64()
		if werr == nil && int(got) < wanted {
			s.wait.short.Add(1)
			nr.checked.Store(0) // a replica may have gone: ask again
			if f := s.events.WaitShort; f != nil {
				f(wanted, int(got))
			}
		}
	}
	return reply, nil
}

// pipeline sends the script (EVALSHA, or EVAL when source is set), WAIT
// when wanted > 0 and ROLE when ask, in one round trip on one connection.
// err is the round trip's failure; the script's own is in ev.
func pipeline(ctx context.Context, node redis.Cmdable, sc script, keys []string, args []any, wanted int, timeout time.Duration, ask, source bool) (ev, wait, role *redis.Cmd, err error) {
	pipe := node.Pipeline()
	if source {
		ev = sc.Eval(ctx, pipe, keys, args...)
	} else {
		ev = sc.EvalSha(ctx, pipe, keys, args...)
	}
	if wanted > 0 {
		wait = pipe.Do(ctx, "WAIT", wanted, timeout.Milliseconds())
	}
	if ask {
		role = pipe.Do(ctx, "ROLE")
	}
	_, _ = pipe.Exec(ctx)
	// A failed round trip fails every command alike; a command's own
	// error (a Redis error reply) leaves the others their replies.
	if e := ev.Err(); e != nil && !isRedisReply(e) {
		return ev, wait, role, e
	}
	return ev, wait, role, nil
}

// nodeFor is the client of the node that serves key, and its address: on
// a Cluster the master of key's slot, else the store's client itself.
func (s *Store) nodeFor(ctx context.Context, key string) (redis.Cmdable, string, error) {
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok {
		return s.client, "", nil
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return node, node.Options().Addr, nil
}

// node is what the waiter knows of the node at addr.
func (w *waiter) node(addr string) *nodeReplicas {
	if v, ok := w.nodes.Load(addr); ok {
		return v.(*nodeReplicas)
	}
	v, _ := w.nodes.LoadOrStore(addr, &nodeReplicas{})
	return v.(*nodeReplicas)
}

// due reports whether the node's replicas should be read again.
func (n *nodeReplicas) due() bool {
	c := n.checked.Load()
	return c == 0 || time.Since(time.Unix(0, c)) >= roleEvery
}

// learn reads ROLE's reply: a master's is ["master", offset, [replica...]].
// Anything else (a replica's answer, an error) leaves 0 replicas to wait
// for until the next look.
func (n *nodeReplicas) learn(role *redis.Cmd) {
	n.checked.Store(time.Now().UnixNano())
	r, err := role.Slice()
	if err != nil || len(r) < 3 || r[0] != "master" {
		n.connected.Store(0)
		return
	}
	replicas, _ := r[2].([]any)
	n.connected.Store(int64(len(replicas)))
}

// isRedisReply reports whether err is an error reply of Redis, as opposed
// to a failure to reach it.
func isRedisReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}

func isAsk(err error) bool {
	_, ask := redis.IsAskError(err)
	return ask
}
