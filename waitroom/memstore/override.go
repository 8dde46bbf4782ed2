package memstore

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/waitroom"
)

// SetOverride implements waitroom.Store: o's non-nil fields and a
// non-empty Mode replace the room's, and Changed becomes the store's time.
// An override the Redis store could not keep (a negative max_active, a
// rate per other than a second, minute or hour, an unknown mode) is
// refused, so both stores take the same ones. Errors: waitroom.ErrClosed,
// ctx's error, or the refusal.
func (s *Store) SetOverride(ctx context.Context, room string, o waitroom.Override) error {
	if err := o.Validate(); err != nil {
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
	if o.By != "" {
		cur.By = o.By
	}
	cur.Changed = now
	return nil
}

// ClearOverride implements waitroom.Store. Errors: waitroom.ErrClosed,
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

// Override implements waitroom.Store; the result shares nothing with
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

// AdmitN implements waitroom.Store: one admission round that lets up
// to n in, within MaxActive, without looking at or spending the token
// bucket. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) AdmitN(ctx context.Context, room string, lim waitroom.Limits, n int) (waitroom.Admitted, error) {
	r, now, err := s.enter(ctx, room, false)
	if err != nil || r == nil {
		return waitroom.Admitted{}, err
	}
	defer r.mu.Unlock()
	r.use(now, lim)
	return r.admitN(now, lim, n), nil
}
