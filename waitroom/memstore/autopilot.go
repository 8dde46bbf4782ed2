package memstore

import (
	"context"
	"sync"

	"github.com/waitroom/waitroom/waitroom"
)

var _ waitroom.Autopilots = (*Store)(nil)

// autopilots are the rooms' autopilot records, under a lock of their own:
// they are on no visitor's path.
type autopilots struct {
	mu    sync.Mutex
	rooms map[string]*waitroom.AutopilotRecord
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
	if s.auto.rooms == nil {
		s.auto.rooms = make(map[string]*waitroom.AutopilotRecord)
	}
	rec := s.auto.rooms[room]
	if rec == nil {
		rec = &waitroom.AutopilotRecord{}
		s.auto.rooms[room] = rec
	}
	return rec.Report(now, p, r), nil
}
