package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var (
	_ waitroom.Autopilots       = (*Store)(nil)
	_ waitroom.AutopilotStarts  = (*Store)(nil)
	_ waitroom.AutopilotNotices = (*Store)(nil)
)

// Bounds of the autopilot records, as Redis bounds its hashes: a record
// unused for autopilotTTL is dropped (Redis: the PEXPIRE of a day in
// autopilot.lua and autostart.lua), looked for at most once every
// autopilotSweepEvery; and past autopilotMax records, the least lately
// used goes for each new one, so rooms filled in from templates, which
// come and go, do not grow it forever. Only a record unused for
// autopilotLive goes early: a live room's record (its room's tick reports
// every second or so) is never evicted, since that would restart the room
// at min_active and judge start_above afresh (it could come back quiet in
// a sale). Past the bound with every record live, the map grows: its live
// records are bounded by the rooms themselves (a template's max_rooms, up
// to 100,000, and the configured rooms).
const (
	autopilotTTL        = 24 * time.Hour
	autopilotSweepEvery = time.Minute
	autopilotMax        = 10_000
	autopilotLive       = 5 * time.Minute
)

// autopilotEntry is a room's autopilot and start_above records.
type autopilotEntry struct {
	rec    waitroom.AutopilotRecord
	start  waitroom.StartRecord
	notice waitroom.NoticeRecord
	used   time.Time
}

// autopilots are the rooms' autopilot records, under a lock of their own:
// they are on no visitor's path.
type autopilots struct {
	mu    sync.Mutex
	rooms map[string]*autopilotEntry
	swept time.Time
}

// entry returns room's record, made if need be, with s.auto.mu held; it
// sweeps the map first.
func (s *Store) autopilotEntry(room string, now time.Time) *autopilotEntry {
	a := &s.auto
	if a.rooms == nil {
		a.rooms = make(map[string]*autopilotEntry)
	}
	if now.Sub(a.swept) >= autopilotSweepEvery || now.Before(a.swept) {
		a.swept = now
		for name, e := range a.rooms {
			if now.Sub(e.used) > autopilotTTL {
				delete(a.rooms, name)
			}
		}
	}
	e := a.rooms[room]
	if e == nil {
		if len(a.rooms) >= autopilotMax {
			// Full: the least lately used goes if no longer live (a scan,
			// only when full).
			var oldest string
			for name, o := range a.rooms {
				if oldest == "" || o.used.Before(a.rooms[oldest].used) {
					oldest = name
				}
			}
			if now.Sub(a.rooms[oldest].used) > autopilotLive {
				delete(a.rooms, oldest)
			}
		}
		e = &autopilotEntry{}
		a.rooms[room] = e
	}
	e.used = now
	return e
}

// autopilotRooms is how many rooms have autopilot records (tests).
func (s *Store) autopilotRooms() int {
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	return len(s.auto.rooms)
}

// Autopilot implements waitroom.Autopilots with the rule redisstore's
// autopilot.lua runs (waitroom.AutopilotRecord.Report), on the store's
// clock. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Autopilot(ctx context.Context, room string, p waitroom.AutopilotParams, r waitroom.AutopilotReport) (waitroom.AutopilotState, error) {
	if s.closed.Load() {
		return waitroom.AutopilotState{}, waitroom.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return waitroom.AutopilotState{}, err
	}
	now := s.clock()
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	return s.autopilotEntry(room, now).rec.Report(now, p, r), nil
}

// AutopilotStart implements waitroom.AutopilotStarts with the rule
// redisstore's autostart.lua runs (waitroom.StartRecord.Judge), on the
// room's join count and line as Stats reads them. The records' lock is
// held across the read, so calls judge counts in the order they read
// them. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) AutopilotStart(ctx context.Context, room string, p waitroom.StartParams) (waitroom.StartState, error) {
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	st, err := s.Stats(ctx, room)
	if err != nil {
		return waitroom.StartState{}, err
	}
	now := s.clock()
	return s.autopilotEntry(room, now).start.Judge(now, st.Joined, st.Waiting, p), nil
}

// AutopilotNotice implements waitroom.AutopilotNotices with the rule
// redisstore's autonotice.lua runs (waitroom.NoticeRecord.Note), on the
// store's clock. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) AutopilotNotice(ctx context.Context, room string, limit int, gap time.Duration, quietly bool) (bool, int, int, error) {
	if s.closed.Load() {
		return false, 0, 0, waitroom.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, 0, 0, err
	}
	now := s.clock()
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	send, from, sent := s.autopilotEntry(room, now).notice.Note(now, limit, gap, quietly)
	return send, from, sent, nil
}
