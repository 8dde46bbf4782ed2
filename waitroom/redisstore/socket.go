package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var (
	socketScript = loadScript("socket.lua", preludeOnly)
	allowScript  = loadScript("allow.lua", withHelpers)
)

// socket.lua's operations and results (its O_ and X_ constants).
const (
	socketOK      = 0
	socketEnded   = 1
	socketTooMany = 2
)

// maxSocketID bounds a socket's id: the gate makes 16-byte ones.
const maxSocketID = 64

// Socket implements waitroom.Store in one script (socket.lua). The
// visitor's sockets live in "{<prefix>:<room>}:ws:<visitor>", beside the
// room's keys in its slot. Errors: waitroom.ErrNotFound,
// waitroom.ErrTooManySockets, waitroom.ErrUnavailable, waitroom.ErrClosed,
// ctx's error.
func (s *Store) Socket(ctx context.Context, room string, lim waitroom.Limits, visitor, socket string, op waitroom.SocketOp, every time.Duration) error {
	if socket == "" || len(socket) > maxSocketID || op < waitroom.SocketOpen || op > waitroom.SocketClose {
		return fmt.Errorf("socket of room %q: want an id of 1 to %d bytes and a known op, got %d bytes, op %d", room, maxSocketID, len(socket), op)
	}
	keys := s.cache.keys(s.prefix, room)
	tag := keys[0][:len(keys[0])-len(keyNames[0])]
	stale := max(3*every, time.Millisecond)
	var r [1]int64
	err := s.runKeys(ctx, socketScript, []string{keys[activeKey], tag + "ws:" + visitor},
		[]any{visitor, socket, int64(op), lim.MaxSockets, stale.Microseconds()}, r[:])
	if err != nil {
		return fmt.Errorf("socket of room %q: %w", room, err)
	}
	switch r[0] {
	case socketOK:
		return nil
	case socketEnded:
		return waitroom.ErrNotFound
	case socketTooMany:
		return waitroom.ErrTooManySockets
	}
	return fmt.Errorf("socket of room %q: %w", room, unavailable(fmt.Errorf("%s: unknown result %d", socketScript.name, r[0])))
}

// Allow implements waitroom.Store in one script (allow.lua). The
// allowance lives in "{<prefix>:<room>}:q:<kind>:<network>", apart from
// the join quotas' hashes ("…:qa", "…:qb"). Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Allow(ctx context.Context, room, kind, network string, limit waitroom.Rate) (time.Duration, error) {
	if limit.IsUnlimited() || network == "" {
		return 0, s.ready(ctx)
	}
	keys := s.cache.keys(s.prefix, room)
	tag := keys[0][:len(keys[0])-len(keyNames[0])]
	var r [2]int64
	err := s.runKeys(ctx, allowScript, []string{tag + "q:" + kind + ":" + network},
		[]any{int64(limit.N), limit.Per.Microseconds()}, r[:])
	if err != nil {
		return 0, fmt.Errorf("allowance %s of room %q: %w", kind, room, err)
	}
	if r[0] == 1 {
		return 0, nil
	}
	return time.Duration(r[1]) * time.Microsecond, nil
}
