package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
)

// Store is the Redis waitroom.Store, safe for concurrent use. Any number of
// Stores, in any number of processes, may share one Redis: every change is
// one script that Redis runs atomically on its own clock.
type Store struct {
	client redis.UniversalClient
	prefix string
	owned  bool // Close closes the client
	closed atomic.Bool
	cache  cache
	pipe   pipeliner // Decide's pipelines (batch.go)
	wait   waiter    // WAIT after the writes tickets cannot rebuild (durable.go)
	events Events
	last   lastError // errkind.go
	// replicated: Sentinel or a Cluster, where a master that does not
	// answer is a failover starting (State).
	replicated bool
}

var _ waitroom.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithKeyPrefix sets the prefix of every key (default "wr"): room R lives
// in keys "{<prefix>:R}:…". Gateways that share a line must share it; rooms
// of different deployments on one Redis need different ones.
func WithKeyPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// New returns a store on client. The caller keeps the client: Close leaves
// it open, since it may serve other things. Use Open to have the store
// create and own its client.
func New(client redis.UniversalClient, opts ...Option) *Store {
	s := &Store{client: client, prefix: DefaultKeyPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Open connects as cfg says (see NewClient) and returns a store that owns
// the client: Close closes it. cfg.KeyPrefix and cfg's WAIT settings
// (durable.go) apply, then opts.
func Open(cfg Config, opts ...Option) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("store.redis: %w", err)
	}
	client, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	var p conf.Problems
	replicas, timeout := cfg.waitSettings(&p)
	s := New(client, append([]Option{WithKeyPrefix(cfg.KeyPrefix), WithWait(replicas, timeout)}, opts...)...)
	s.owned = true
	s.replicated = cfg.MasterName != "" || len(cfg.Addrs) > 1
	return s, nil
}

// Decide implements waitroom.Store in one round trip (decide.lua). Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Decide(ctx context.Context, room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) (waitroom.Decision, error) {
	var r [decideReply]int64
	if err := s.runDecide(ctx, s.decideKeys(room, lim, v, join), s.decideArgs(lim, v, join), r[:]); err != nil {
		return waitroom.Decision{}, fmt.Errorf("deciding room %q: %w", room, err)
	}
	d, err := decision(r)
	if err != nil {
		return waitroom.Decision{}, fmt.Errorf("deciding room %q: %w", room, unavailable(err))
	}
	return d, nil
}

// decideArgs is decide.lua's ARGV: the limits, then the visitor.
func (s *Store) decideArgs(lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) []any {
	base := s.cache.limitArgs(lim)
	args := make([]any, len(base), len(base)+decideArgs)
	copy(args, base)
	return append(args, v.ID, v.Ticket, int64(join), unixMicros(v.Until), flag(v.Placed), unixMicros(v.Issued),
		unixMicros(v.Seen), v.Network, v.Challenge, v.ChallengeUntil.UnixMilli(),
		int64(waitroom.ChallengeJoinFactor), int64(waitroom.BlockFactor), int64(waitroom.PendingPerNetwork), flag(v.Loose),
		v.Client, int64(waitroom.PendingPerClient), v.Known, v.KnownAdmitted,
		unixMicros(v.Entered), waitroom.LossWindow.Microseconds(), waitroom.SealSkew.Microseconds(), v.Block)
}

// decideKeys is decide.lua's KEYS: the room's, then the join quotas' first
// hash, the challenge's spent mark, their second hash and the pending
// allowances of the network, the client and the block, keys of their own in the room's hash slot. K_META stands in
// for any of them when the call cannot touch it, so the common calls (a
// placed ticket's poll) build no key: the quotas are for a call that may
// take a number or a place.
func (s *Store) decideKeys(room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) []string {
	keys := s.cache.keys(s.prefix, room)
	quota, spent, block, pending := keys[0], keys[0], keys[0], keys[0]
	tag := keys[0][:len(keys[0])-len(keyNames[0])]
	mayPlace := join != waitroom.JoinNone || (!v.Placed && (v.Ticket != 0 || v.Loose || v.Challenge != ""))
	if v.Network != "" && mayPlace && !lim.JoinLimit.IsUnlimited() {
		quota, block = tag+quotaHashes[0], tag+quotaHashes[1]
	}
	pclient, pblock := keys[0], keys[0]
	if v.Network != "" && join != waitroom.JoinNone && !lim.JoinLimit.IsUnlimited() {
		pending = tag + "p:" + v.Network
		if v.Client != "" && v.Client != v.Network {
			pclient = tag + "pc:" + v.Client
		}
		if v.Block != "" {
			pblock = tag + "pb:" + v.Block
		}
	}
	if v.Challenge != "" {
		spent = tag + "c:" + v.Challenge
	}
	return append(keys[:len(keys):len(keys)], quota, spent, block, pending, pclient, pblock)
}

// decideArgs is how many arguments decide.lua takes after the limits.
const decideArgs = 22

// quotaHashes are the names of the two hashes that keep a room's join
// quotas, generation by generation (common.lua, K_QA and K_QB).
var quotaHashes = [2]string{"qa", "qb"}

// unixMicros is t in microseconds since the epoch, 0 for the zero time.
func unixMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// decide.lua's reply says where the visitor stands with these numbers,
// what else it did with the flags, and why it turned a visitor away with
// the refusals, all spelled the same in lua/prelude.lua. They are the
// script's own, not the order of waitroom.State, so reordering that enum
// cannot misread a reply.
const (
	replyNone     = 0
	replyWaiting  = 1
	replyAdmitted = 2

	flagJoined      = 1
	flagRenewed     = 2
	flagPlaced      = 4
	flagGrace       = 8
	flagBackInLine  = 16
	flagBackInside  = 32
	flagRepaired    = 64
	refusedQuota    = 1
	refusedFull     = 2
	refusedSpent    = 3
	refusedShared   = 4
	refusedSessions = 5
)

var refusals = [...]waitroom.Refusal{"", waitroom.RefusedQuota, waitroom.RefusedFull, waitroom.RefusedChallenge,
	waitroom.RefusedShared, waitroom.RefusedSessionMax}

// decision reads decide.lua's reply.
// decideReply is the longest reply of decide.lua; shorter ones (all but
// a placed ticket waiting) leave the rest 0.
const decideReply = 13

func decision(r [decideReply]int64) (waitroom.Decision, error) {
	if r[6] < 0 || r[6] >= int64(len(refusals)) {
		return waitroom.Decision{}, fmt.Errorf("%s: reply[7]: want a refusal from 0 to %d, got %d", decideScript.name, len(refusals)-1, r[6])
	}
	flags := r[5]
	d := waitroom.Decision{Ticket: r[1], Joined: flags&flagJoined != 0, Placed: flags&flagPlaced != 0,
		Renewed: flags&flagRenewed != 0, GraceStarted: flags&flagGrace != 0, Repaired: flags&flagRepaired != 0,
		Refusal: refusals[r[6]], RetryAfter: time.Duration(r[7]) * time.Microsecond, Recent: r[8]}
	switch {
	case flags&flagBackInLine != 0:
		d.Restored = waitroom.RestoreWaiting
	case flags&flagBackInside != 0:
		d.Restored = waitroom.RestoreInside
	}
	switch r[0] {
	case replyNone:
		d.Joined, d.Placed = false, false
	case replyWaiting:
		d.State, d.Position, d.Line = waitroom.StateWaiting, r[2], r[3]
		d.Progress = waitroom.Progress{Epoch: r[9], Admitted: r[10], Departed: r[11], Pending: r[12]}
	case replyAdmitted:
		d.State, d.Until = waitroom.StateAdmitted, time.UnixMicro(r[4])
	default:
		return waitroom.Decision{}, fmt.Errorf("%s: reply[1]: want a state %d, %d or %d, got %d", decideScript.name, replyNone, replyWaiting, replyAdmitted, r[0])
	}
	return d, nil
}

// Admit implements waitroom.Store (admit.lua). A tick does a bounded amount
// of work, so a huge line is pruned over several ticks; see doc.go. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	base := s.cache.limitArgs(lim)
	args := make([]any, len(base), len(base)+3)
	copy(args, base)
	a, _, err := s.admit(ctx, room, append(args, "", 0, waitroom.KnownAdmittedFrom(ctx)))
	if err != nil {
		return waitroom.Admitted{}, fmt.Errorf("admitting room %q: %w", room, err)
	}
	return a, nil
}

// AdmitN implements waitroom.Store with admit.lua, told how many to
// admit and to leave the token bucket alone. One call of the script admits
// at most a thousand, so a larger n takes several, each atomic: the room's
// limits hold throughout, and ticks may run in between; after an error
// the result counts what the calls before it did. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) AdmitN(ctx context.Context, room string, lim waitroom.Limits, n int) (waitroom.Admitted, error) {
	var total waitroom.Admitted
	if err := s.ready(ctx); err != nil || n <= 0 {
		return total, err
	}
	base := s.cache.limitArgs(lim)
	args := make([]any, len(base), len(base)+3)
	copy(args, base)
	known := waitroom.KnownAdmittedFrom(ctx)
	for left := n; left > 0; {
		a, more, err := s.admit(ctx, room, append(args, left, 1, known))
		if err != nil {
			return total, fmt.Errorf("admitting %d of %d in room %q: %w", left, n, room, err)
		}
		total.Admitted += a.Admitted
		total.Abandoned += a.Abandoned
		total.Expired += a.Expired
		total.Repaired = total.Repaired || a.Repaired
		total.Highest = max(total.Highest, a.Highest)
		total.Readmitted += a.Readmitted
		left -= a.Admitted
		if !more {
			break
		}
	}
	return total, nil
}

// admit runs admit.lua with args and reports what it did and whether it
// stopped at its own bounds with more to do.
func (s *Store) admit(ctx context.Context, room string, args []any) (waitroom.Admitted, bool, error) {
	var r [7]int64
	if err := s.runDurable(ctx, admitScript, room, args, r[:]); err != nil {
		return waitroom.Admitted{}, false, err
	}
	return waitroom.Admitted{Admitted: int(r[0]), Abandoned: int(r[1]), Expired: int(r[2]), Repaired: r[4] == 1,
		Highest: r[5], Readmitted: int(r[6])}, r[3] == 1, nil
}

// Touch implements waitroom.Store with one script for the whole batch
// (touch.lua), sent in slices of touchBatch so no call holds Redis long.
// The marks go in ascending order of ticket, each visitor's once (a
// visitor who polled twice in the tick is written once), and touch.lua
// writes a thousand of them with one BITFIELD: a tick's marks cost Redis a
// few commands per slice, not one per poll.
// Errors: waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Touch(ctx context.Context, room string, lim waitroom.Limits, vs []waitroom.Visitor) error {
	vs = sortedMarks(vs)
	for len(vs) > 0 {
		n := min(len(vs), touchBatch)
		args := make([]any, 0, 2*n)
		for _, v := range vs[:n] {
			args = append(args, v.ID, v.Ticket)
		}
		var r [1]int64
		if err := s.run(ctx, touchScript, room, args, r[:]); err != nil {
			return fmt.Errorf("touching %d visitors in room %q: %w", n, room, err)
		}
		vs = vs[n:]
	}
	return nil
}

// touchBatch bounds one touch.lua call: about a millisecond of Redis.
const touchBatch = 2000

// sortedMarks is vs by ticket, then id, each pair once (a visitor polling
// twice in a tick, or a copy of its ticket, is one mark), in a new slice:
// the caller may hand vs back to its batch when the touch fails.
func sortedMarks(vs []waitroom.Visitor) []waitroom.Visitor {
	out := slices.Clone(vs)
	slices.SortFunc(out, func(a, b waitroom.Visitor) int {
		return cmp.Or(cmp.Compare(a.Ticket, b.Ticket), strings.Compare(a.ID, b.ID))
	})
	return slices.CompactFunc(out, func(a, b waitroom.Visitor) bool { return a.Ticket == b.Ticket && a.ID == b.ID })
}

// Release implements waitroom.Store (release.lua). Errors:
// waitroom.ErrNotFound, waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's
// error.
func (s *Store) Release(ctx context.Context, room, visitor string) error {
	_, err := s.ReleaseAt(ctx, room, visitor, time.Time{})
	return err
}

// ReleaseAt implements waitroom.Store (release.lua): began and at are
// Redis's TIME, in microseconds, the began of each session kept in the
// room's began hash (doc.go). Errors: waitroom.ErrNotFound,
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) ReleaseAt(ctx context.Context, room, visitor string, began time.Time) (time.Time, error) {
	var r [2]int64
	if err := s.runDurable(ctx, releaseScript, room, []any{visitor, unixMicros(began)}, r[:]); err != nil {
		return time.Time{}, fmt.Errorf("releasing %s in room %q: %w", visitor, room, err)
	}
	at := time.UnixMicro(r[1])
	if r[0] == 0 {
		return at, waitroom.ErrNotFound
	}
	return at, nil
}

// Stats implements waitroom.Store with one read-only script, so the numbers
// are one snapshot and balance. A room never used reads as empty. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Stats(ctx context.Context, room string) (waitroom.Stats, error) {
	var r [statsShort + waitroom.MaxHead + waitroom.MaxLeftTickets]int64
	if err := s.run(ctx, statsScript, room, nil, r[:]); err != nil {
		return waitroom.Stats{}, fmt.Errorf("reading stats of room %q: %w", room, err)
	}
	st := waitroom.Stats{
		Waiting: r[0], Active: r[1], AdmittedLastMinute: r[2], MeasuredOver: time.Duration(r[3]) * time.Microsecond,
		Joined: r[4], AdmittedTotal: r[5], Released: r[6], Expired: r[7], Abandoned: r[8],
		Issued: r[9], Limited: r[10], Full: r[11], Left: r[12], Epoch: r[13], Repairs: r[14],
		Counter: r[15], HighestAdmitted: r[16], Low: r[17], Floor: r[18],
	}
	h := int(min(max(r[statsShort-1], 0), waitroom.MaxHead))
	copy(st.Head[:], r[statsShort:statsShort+h])
	copy(st.LeftTickets[:], r[statsShort+h:])
	return st, nil
}

// Ping implements waitroom.Store. Errors: waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("pinging redis: %w", s.failure(ctx, err))
	}
	return nil
}

// Close makes later calls return waitroom.ErrClosed, and closes the client
// if the store owns it (Open). Closing twice is harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.closePipe()
	if !s.owned {
		return nil
	}
	return s.client.Close()
}

// run runs a script on the room's keys and reads its integer reply into dst.
func (s *Store) run(ctx context.Context, sc script, room string, args []any, dst []int64) error {
	return s.runKeys(ctx, sc, s.cache.keys(s.prefix, room), args, dst)
}

// runKeys is run with the keys given.
func (s *Store) runKeys(ctx context.Context, sc script, keys []string, args []any, dst []int64) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	reply, err := sc.Run(ctx, s.client, keys, args...).Result()
	if err != nil {
		return fmt.Errorf("running %s: %w", sc.name, s.failure(ctx, err))
	}
	if err := replyInts(sc.name, reply, dst); err != nil {
		return unavailable(err)
	}
	return nil
}

func (s *Store) ready(ctx context.Context) error {
	if s.closed.Load() {
		return waitroom.ErrClosed
	}
	return ctx.Err()
}

// failure sorts an error from the client: the store or its client closed,
// the caller gave up, or Redis could not serve (down, slow, failing over,
// out of memory, or a script error), which the gate treats alike.
func (s *Store) failure(ctx context.Context, err error) error {
	switch {
	case s.closed.Load() || errors.Is(err, redis.ErrClosed):
		return waitroom.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	s.noteError(err)
	return unavailable(err)
}

// unavailableError is an error that errors.Is takes for
// waitroom.ErrUnavailable, without saying "store unavailable" in the
// message on top of what went wrong.
type unavailableError struct{ err error }

func unavailable(err error) error { return &unavailableError{err} }

func (e *unavailableError) Error() string        { return e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == waitroom.ErrUnavailable }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
