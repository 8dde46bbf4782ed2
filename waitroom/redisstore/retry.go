package redisstore

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// onceHook makes the client send a script at most once per call.
//
// go-redis resends a command after an error it deems transient
// (shouldRetry in its error.go): with MaxRetries 1 a single command is
// sent again after a read or write timeout, a pipeline after any timeout
// (it retries with retryTimeout true), and a Cluster client tries the same
// node again and then another one (ClusterClient.process) after a
// timeout, EOF or reset. For a read, or a SET, that is harmless. For our
// scripts it is not: the first EVALSHA may well have reached Redis and
// run (the server was only slow, or paused, or the reply was lost), so
// the resend runs it a second time: a join hands out a second ticket, a
// placement answers "already placed", an admission batch admits twice.
//
// So every script command (EVALSHA, EVAL, FCALL and their _RO forms) goes
// down marked NoRetry, which go-redis's retry loops honour (processWithRetry,
// the pipeline loop, ClusterClient.process). The hook then resends it once
// itself, only after an error that proves the script did not run:
//   - no connection was had: a dial error (the pool's dial of a fresh
//     connection, the Sentinel client asking for the master) or the pool
//     timing out: nothing was written;
//   - Redis answered with an error that it gives before running anything,
//     READONLY (a demoted master or a replica, mid-failover), LOADING,
//     MASTERDOWN, CLUSTERDOWN, TRYAGAIN, NOREPLICAS (min-replicas-to-write).
//
// A pooled connection that died while idle (Redis restarted) is no case
// for a resend: the pool checks each connection when it hands it out
// (isHealthyConn's connCheck) and dials a new one instead. MOVED and ASK
// stay with the Cluster client (the script did not run). NOSCRIPT stays
// with redis.Script.Run and batch.go, which send EVAL after it: a new
// command, not a resend.
//
// What is left, a timeout, EOF or reset after the script was written, is
// an error for the caller: the store cannot know whether the script ran,
// and the gate's on_error handles it; the script's next call sees what
// the first did, if it ran.
type onceHook struct{}

// resendPause is the wait before the one resend, so that a dial that was
// refused, or a replica that refused a write, has a moment to change.
const resendPause = 50 * time.Millisecond

func (onceHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (onceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c, ok := cmd.(*redis.Cmd)
		if !ok || !isScript(cmd.Name()) {
			return next(ctx, cmd)
		}
		once := onceCmd{c}
		err := next(ctx, once)
		if err == nil || !notRun(err) || ctx.Err() != nil {
			return err
		}
		if sleepCtx(ctx, resendPause) != nil {
			return err
		}
		c.SetErr(nil)
		return next(ctx, once)
	}
}

func (onceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		marked := false
		wrapped := make([]redis.Cmder, len(cmds))
		for i, cmd := range cmds {
			wrapped[i] = cmd
			if c, ok := cmd.(*redis.Cmd); ok && isScript(cmd.Name()) {
				wrapped[i], marked = onceCmd{c}, true
			}
		}
		if !marked {
			return next(ctx, cmds)
		}
		err := next(ctx, wrapped)
		if err == nil || !notRun(err) || !allNotRun(cmds) || ctx.Err() != nil {
			return err
		}
		if sleepCtx(ctx, resendPause) != nil {
			return err
		}
		for _, cmd := range cmds {
			cmd.SetErr(nil)
		}
		return next(ctx, wrapped)
	}
}

// onceCmd is a command go-redis must not resend (see onceHook): the
// embedded *redis.Cmd reads the reply, so the caller's command gets it.
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }

func isScript(name string) bool {
	switch strings.ToLower(name) {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// notRun: err proves the command did not run (see onceHook).
func notRun(err error) bool {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return true
	case errors.Is(err, redis.ErrPoolTimeout):
		return true
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	return redis.IsReadOnlyError(err) || redis.IsLoadingError(err) || redis.IsMasterDownError(err) ||
		redis.IsClusterDownError(err) || redis.IsTryAgainError(err) || redis.IsNoReplicasError(err)
}

// allNotRun: every command of a pipeline failed so that it did not run;
// only then may the pipeline go again as a whole.
func allNotRun(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if err := c.Err(); err == nil || !notRun(err) {
			return false
		}
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
