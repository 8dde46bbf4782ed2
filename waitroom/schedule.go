package waitroom

import (
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// ScheduleConfig is rooms.<name>.schedule: a sale that opens at a fixed
// time. Times are RFC 3339 ("2026-12-01T10:00:00+09:00"); each is optional.
type ScheduleConfig struct {
	// PrequeueFrom is when arrivals start to get a ticket in the pre-queue;
	// before it the room answers "not open yet". Default "": from the start.
	PrequeueFrom string `mapstructure:"prequeue_from" yaml:"prequeue_from" json:"prequeue_from"`
	// OpensAt is when the sale opens: the pre-queue is shuffled once, then
	// admitted by the room's limits; later arrivals join the back.
	OpensAt string `mapstructure:"opens_at" yaml:"opens_at" json:"opens_at"`
	// ClosesAt is when the sale closes: nobody new joins or goes in.
	ClosesAt string `mapstructure:"closes_at" yaml:"closes_at" json:"closes_at"`
}

// Schedule is a parsed ScheduleConfig; zero times are unset.
type Schedule struct {
	PrequeueFrom, OpensAt, ClosesAt time.Time
}

// Phase is where a scheduled room stands at a moment.
type Phase int

const (
	// PhaseOpen: admitting by the room's limits (also: no schedule).
	PhaseOpen Phase = iota
	// PhaseBefore: before prequeue_from; nobody gets a ticket yet.
	PhaseBefore
	// PhasePrequeue: tickets are handed out, nobody goes in.
	PhasePrequeue
	// PhaseClosed: after closes_at; nobody new joins or goes in.
	PhaseClosed
)

// Phase tells where the schedule stands at now.
func (s Schedule) Phase(now time.Time) Phase {
	switch {
	case !s.ClosesAt.IsZero() && !now.Before(s.ClosesAt):
		return PhaseClosed
	case !s.PrequeueFrom.IsZero() && now.Before(s.PrequeueFrom):
		return PhaseBefore
	case !s.OpensAt.IsZero() && now.Before(s.OpensAt):
		return PhasePrequeue
	}
	return PhaseOpen
}

// ShuffleKey names the opening's shuffle in the store, so it runs once
// per opening however many gateways tick the room.
func (s Schedule) ShuffleKey() string {
	if s.OpensAt.IsZero() {
		return ""
	}
	return "opens:" + s.OpensAt.UTC().Format(time.RFC3339Nano)
}

// Build parses and checks the schedule; keys are relative to the section.
func (c ScheduleConfig) Build() (Schedule, error) {
	var s Schedule
	var p conf.Problems
	for _, f := range []struct {
		key, raw string
		dst      *time.Time
	}{{"prequeue_from", c.PrequeueFrom, &s.PrequeueFrom}, {"opens_at", c.OpensAt, &s.OpensAt}, {"closes_at", c.ClosesAt, &s.ClosesAt}} {
		if f.raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, f.raw)
		if err != nil {
			p.Add(f.key, `want an RFC 3339 time such as "2026-12-01T10:00:00+09:00", got %q`, f.raw)
			continue
		}
		*f.dst = t
	}
	if !s.PrequeueFrom.IsZero() && s.OpensAt.IsZero() {
		p.Add("prequeue_from", "needs opens_at, the end of the pre-queue")
	}
	if !s.PrequeueFrom.IsZero() && !s.OpensAt.IsZero() && !s.PrequeueFrom.Before(s.OpensAt) {
		p.Add("prequeue_from", "must be before opens_at (%s), got %q", c.OpensAt, c.PrequeueFrom)
	}
	if !s.OpensAt.IsZero() && !s.ClosesAt.IsZero() && !s.OpensAt.Before(s.ClosesAt) {
		p.Add("closes_at", "must be after opens_at (%s), got %q", c.OpensAt, c.ClosesAt)
	}
	return s, p.Err()
}

// String names the phase as the admin API shows it.
func (p Phase) String() string {
	switch p {
	case PhaseBefore:
		return "before"
	case PhasePrequeue:
		return "prequeue"
	case PhaseClosed:
		return "closed"
	}
	return "open"
}
