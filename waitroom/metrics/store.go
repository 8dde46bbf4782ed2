package metrics

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// The op of each store call: an index into ops, its label value. A new
// store method adds its constant and name here, beside its wrapper.
const (
	opDecide = iota
	opAdmit
	opAdmitN
	opRelease
	opStats
	opPing
	opSetOverride
	opClearOverride
	opOverride
	opShuffle
	opSocket
	opAllow
	opUseRoom
	opDefinitionsVersion
	opLoadDefinitions
	opPutDefinition
	opDeleteDefinition
	opTouch
	opReserve
	opPlace
)

var ops = [...]string{
	"decide", "admit", "admit_n", "release", "stats", "ping",
	"set_override", "clear_override", "override", "shuffle", "socket", "allow",
	"use_room", "definitions_version", "load_definitions", "put_definition", "delete_definition", "touch",
	"reserve", "place",
}

// Store returns s with every call but Close timed into
// waitroom_store_duration_seconds (see StoreOp for the op names and results).
// Results and errors pass through untouched, so the wrapper changes nothing
// a caller can see but the time taken to read the clock twice. With m nil it
// returns s itself. The wrapper offers Unwrap, so waitroom.As still finds
// what s offers beyond waitroom.Store.
func Store(s waitroom.Store, m *Metrics) waitroom.Store {
	if m == nil {
		return s
	}
	return &timedStore{s: s, m: m}
}

// timedStore is the wrapper Store returns.
type timedStore struct {
	s waitroom.Store
	m *Metrics
}

var _ waitroom.Store = (*timedStore)(nil)

// Unwrap returns the wrapped store, for a caller that needs what the
// concrete store offers beyond waitroom.Store.
func (t *timedStore) Unwrap() waitroom.Store { return t.s }

// timed runs call and records its time and error under op: the one body
// every wrapper method shares.
func timed[T any](t *timedStore, op int, call func() (T, error)) (T, error) {
	start := time.Now()
	v, err := call()
	t.m.storeOp(op, time.Since(start), err)
	return v, err
}

// timedErr is timed for a call that returns only an error.
func timedErr(t *timedStore, op int, call func() error) error {
	_, err := timed(t, op, func() (struct{}, error) { return struct{}{}, call() })
	return err
}

func (t *timedStore) Decide(ctx context.Context, room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) (waitroom.Decision, error) {
	return timed(t, opDecide, func() (waitroom.Decision, error) { return t.s.Decide(ctx, room, lim, v, join) })
}

func (t *timedStore) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	return timed(t, opAdmit, func() (waitroom.Admitted, error) { return t.s.Admit(ctx, room, lim) })
}

func (t *timedStore) AdmitN(ctx context.Context, room string, lim waitroom.Limits, n int) (waitroom.Admitted, error) {
	return timed(t, opAdmitN, func() (waitroom.Admitted, error) { return t.s.AdmitN(ctx, room, lim, n) })
}

// Shuffle returns three values; timed carries the used seed and the count
// rides in a variable of the closure.
func (t *timedStore) Shuffle(ctx context.Context, room, key, seed string) (string, int, error) {
	var n int
	used, err := timed(t, opShuffle, func() (used string, err error) {
		used, n, err = t.s.Shuffle(ctx, room, key, seed)
		return used, err
	})
	return used, n, err
}

func (t *timedStore) Touch(ctx context.Context, room string, lim waitroom.Limits, vs []waitroom.Visitor) error {
	return timedErr(t, opTouch, func() error { return t.s.Touch(ctx, room, lim, vs) })
}

// Reserve and Place time the batched joins (waitroom.Joiner) of a store
// that has them. Of one that has not, Reserve gives no block and Place
// asks Decide for everyone, which is what a gate does without a Joiner.
var _ waitroom.Joiner = (*timedStore)(nil)

func (t *timedStore) Reserve(ctx context.Context, room string, lim waitroom.Limits, n, known int64) (int64, error) {
	j, ok := waitroom.As[waitroom.Joiner](t.s)
	if !ok {
		return 0, nil
	}
	return timed(t, opReserve, func() (int64, error) { return j.Reserve(ctx, room, lim, n, known) })
}

func (t *timedStore) Place(ctx context.Context, room string, lim waitroom.Limits, ps []waitroom.Placement, release []waitroom.Span) ([]waitroom.Placed, error) {
	j, ok := waitroom.As[waitroom.Joiner](t.s)
	if !ok {
		out := make([]waitroom.Placed, len(ps))
		for i, p := range ps {
			out[i] = waitroom.Placed{ID: p.Visitor.ID, Ask: true}
		}
		return out, nil
	}
	return timed(t, opPlace, func() ([]waitroom.Placed, error) { return j.Place(ctx, room, lim, ps, release) })
}

func (t *timedStore) Release(ctx context.Context, room, visitor string) error {
	return timedErr(t, opRelease, func() error { return t.s.Release(ctx, room, visitor) })
}

func (t *timedStore) ReleaseAt(ctx context.Context, room, visitor string, began time.Time) (time.Time, error) {
	return timed(t, opRelease, func() (time.Time, error) { return t.s.ReleaseAt(ctx, room, visitor, began) })
}

func (t *timedStore) Stats(ctx context.Context, room string) (waitroom.Stats, error) {
	return timed(t, opStats, func() (waitroom.Stats, error) { return t.s.Stats(ctx, room) })
}

func (t *timedStore) SetOverride(ctx context.Context, room string, o waitroom.Override) error {
	return timedErr(t, opSetOverride, func() error { return t.s.SetOverride(ctx, room, o) })
}

func (t *timedStore) ClearOverride(ctx context.Context, room string) error {
	return timedErr(t, opClearOverride, func() error { return t.s.ClearOverride(ctx, room) })
}

func (t *timedStore) Override(ctx context.Context, room string) (waitroom.Override, error) {
	return timed(t, opOverride, func() (waitroom.Override, error) { return t.s.Override(ctx, room) })
}

func (t *timedStore) Socket(ctx context.Context, room string, lim waitroom.Limits, visitor, socket string, op waitroom.SocketOp, every time.Duration) error {
	return timedErr(t, opSocket, func() error { return t.s.Socket(ctx, room, lim, visitor, socket, op, every) })
}

func (t *timedStore) Allow(ctx context.Context, room, kind, network string, limit waitroom.Rate) (time.Duration, error) {
	return timed(t, opAllow, func() (time.Duration, error) { return t.s.Allow(ctx, room, kind, network, limit) })
}

func (t *timedStore) UseRoom(ctx context.Context, template, room string, max int, idle time.Duration) error {
	return timedErr(t, opUseRoom, func() error { return t.s.UseRoom(ctx, template, room, max, idle) })
}

func (t *timedStore) DefinitionsVersion(ctx context.Context) (int64, error) {
	return timed(t, opDefinitionsVersion, func() (int64, error) { return t.s.DefinitionsVersion(ctx) })
}

func (t *timedStore) LoadDefinitions(ctx context.Context) (waitroom.Definitions, error) {
	return timed(t, opLoadDefinitions, func() (waitroom.Definitions, error) { return t.s.LoadDefinitions(ctx) })
}

func (t *timedStore) PutDefinition(ctx context.Context, name string, body []byte, mode waitroom.PutMode) (int64, error) {
	return timed(t, opPutDefinition, func() (int64, error) { return t.s.PutDefinition(ctx, name, body, mode) })
}

func (t *timedStore) DeleteDefinition(ctx context.Context, name string, only []byte) (int64, error) {
	return timed(t, opDeleteDefinition, func() (int64, error) { return t.s.DeleteDefinition(ctx, name, only) })
}

func (t *timedStore) Ping(ctx context.Context) error {
	return timedErr(t, opPing, func() error { return t.s.Ping(ctx) })
}

// Close is not timed: it happens once, at shutdown, when nobody scrapes.
func (t *timedStore) Close() error { return t.s.Close() }
