package waitroom

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Making and counting the rooms a template fills; the rule is written
// above fill, in template.go.

// errNoRoomYet: a request that takes no ticket asked about a room nobody
// made on this instance, and it makes none.
var errNoRoomYet = errors.New("no such room yet")

// create makes the room template fills as name on this instance for a
// request it is not in service for yet. A request holding the room's
// ticket fills it free: the room was made where the ticket was taken. A
// request that joins nobody (join is not JoinTicket) makes nothing:
// errNoRoomYet. A newcomer spends one of its network's create_limit,
// unless the store counts the room already; past the limit, create
// returns how long until the network may make another, and no room.
func (g *Gate) create(r *http.Request, template, name string, params []Param, join Join) (*liveRoom, time.Duration, error) {
	ctx := r.Context()
	if g.tickets.Read(r, name).Valid {
		lr, err := g.rooms.Fill(ctx, template, name, params)
		return lr, 0, err
	}
	if join != JoinTicket {
		return nil, 0, errNoRoomYet
	}
	t := g.rooms.template(template)
	if t == nil || !t.Allows(name) {
		return nil, 0, ErrUnknownRoom // an id the site never listed spends nothing
	}
	counted, err := g.rooms.countedElsewhere(ctx, t, name)
	if !counted && err == nil && !t.CreateLimit.IsUnlimited() {
		// A store that fails says nothing about this network; the visit
		// meets store.on_error at the decision, as anywhere else.
		// The unshared network, as for preflight_limit: no block
		// ceiling caps create_limit, so shared_networks must not widen it.
		network := g.unsharedNetwork(r)
		wait, err := g.rooms.store.Allow(ctx, template, "create", networkKey(network), t.CreateLimit)
		if err == nil && wait > 0 {
			g.rooms.obs.JoinRefused(template, "create")
			g.limited(template, network)
			return nil, wait, nil
		}
	}
	lr, err := g.rooms.Fill(ctx, template, name, params)
	if lr != nil && counted {
		lr.counted.Store(true)
		lr.lastUse.Store(time.Now().UnixNano())
	}
	return lr, 0, err
}

// settled is what a visit that got an answer from the store means for a
// filled room: someone in its line or inside wakes it (sleep.go), and a
// visitor who came back with its ticket makes it count (count). It
// reports false when the room cannot count: the template's max_rooms are
// in use, and the visitor is told "full".
func (g *Gate) settled(ctx context.Context, vt visit) bool {
	d := vt.d
	if d.State != StateWaiting && d.State != StateAdmitted {
		return true
	}
	g.rooms.stir(vt.lr)
	return g.rooms.count(ctx, vt.lr, vt.p.Valid && (d.Placed || d.State == StateAdmitted))
}

// count makes a filled room count toward its template's max_rooms once a
// visitor came back to it with its ticket (returned: the request carried
// the room's ticket and the decision left it a place or a session). It
// reports false when the template's max_rooms are in use across
// instances: the visitor is then told "full". A store that fails counts
// nothing and refuses nobody; the next returning ticket asks again.
func (rs *Rooms) count(ctx context.Context, lr *liveRoom, returned bool) bool {
	if !returned || lr.counted.Load() || !lr.filled() {
		return true
	}
	r := lr.room()
	err := rs.store.UseRoom(ctx, r.Template, lr.name, r.MaxRooms, r.IdleAfter)
	switch {
	case err == nil:
		lr.counted.Store(true)
		lr.lastUse.Store(time.Now().UnixNano())
	case errors.Is(err, ErrTooManyRooms):
		rs.obs.JoinRefused(r.Template, "rooms")
		return false
	case ctx.Err() == nil:
		rs.log.Warn("counting a template's room in use", zap.String(fieldRoom, lr.name), zap.Error(err))
	}
	return true
}

// countedElsewhere reports whether the store counts the room called name
// already (a visitor came back to it through another instance): UseRoom
// with a max of 0 refreshes a room in use and refuses any other, so it
// asks without counting anything.
func (rs *Rooms) countedElsewhere(ctx context.Context, t *Room, name string) (bool, error) {
	err := rs.store.UseRoom(ctx, t.Name, name, 0, t.IdleAfter)
	if errors.Is(err, ErrTooManyRooms) {
		return false, nil
	}
	return err == nil, err
}

// idleAfter is how long the room may stay empty and unvisited before this
// instance forgets it: its template's idle_after once it counts, at most
// uncountedIdle before, since nobody came back to it.
func (lr *liveRoom) idleAfter() time.Duration {
	if d := lr.room().IdleAfter; lr.counted.Load() || d < uncountedIdle {
		return d
	}
	return uncountedIdle
}

// uncountedIdle bounds how long a room nobody came back to is kept: a
// flood of first requests leaves no room behind for long.
const uncountedIdle = time.Minute

// keepCounted tells the store a counted room is still in use. A room the
// store no longer counts (it stayed unused there for idle_after) counts
// again at its next returning ticket.
func (rs *Rooms) keepCounted(ctx context.Context, lr *liveRoom, r *Room) {
	lr.lastUse.Store(time.Now().UnixNano())
	err := rs.store.UseRoom(ctx, r.Template, lr.name, r.MaxRooms, r.IdleAfter)
	switch {
	case errors.Is(err, ErrTooManyRooms):
		lr.counted.Store(false)
	case err != nil:
		rs.log.Debug("marking a template's room in use", zap.String(fieldRoom, lr.name), zap.Error(err))
	}
}

// fullRetry is when a visitor told "full" (max_rooms in use) may ask
// again.
const fullRetry = 30 * time.Second
