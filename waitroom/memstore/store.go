package memstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// Store is the embedded waitroom.Store, safe for concurrent use. The zero
// value is not usable; call New.
type Store struct {
	clock  func() time.Time
	closed atomic.Bool

	mu    sync.RWMutex
	rooms map[string]*room // nil once closed

	// templates is UseRoom's registry; defs the definitions. Each has a
	// lock of its own: neither is on a room's path.
	templates templates
	defs      definitions
	auto      autopilots
}

var _ waitroom.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read time from clock instead of time.Now. Every
// time the store uses comes from it, ticket seeds included.
func WithClock(clock func() time.Time) Option {
	return func(s *Store) { s.clock = clock }
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{clock: time.Now, rooms: make(map[string]*room),
		templates: templates{used: make(map[string]map[string]time.Time)},
		defs:      definitions{bodies: make(map[string][]byte)}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Decide implements waitroom.Store. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Decide(ctx context.Context, room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) (waitroom.Decision, error) {
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return waitroom.Decision{}, err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	return r.decide(now, lim, v, join), nil
}

// Admit implements waitroom.Store. Every call, not only Admit, removes the
// sessions that ran out, so Admitted.Expired counts those this tick found;
// Stats.Expired counts them all. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return waitroom.Admitted{}, err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	return r.tick(now, lim), nil
}

// Touch implements waitroom.Store. A room never used is left alone.
// Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Touch(ctx context.Context, room string, lim waitroom.Limits, vs []waitroom.Visitor) error {
	r, now, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	r.touch(now, vs)
	return nil
}

// Release implements waitroom.Store. Errors: waitroom.ErrNotFound,
// waitroom.ErrClosed, ctx's error.
func (s *Store) Release(ctx context.Context, room, visitor string) error {
	_, err := s.ReleaseAt(ctx, room, visitor, time.Time{})
	return err
}

// ReleaseAt implements waitroom.Store: at is the room's clock (the store's
// clock, never behind the room's earlier calls). Errors:
// waitroom.ErrNotFound, waitroom.ErrClosed, ctx's error.
func (s *Store) ReleaseAt(ctx context.Context, room, visitor string, began time.Time) (time.Time, error) {
	r, now, err := s.enter(ctx, room, false)
	if err != nil {
		return time.Time{}, err
	}
	if r == nil {
		return s.clock(), waitroom.ErrNotFound
	}
	defer r.mu.Unlock()
	if !r.release(now, visitor, began) {
		return now, waitroom.ErrNotFound
	}
	return now, nil
}

// Stats implements waitroom.Store; a room never used reads as empty.
// Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Stats(ctx context.Context, room string) (waitroom.Stats, error) {
	r, now, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return waitroom.Stats{}, err
	}
	defer r.mu.Unlock()
	return r.stats(now), nil
}

// Ping implements waitroom.Store: an embedded store always answers until it
// is closed. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return waitroom.ErrClosed
	}
	return nil
}

// Close drops every room; later calls return waitroom.ErrClosed. Closing
// twice is harmless.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.mu.Lock()
	s.rooms = nil
	s.mu.Unlock()
	s.templates.close()
	s.defs.close()
	return nil
}

// enter finds the room and returns it locked, with the time to use. Without
// create a missing room is not created and enter returns a nil room: reading
// or releasing cannot need one, and arbitrary names must not grow the map.
func (s *Store) enter(ctx context.Context, name string, create bool) (*room, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	for {
		r, err := s.lookup(name, create)
		if r == nil {
			return nil, time.Time{}, err
		}
		r.mu.Lock()
		if r.gone {
			// Dropped for idleness between the lookup and the lock: what
			// this call does belongs to the room's next incarnation.
			r.mu.Unlock()
			continue
		}
		// Read the clock under the lock, so that calls see time in the
		// order they change the room.
		return r, r.now(s.clock()), nil
	}
}

func (s *Store) lookup(name string, create bool) (*room, error) {
	if s.closed.Load() {
		return nil, waitroom.ErrClosed
	}
	s.mu.RLock()
	r, open := s.rooms[name], s.rooms != nil
	s.mu.RUnlock()
	switch {
	case !open:
		return nil, waitroom.ErrClosed
	case r != nil || !create:
		return r, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rooms == nil {
		return nil, waitroom.ErrClosed
	}
	if r = s.rooms[name]; r == nil {
		now := s.clock()
		s.sweep(now)
		r = newRoom(now)
		s.rooms[name] = r
	}
	return r, nil
}
