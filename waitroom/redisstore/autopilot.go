package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var autopilotScript = loadScript("autopilot.lua", preludeOnly)

var _ waitroom.Autopilots = (*Store)(nil)

// Autopilot implements waitroom.Autopilots in one script (autopilot.lua).
// A room's autopilot lives in "{<prefix>:auto:<room>}", a hash under a
// hash tag of its own (room names hold no colon): the limit, the step
// running and its merged counts, and the last step's figures. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Autopilot(ctx context.Context, room string, p waitroom.AutopilotParams, r waitroom.AutopilotReport) (waitroom.AutopilotState, error) {
	args := make([]any, 0, 10+waitroom.AutopilotBuckets)
	args = append(args, p.Interval.Microseconds(), p.Target.Microseconds(), int64(p.Percentile), p.ErrorsPPM,
		int64(p.Min), int64(p.Max), int64(p.Pin), r.Errors, r.Requests, r.Active)
	for _, n := range r.Buckets {
		args = append(args, n)
	}
	var out [10]int64
	key := "{" + s.prefix + ":auto:" + room + "}"
	if err := s.runKeys(ctx, autopilotScript, []string{key}, args, out[:]); err != nil {
		return waitroom.AutopilotState{}, fmt.Errorf("autopilot of room %q: %w", room, err)
	}
	return waitroom.AutopilotState{Limit: int(out[0]), Step: out[1], Latency: time.Duration(out[2]) * time.Microsecond,
		ErrorsPPM: out[3], Samples: out[4], Active: out[5], Reason: waitroom.AutopilotReason(out[6]), Decided: out[7] == 1,
		Median: time.Duration(out[8]) * time.Microsecond, Baseline: time.Duration(out[9]) * time.Microsecond}, nil
}
