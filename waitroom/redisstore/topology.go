package redisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// topologyHook keeps a Cluster client's slot map fresh through a failover.
//
// go-redis's ClusterClient routes each command by the slot map it loaded
// last, and reloads that map only on a MOVED or ASK reply, a READONLY
// reply, or when it is older than ClusterStateReloadInterval (60 s by
// default, and UniversalOptions cannot change it) at the next call
// (clusterStateHolder.Get). A master that dies answers none of those: a
// dial is refused or a read times out. ClusterClient.process then tries
// the same master again, marks it failing and asks the slot map again,
// which names the same dead master, so every call for its slots fails
// until the 60 s are up, although its replica took the slots over within
// cluster-node-timeout plus an election (issue 22: "the gateways kept
// dialling the dead master and admitted nobody for the remaining 50 s").
//
// So any call that fails for want of the node (a dial error, a timeout, a
// reset or closed connection, CLUSTERDOWN) asks the client to reload the
// map (ClusterClient.ReloadState, which loads CLUSTER SLOTS from a node
// that answers, in the background). At most one reload is asked for per
// reloadEvery: a map read while the cluster has not yet noticed the death
// still names the dead master, so reloads go on while calls fail, and a
// gateway with thousands of failing calls a second asks for a few.
type topologyHook struct {
	client *redis.ClusterClient
	last   atomic.Int64 // unix nanoseconds of the last reload asked for
	// reloads counts the reloads asked for, for tests.
	reloads atomic.Int64
}

// reloadEvery bounds how often failing calls reload the slot map: a
// tenth of cluster-node-timeout's usual 1 to 15 s, so a promotion is seen
// within this of its happening.
const reloadEvery = 250 * time.Millisecond

func newTopologyHook(c *redis.ClusterClient) *topologyHook { return &topologyHook{client: c} }

func (h *topologyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *topologyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && nodeLost(err) {
			h.reload()
		}
		return err
	}
}

func (h *topologyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err != nil {
			for _, c := range cmds {
				if e := c.Err(); e != nil && nodeLost(e) {
					h.reload()
					break
				}
			}
		}
		return err
	}
}

// reload asks for a reload of the slot map unless one was asked for
// within reloadEvery.
func (h *topologyHook) reload() {
	now := time.Now().UnixNano()
	last := h.last.Load()
	if now-last < int64(reloadEvery) || !h.last.CompareAndSwap(last, now) {
		return
	}
	h.reloads.Add(1)
	// ReloadState reloads in the background (clusterStateHolder.LazyReload);
	// its context is unused there.
	h.client.ReloadState(context.Background())
}

// nodeLost: err says the node serving the call could not be reached or
// stopped answering, rather than that Redis answered with an error.
func nodeLost(err error) bool {
	if redis.IsClusterDownError(err) || redis.IsTryAgainError(err) {
		return true
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return false // an answer: the node is there
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, context.DeadlineExceeded)
}
