package memstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/waitroom/waitroom/waitroom"
)

// SetOverride implements waitroom.Overrides: o's non-nil fields and a
// non-empty Mode replace the room's, and Changed becomes the store's time.
// An override the Redis store could not keep (a negative max_active, a
// rate per other than a second, minute or hour, an unknown mode) is
// refused, so both stores take the same ones. Errors: waitroom.ErrClosed,
// ctx's error, or the refusal.
func (s *Store) SetOverride(ctx context.Context, room string, o waitroom.Override) error {
	if err := checkOverride(o); err != nil {
		return fmt.Errorf("setting override of room %q: %w", room, err)
	}
	r, now, err := s.enter(ctx, room, true)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	cur := &r.override
	if o.MaxActive != nil {
		cur.MaxActive = new(*o.MaxActive)
	}
	if o.AdmitRate != nil {
		rate := *o.AdmitRate
		if rate.IsUnlimited() {
			rate = waitroom.Rate{}
		}
		cur.AdmitRate = &rate
	}
	if o.Mode != "" {
		cur.Mode = o.Mode
	}
	if o.Message != nil {
		cur.Message = new(*o.Message)
	}
	cur.Changed = now
	return nil
}

// ClearOverride implements waitroom.Overrides. Errors: waitroom.ErrClosed,
// ctx's error.
func (s *Store) ClearOverride(ctx context.Context, room string) error {
	r, _, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return err
	}
	defer r.mu.Unlock()
	r.override = waitroom.Override{}
	return nil
}

// Override implements waitroom.Overrides; the result shares nothing with
// the store. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Override(ctx context.Context, room string) (waitroom.Override, error) {
	r, _, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return waitroom.Override{}, err
	}
	defer r.mu.Unlock()
	o := r.override
	if o.MaxActive != nil {
		o.MaxActive = new(*o.MaxActive)
	}
	if o.AdmitRate != nil {
		o.AdmitRate = new(*o.AdmitRate)
	}
	if o.Message != nil {
		o.Message = new(*o.Message)
	}
	return o, nil
}

// AdmitN implements waitroom.Overrides: one admission round that lets up
// to n in, within MaxActive, without looking at or spending the token
// bucket. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) AdmitN(ctx context.Context, room string, lim waitroom.Limits, n int) (waitroom.Admitted, error) {
	r, now, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return waitroom.Admitted{}, err
	}
	defer r.mu.Unlock()
	return r.admitN(now, lim, n), nil
}

// checkOverride refuses the values a store could not keep or read back:
// the Redis store writes the rate as its String and the mode as is.
func checkOverride(o waitroom.Override) error {
	var errs []error
	if o.MaxActive != nil && *o.MaxActive < 0 {
		errs = append(errs, fmt.Errorf("max_active: must be >= 0, got %d", *o.MaxActive))
	}
	if r := o.AdmitRate; r != nil && !r.IsUnlimited() {
		if back, err := waitroom.ParseRate(r.String()); err != nil || back != *r {
			errs = append(errs, fmt.Errorf("admit_rate: want 1 to 1e9 per second, minute or hour, got %d per %v", r.N, r.Per))
		}
	}
	if o.Mode != "" {
		if _, err := waitroom.ParseMode(string(o.Mode)); err != nil {
			errs = append(errs, fmt.Errorf("mode: %w", err))
		}
	}
	return errors.Join(errs...)
}
