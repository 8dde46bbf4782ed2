package waitroom

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// The operators' actions (the admin API) and the releases the site and
// visitors ask for. Each goes to the store; the operators' changes then
// refresh this instance's view of the room at once, so they show here
// before the next tick (other instances pick them up at theirs).

// SetOverride merges o into the room's runtime override in the store.
// Errors: ErrNotFound for a room not in service, the store's errors (an
// override it could not keep among them).
func (rs *Rooms) SetOverride(ctx context.Context, room string, o Override) error {
	if rs.get(room) == nil {
		return fmt.Errorf("setting the override of room %q: %w", room, ErrNotFound)
	}
	if err := rs.store.SetOverride(ctx, room, o); err != nil {
		return fmt.Errorf("setting the override of room %q: %w", room, err)
	}
	return rs.Refresh(ctx, room)
}

// ClearOverride drops the room's runtime override: back to the
// configuration. Errors: ErrNotFound, the store's.
func (rs *Rooms) ClearOverride(ctx context.Context, room string) error {
	if rs.get(room) == nil {
		return fmt.Errorf("clearing the override of room %q: %w", room, ErrNotFound)
	}
	if err := rs.store.ClearOverride(ctx, room); err != nil {
		return fmt.Errorf("clearing the override of room %q: %w", room, err)
	}
	return rs.Refresh(ctx, room)
}

// AdmitNow lets up to n visitors in now, within the room's MaxActive,
// ignoring the token bucket (the admin API's "admit N"); it works in a
// paused room too, and not in a closed (reject) one. Errors: ErrNotFound,
// ErrRoomClosed, the store's.
func (rs *Rooms) AdmitNow(ctx context.Context, room string, n int) (Admitted, error) {
	lr := rs.get(room)
	if lr == nil {
		return Admitted{}, fmt.Errorf("admitting in room %q: %w", room, ErrNotFound)
	}
	eff := lr.eff.Load()
	lim := eff.Limits
	switch eff.Mode {
	case ModeReject:
		return Admitted{}, fmt.Errorf("admitting in room %q: %w", room, ErrRoomClosed)
	case ModePaused:
		// A paused room admits nobody by itself, but an operator who asks
		// for N gets them, within the room's max_active, in the order the
		// configuration says (fifo or random).
		o := eff.Override
		o.Mode = lr.room().Mode
		if o.Mode == ModePaused || o.Mode == ModeReject {
			o.Mode = ModeFIFO
		}
		lim, _ = o.Apply(*lr.room())
	}
	a, err := rs.store.AdmitN(ctx, room, lim, n)
	if err != nil {
		return a, fmt.Errorf("admitting %d in room %q: %w", n, room, err)
	}
	rs.obs.Tick(rs.labelOf(room), a)
	_ = rs.Refresh(ctx, room) // the admission stands; the view catches up at the next tick
	return a, nil
}

// Release ends a visitor's session or place; how says who asked
// ("upstream", "leave", "admin"), for the metrics, and entered when the
// session began, for its length (zero: unknown, or a place in line). It works for a room a
// reload removed too: a site may still release the people it served. It
// does not refresh the view: a site's checkouts must not cost two more
// store calls each. Errors: ErrNotFound (no such visitor), the store's.
//
// A release the store cannot take for want of a master (ErrUnavailable:
// down, or failing over) is kept and retried by the room's ticks for up
// to maxPendingAge, and nil is returned: the session is over as far as
// the caller is concerned. Releases the store took are kept for
// replayWindow, to apply again if a failover lost them (repair.go),
// with the store's clock at the release: the replay ends only a session
// begun by then, never a later one of the same visitor.
func (rs *Rooms) Release(ctx context.Context, room, visitor, how string, entered time.Time) error {
	rs.sessions.Load().drop(room, visitor)
	k := keptRelease{room: room, visitor: visitor, how: how, at: time.Now()}
	at, err := rs.store.ReleaseAt(ctx, room, visitor, time.Time{})
	if err != nil {
		if errors.Is(err, ErrUnavailable) && ctx.Err() == nil {
			if rs.releases.keep(k, false) {
				// One line per outage, not per release: a flood of leaves
				// would flood the log too.
				rs.log.Warn("the store could not take a release; kept with any others until it can, retried every tick",
					zap.String(fieldRoom, room), zap.Error(err))
			}
			return nil
		}
		return fmt.Errorf("releasing %s in room %q: %w", visitor, room, err)
	}
	k.storeAt = at
	rs.releases.keep(k, true)
	rs.obs.Released(rs.labelOf(room), how)
	if !entered.IsZero() {
		rs.obs.SessionEnded(rs.labelOf(room), max(time.Since(entered), 0))
	}
	return nil
}

// Refresh reads the room's override and stats from the store now, so this
// instance shows a change before its next tick. Errors: ErrNotFound, the
// store's.
func (rs *Rooms) Refresh(ctx context.Context, room string) error {
	lr := rs.get(room)
	if lr == nil {
		return fmt.Errorf("refreshing room %q: %w", room, ErrNotFound)
	}
	o, err := rs.store.Override(ctx, room)
	if err != nil {
		return fmt.Errorf("refreshing room %q: %w", room, err)
	}
	lr.setOverride(o)
	st, err := rs.store.Stats(ctx, room)
	if err != nil {
		return fmt.Errorf("refreshing room %q: %w", room, err)
	}
	lr.stats.Store(&st)
	return nil
}

// CloseRoom is the site's "Waitroom-Command: close" (sold out): the room
// stops issuing tickets at once on every instance, through the store's
// override, as mode reject does; people inside finish, people waiting see
// the closed page. Errors: ErrNotFound, the store's.
func (rs *Rooms) CloseRoom(ctx context.Context, room string) error {
	return rs.SetOverride(ctx, room, Override{Mode: ModeReject, By: "upstream"})
}

// OpenRoom undoes CloseRoom ("Waitroom-Command: open"): the room goes back
// to its configured mode, keeping the rest of the override. Errors:
// ErrNotFound, the store's.
func (rs *Rooms) OpenRoom(ctx context.Context, room string) error {
	lr := rs.get(room)
	if lr == nil {
		return fmt.Errorf("opening room %q: %w", room, ErrNotFound)
	}
	return rs.SetOverride(ctx, room, Override{Mode: lr.room().Mode, By: "upstream"})
}
