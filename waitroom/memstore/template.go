package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// templates is UseRoom's registry: for each template, its rooms and when
// each was last used. A room used longer than idle ago is no longer in
// use; its entry stays until a new room needs the count, so a template
// holds at most max entries and the common call, a room in use, looks at
// none of the others.
type templates struct {
	mu   sync.Mutex
	used map[string]map[string]time.Time // nil once closed
}

func (t *templates) close() {
	t.mu.Lock()
	t.used = nil
	t.mu.Unlock()
}

// UseRoom implements waitroom.Store. max <= 0 refuses every room not in
// use. Errors: waitroom.ErrTooManyRooms, waitroom.ErrClosed, ctx's error,
// or an empty name or an idle under a millisecond (a store with the
// Redis store's resolution refuses the same calls).
func (s *Store) UseRoom(ctx context.Context, template, room string, max int, idle time.Duration) error {
	if err := checkUse(template, room, idle); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return waitroom.ErrClosed
	}
	t := &s.templates
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.used == nil {
		return waitroom.ErrClosed
	}
	now := s.clock() // under the lock, so uses are recorded in order
	rooms := t.used[template]
	at, ok := rooms[room]
	if !ok || now.Sub(at) > idle {
		for name, last := range rooms {
			if now.Sub(last) > idle {
				delete(rooms, name)
			}
		}
		if len(rooms) >= max {
			return waitroom.ErrTooManyRooms
		}
	}
	if rooms == nil {
		rooms = make(map[string]time.Time)
		t.used[template] = rooms
	}
	// A clock that steps back leaves the later use standing.
	if now.After(at) {
		rooms[room] = now
	}
	return nil
}

// checkUse refuses what UseRoom cannot count.
func checkUse(template, room string, idle time.Duration) error {
	if template == "" || room == "" || idle < time.Millisecond {
		return fmt.Errorf("using room %q of template %q: want both names and an idle of at least 1ms, got %v", room, template, idle)
	}
	return nil
}
