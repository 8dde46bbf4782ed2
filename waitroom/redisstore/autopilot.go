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

var autostartScript = loadScript("autostart.lua", preludeOnly)

// The room's keys autostart.lua reads: their indexes in keyNames.
const (
	statsKey = 6
	queueKey = 1
)

var _ waitroom.AutopilotStarts = (*Store)(nil)

// AutopilotStart implements waitroom.AutopilotStarts in one script
// (autostart.lua), on the room's join count and line read in the same
// script: the state lives in "{<prefix>:<room>}:autostart", beside the
// room's keys under their hash tag. Errors: waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error.
func (s *Store) AutopilotStart(ctx context.Context, room string, p waitroom.StartParams) (waitroom.StartState, error) {
	keys := s.cache.keys(s.prefix, room)
	tag := "{" + s.prefix + ":" + room + "}:"
	strained := int64(0)
	if p.Strained {
		strained = 1
	}
	args := []any{p.AboveMilli, p.Window.Microseconds(), p.Hold.Microseconds(), strained}
	var out [5]int64
	if err := s.runKeys(ctx, autostartScript, []string{keys[statsKey], keys[queueKey], tag + "autostart"}, args, out[:]); err != nil {
		return waitroom.StartState{}, fmt.Errorf("start_above of room %q: %w", room, err)
	}
	return waitroom.StartState{On: out[0] == 1, Judged: out[1] == 1, ArrivalsMilli: out[2],
		Calm: time.Duration(out[3]) * time.Microsecond, Switched: out[4] == 1}, nil
}

var autonoticeScript = loadScript("autonotice.lua", preludeOnly)

var _ waitroom.AutopilotNotices = (*Store)(nil)

// AutopilotNotice implements waitroom.AutopilotNotices in one script
// (autonotice.lua) on "{<prefix>:auto:<room>}:notice", beside the room's
// autopilot hash. Errors: waitroom.ErrUnavailable, waitroom.ErrClosed,
// ctx's error.
func (s *Store) AutopilotNotice(ctx context.Context, room string, limit int, gap time.Duration, quietly bool) (bool, int, int, error) {
	q := int64(0)
	if quietly {
		q = 1
	}
	var out [3]int64
	key := "{" + s.prefix + ":auto:" + room + "}:notice"
	if err := s.runKeys(ctx, autonoticeScript, []string{key}, []any{int64(limit), gap.Microseconds(), q}, out[:]); err != nil {
		return false, 0, 0, fmt.Errorf("autopilot notice of room %q: %w", room, err)
	}
	return out[0] == 1, int(out[1]), int(out[2]), nil
}
