package redisstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
)

// Decide calls that wait for Redis at the same moment go in one pipeline.
// In a spike every join, and every request the session cache cannot
// answer, runs decide.lua; one round trip each costs both sides a write
// and a read system call apiece, which is most of what a short script
// costs Redis. A few workers each take the first waiting call, whatever
// else is waiting then (up to maxPipeline), and send them together: alone,
// a call goes at once as before; under load, the calls of a round trip's
// time share it. Each call is still its own script, atomic on its own.

const (
	pipeWorkers = 4
	maxPipeline = 128
)

// decideCall is one Decide waiting for its reply.
type decideCall struct {
	ctx   context.Context
	keys  []string
	args  []any
	reply any
	err   error
	done  chan struct{}
}

// pipeliner owns the workers; it starts with the first call and stops at
// Close.
type pipeliner struct {
	once  sync.Once
	queue chan *decideCall
	stop  chan struct{}
	wg    sync.WaitGroup
	// calls and sent count Decide calls and the round trips they took.
	calls, sent atomic.Int64
}

// runDecide runs decide.lua for one call through the pipeliner and
// returns its reply as runKeys would.
func (s *Store) runDecide(ctx context.Context, keys []string, args []any, dst []int64) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	p := &s.pipe
	p.once.Do(func() {
		p.queue, p.stop = make(chan *decideCall, 4*maxPipeline), make(chan struct{})
		for range pipeWorkers {
			p.wg.Add(1)
			go s.pipeWorker()
		}
	})
	c := &decideCall{ctx: ctx, keys: keys, args: args, done: make(chan struct{})}
	select {
	case p.queue <- c:
	case <-p.stop:
		return waitroom.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err() // the script may still run, as with a call cut off mid-flight
	case <-p.stop:
		// Closed while queued: no worker may be left to take it.
		return waitroom.ErrClosed
	}
	if c.err != nil {
		return fmt.Errorf("running %s: %w", decideScript.name, s.failure(ctx, c.err))
	}
	if err := replyInts(decideScript.name, c.reply, dst); err != nil {
		return unavailable(err)
	}
	return nil
}

// pipeWorker sends what is waiting, until Close.
func (s *Store) pipeWorker() {
	p := &s.pipe
	defer p.wg.Done()
	batch := make([]*decideCall, 0, maxPipeline)
	for {
		select {
		case c := <-p.queue:
			batch = append(batch[:0], c)
		case <-p.stop:
			for {
				select {
				case c := <-p.queue:
					c.err = waitroom.ErrClosed
					close(c.done)
				default:
					return
				}
			}
		}
	more:
		for len(batch) < maxPipeline {
			select {
			case c := <-p.queue:
				batch = append(batch, c)
			default:
				break more
			}
		}
		s.sendBatch(batch)
	}
}

// sendBatch runs the calls' scripts in one pipeline. A call whose caller
// gave up is skipped; a script Redis does not know yet (a restart, SCRIPT
// FLUSH) is run again the usual way, which loads it.
func (s *Store) sendBatch(batch []*decideCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if c.ctx.Err() != nil {
			c.err = c.ctx.Err()
			close(c.done)
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	s.pipe.calls.Add(int64(len(live)))
	s.pipe.sent.Add(1)
	if len(live) == 1 {
		c := live[0]
		c.reply, c.err = decideScript.Run(c.ctx, s.client, c.keys, c.args...).Result()
		close(c.done)
		return
	}
	// The pipeline's context is none of the callers': one giving up must
	// not fail the others. The client's own timeouts bound it.
	ctx := context.WithoutCancel(live[0].ctx)
	cmds := make([]*redis.Cmd, len(live))
	_, _ = s.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, c := range live {
			cmds[i] = decideScript.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		return nil
	})
	for i, c := range live {
		c.reply, c.err = cmds[i].Result()
		if c.err != nil && redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			c.reply, c.err = decideScript.Run(c.ctx, s.client, c.keys, c.args...).Result()
		}
		close(c.done)
	}
}

// closePipe stops the workers; calls after it get ErrClosed.
func (s *Store) closePipe() {
	p := &s.pipe
	p.once.Do(func() { p.stop = make(chan struct{}) }) // never started: nothing to stop but the door
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.wg.Wait()
}
