package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// The fields of the override hash ({prefix:room}:override). doc.go
// describes them; override.lua writes changed.
const (
	fieldMaxActive = "max_active"
	fieldAdmitRate = "admit_rate"
	fieldMode      = "mode"
	fieldMessage   = "message"
	fieldBy        = "by"
	fieldChanged   = "changed"
)

// SetOverride implements waitroom.Store with one script
// (override.lua), which merges o's fields into the room's override and
// stamps it with Redis's clock. An override the store could not read back
// as written (a negative max_active, a rate per other than a second, minute
// or hour, an unknown mode) is refused before anything is written. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error, or the refusal.
func (s *Store) SetOverride(ctx context.Context, room string, o waitroom.Override) error {
	if err := o.Validate(); err != nil {
		return fmt.Errorf("setting override of room %q: %w", room, err)
	}
	var r [1]int64
	if err := s.runDurable(ctx, overrideScript, room, overrideArgs(o), r[:]); err != nil {
		return fmt.Errorf("setting override of room %q: %w", room, err)
	}
	return nil
}

// overrideArgs is override.lua's ARGV for a merge: the key's lifetime, then
// the fields o sets, with the rate as its String ("300/m", "unlimited").
func overrideArgs(o waitroom.Override) []any {
	args := []any{metaTTL.Milliseconds(), "set"}
	if o.MaxActive != nil {
		args = append(args, fieldMaxActive, *o.MaxActive)
	}
	if o.AdmitRate != nil {
		args = append(args, fieldAdmitRate, o.AdmitRate.String())
	}
	if o.Mode != "" {
		args = append(args, fieldMode, string(o.Mode))
	}
	if o.Message != nil {
		args = append(args, fieldMessage, *o.Message)
	}
	if o.By != "" {
		args = append(args, fieldBy, o.By)
	}
	return args
}

// ClearOverride implements waitroom.Store (override.lua). Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) ClearOverride(ctx context.Context, room string) error {
	var r [1]int64
	if err := s.runDurable(ctx, overrideScript, room, []any{metaTTL.Milliseconds(), "clear"}, r[:]); err != nil {
		return fmt.Errorf("clearing override of room %q: %w", room, err)
	}
	return nil
}

// Override implements waitroom.Store with one HGETALL. A field this
// version does not know is skipped, so an instance still running an older
// version can read what a newer one wrote. Errors: waitroom.ErrUnavailable
// (a field that does not parse included), waitroom.ErrClosed, ctx's error.
func (s *Store) Override(ctx context.Context, room string) (waitroom.Override, error) {
	if err := s.ready(ctx); err != nil {
		return waitroom.Override{}, err
	}
	key := s.cache.keys(s.prefix, room)[overrideKey]
	h, err := s.client.HGetAll(ctx, key).Result()
	if err != nil {
		return waitroom.Override{}, fmt.Errorf("reading override of room %q: %w", room, s.failure(ctx, err))
	}
	o, err := parseOverride(key, h)
	if err != nil {
		return waitroom.Override{}, fmt.Errorf("reading override of room %q: %w", room, unavailable(err))
	}
	return o, nil
}

// parseOverride reads the override hash; errors name the key and the field.
func parseOverride(key string, h map[string]string) (waitroom.Override, error) {
	var o waitroom.Override
	if len(h) == 0 {
		return o, nil
	}
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%s: %s: "+format, append([]any{key, field}, args...)...)
	}
	if v, ok := h[fieldMaxActive]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, bad(fieldMaxActive, "want a whole number >= 0, got %q", v)
		}
		o.MaxActive = &n
	}
	if v, ok := h[fieldAdmitRate]; ok {
		r, err := waitroom.ParseRate(v)
		if err != nil {
			return o, bad(fieldAdmitRate, "%v", err)
		}
		o.AdmitRate = &r
	}
	if v, ok := h[fieldMode]; ok {
		m, err := waitroom.ParseMode(v)
		if err != nil || v == "" {
			return o, bad(fieldMode, `want "fifo", "random", "passthrough", "reject" or "paused", got %q`, v)
		}
		o.Mode = m
	}
	if v, ok := h[fieldMessage]; ok {
		o.Message = &v
	}
	if v, ok := h[fieldBy]; ok {
		o.By = v
	}
	v, ok := h[fieldChanged]
	if !ok {
		return o, bad(fieldChanged, "missing: override.lua always writes it")
	}
	us, err := strconv.ParseInt(v, 10, 64)
	if err != nil || us <= 0 {
		return o, bad(fieldChanged, "want microseconds since the epoch, got %q", v)
	}
	o.Changed = time.UnixMicro(us)
	return o, nil
}
