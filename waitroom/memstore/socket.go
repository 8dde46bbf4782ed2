package memstore

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// Socket implements waitroom.Store. Errors: waitroom.ErrNotFound,
// waitroom.ErrTooManySockets, waitroom.ErrClosed, ctx's error.
func (s *Store) Socket(ctx context.Context, room string, lim waitroom.Limits, visitor, socket string, op waitroom.SocketOp, every time.Duration) error {
	r, now, err := s.enter(ctx, room, false)
	if err != nil {
		return err
	}
	if r == nil {
		if op == waitroom.SocketClose {
			return nil
		}
		return waitroom.ErrNotFound
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	return r.socket(now, lim, visitor, socket, op, 3*every)
}

func (r *room) socket(now time.Time, lim waitroom.Limits, visitor, socket string, op waitroom.SocketOp, stale time.Duration) error {
	held := r.sockets[visitor]
	if op == waitroom.SocketClose {
		delete(held, socket)
		if len(held) == 0 {
			delete(r.sockets, visitor)
		}
		return nil
	}
	if x := r.active.get(visitor); x == nil || !x.until.After(now) {
		delete(r.sockets, visitor)
		return waitroom.ErrNotFound
	}
	if held == nil {
		held = make(map[string]time.Time)
		r.sockets[visitor] = held
	}
	if op == waitroom.SocketOpen && lim.MaxSockets > 0 {
		live := 0
		for id, at := range held {
			switch {
			case now.Sub(at) > stale:
				delete(held, id)
			case id != socket:
				live++
			}
		}
		if live >= lim.MaxSockets {
			return waitroom.ErrTooManySockets
		}
	}
	held[socket] = now
	return nil
}

// Allow implements waitroom.Store. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Allow(ctx context.Context, room, kind, network string, limit waitroom.Rate) (time.Duration, error) {
	if limit.IsUnlimited() || network == "" {
		return 0, ctx.Err()
	}
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return 0, err
	}
	defer r.mu.Unlock()
	// A NUL cannot be in a kind, so "kind\x00network" never meets a join
	// quota's key (a network alone).
	_, wait, _ := r.spend(now, kind+"\x00"+network, limit, true)
	return wait, nil
}
