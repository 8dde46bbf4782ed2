package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var useRoomScript = loadScript("useroom.lua", preludeOnly)

// UseRoom implements waitroom.Store in one script (useroom.lua). The
// template's rooms live in "{<prefix>:tpl:<template>}", a sorted set of
// room to last use under a hash tag of its own, apart from every room's
// (room names hold no colon); it holds at most max rooms and expires twice
// idle after the last use. max <= 0 refuses every room not in use.
// Errors: waitroom.ErrTooManyRooms, waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error, or an empty name or an idle under a
// millisecond.
func (s *Store) UseRoom(ctx context.Context, template, room string, max int, idle time.Duration) error {
	if template == "" || room == "" || idle < time.Millisecond {
		return fmt.Errorf("using room %q of template %q: want both names and an idle of at least 1ms, got %v", room, template, idle)
	}
	var r [1]int64
	key := "{" + s.prefix + ":tpl:" + template + "}"
	if err := s.runKeys(ctx, useRoomScript, []string{key}, []any{room, int64(max), idle.Microseconds()}, r[:]); err != nil {
		return fmt.Errorf("using room %q of template %q: %w", room, template, err)
	}
	switch r[0] {
	case 1:
		return nil
	case 0:
		return waitroom.ErrTooManyRooms
	}
	return fmt.Errorf("using room %q of template %q: %w", room, template,
		unavailable(fmt.Errorf("%s: reply[1]: want 0 or 1, got %d", useRoomScript.name, r[0])))
}
