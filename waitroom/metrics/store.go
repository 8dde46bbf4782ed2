package metrics

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// Store returns s with every call but Close timed into
// waitroom_store_duration_seconds (see StoreOp for the op names and results).
// Results and errors pass through untouched, so the wrapper changes nothing
// a caller can see but the time taken to read the clock twice. With m nil it
// returns s itself.
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

// done records op as started at start.
func (t *timedStore) done(op int, start time.Time, err error) {
	t.m.storeOp(op, time.Since(start), err)
}

func (t *timedStore) Decide(ctx context.Context, room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) (waitroom.Decision, error) {
	start := time.Now()
	d, err := t.s.Decide(ctx, room, lim, v, join)
	t.done(opDecide, start, err)
	return d, err
}

func (t *timedStore) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	start := time.Now()
	a, err := t.s.Admit(ctx, room, lim)
	t.done(opAdmit, start, err)
	return a, err
}

func (t *timedStore) AdmitN(ctx context.Context, room string, lim waitroom.Limits, n int) (waitroom.Admitted, error) {
	start := time.Now()
	a, err := t.s.AdmitN(ctx, room, lim, n)
	t.done(opAdmitN, start, err)
	return a, err
}

func (t *timedStore) Shuffle(ctx context.Context, room, key, seed string) (string, int, error) {
	start := time.Now()
	used, n, err := t.s.Shuffle(ctx, room, key, seed)
	t.done(opShuffle, start, err)
	return used, n, err
}

func (t *timedStore) Touch(ctx context.Context, room string, lim waitroom.Limits, vs []waitroom.Visitor) error {
	start := time.Now()
	err := t.s.Touch(ctx, room, lim, vs)
	t.done(opTouch, start, err)
	return err
}

func (t *timedStore) Release(ctx context.Context, room, visitor string) error {
	start := time.Now()
	err := t.s.Release(ctx, room, visitor)
	t.done(opRelease, start, err)
	return err
}

func (t *timedStore) Socket(ctx context.Context, room string, lim waitroom.Limits, visitor, socket string, op waitroom.SocketOp, every time.Duration) error {
	start := time.Now()
	err := t.s.Socket(ctx, room, lim, visitor, socket, op, every)
	t.done(opSocket, start, err)
	return err
}

func (t *timedStore) Allow(ctx context.Context, room, kind, network string, limit waitroom.Rate) (time.Duration, error) {
	start := time.Now()
	wait, err := t.s.Allow(ctx, room, kind, network, limit)
	t.done(opAllow, start, err)
	return wait, err
}

func (t *timedStore) UseRoom(ctx context.Context, template, room string, max int, idle time.Duration) error {
	start := time.Now()
	err := t.s.UseRoom(ctx, template, room, max, idle)
	t.done(opUseRoom, start, err)
	return err
}

func (t *timedStore) DefinitionsVersion(ctx context.Context) (int64, error) {
	start := time.Now()
	v, err := t.s.DefinitionsVersion(ctx)
	t.done(opDefinitionsVersion, start, err)
	return v, err
}

func (t *timedStore) LoadDefinitions(ctx context.Context) (waitroom.Definitions, error) {
	start := time.Now()
	d, err := t.s.LoadDefinitions(ctx)
	t.done(opLoadDefinitions, start, err)
	return d, err
}

func (t *timedStore) PutDefinition(ctx context.Context, name string, body []byte, mode waitroom.PutMode) (int64, error) {
	start := time.Now()
	v, err := t.s.PutDefinition(ctx, name, body, mode)
	t.done(opPutDefinition, start, err)
	return v, err
}

func (t *timedStore) DeleteDefinition(ctx context.Context, name string) (int64, error) {
	start := time.Now()
	v, err := t.s.DeleteDefinition(ctx, name)
	t.done(opDeleteDefinition, start, err)
	return v, err
}

func (t *timedStore) Stats(ctx context.Context, room string) (waitroom.Stats, error) {
	start := time.Now()
	st, err := t.s.Stats(ctx, room)
	t.done(opStats, start, err)
	return st, err
}

func (t *timedStore) Ping(ctx context.Context) error {
	start := time.Now()
	err := t.s.Ping(ctx)
	t.done(opPing, start, err)
	return err
}

func (t *timedStore) SetOverride(ctx context.Context, room string, o waitroom.Override) error {
	start := time.Now()
	err := t.s.SetOverride(ctx, room, o)
	t.done(opSetOverride, start, err)
	return err
}

func (t *timedStore) ClearOverride(ctx context.Context, room string) error {
	start := time.Now()
	err := t.s.ClearOverride(ctx, room)
	t.done(opClearOverride, start, err)
	return err
}

func (t *timedStore) Override(ctx context.Context, room string) (waitroom.Override, error) {
	start := time.Now()
	o, err := t.s.Override(ctx, room)
	t.done(opOverride, start, err)
	return o, err
}

// Close is not timed: it happens once, at shutdown, when nobody scrapes.
func (t *timedStore) Close() error { return t.s.Close() }
