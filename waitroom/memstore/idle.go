package memstore

import (
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// use records a call that carried the room's limits: its Limits.Idle, and
// now as the room's last activity. Reads (Stats, Override) and calls
// without limits are not activity: a dashboard looking at a room must not
// keep it alive, as in the Redis store, where only ticks and writes give
// keys their lifetimes.
func (r *room) use(now time.Time, lim waitroom.Limits) {
	r.idle, r.used = lim.Idle, now
}

// idleSince reports whether the room may be dropped at now: it has an
// Idle, was not used for longer, and holds no override, which may be a
// "closed" the site asked for and must outlive the room's line, as it
// does in Redis.
func (r *room) idleSince(now time.Time) bool {
	return r.idle > 0 && now.Sub(r.used) > r.idle && r.override == (waitroom.Override{})
}

// sweep drops the rooms idle for longer than their Idle, so rooms filled
// in from templates, which come and go, do not grow the map forever. It
// runs when a room is created, with s.mu held for writing, which is the
// only time the map grows; its cost is one look at each room, and the
// rooms are bounded by the configuration and the templates' max_rooms.
func (s *Store) sweep(now time.Time) {
	for name, r := range s.rooms {
		// A room whose lock is held is in use right now. Waiting for it
		// would stall every lookup behind one busy room.
		if !r.mu.TryLock() {
			continue
		}
		if r.idleSince(now) {
			r.gone = true
			delete(s.rooms, name)
		}
		r.mu.Unlock()
	}
}
