package waitroom

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// RoomInfo is what the gate knows of a room, for the admin API: its
// configuration, what is in effect, the latest stats (as of the last tick)
// and the estimated wait at the back of the line.
type RoomInfo struct {
	Room      Room
	Effective Effective
	Stats     Stats
	// BackETA is the wait of someone joining now; ok is false while the
	// rate is unknown or the room admits nobody.
	BackETA   time.Duration
	BackETAOK bool
	// Message is the notice the waiting page shows now.
	Message string
	// Phase is where the room's schedule stands; ShuffleSeed the seed of
	// its opening's shuffle, once drawn ("" before, or without a schedule).
	Phase       Phase
	ShuffleSeed string
}

// Rooms names the gate's rooms, sorted.
func (g *Gate) Rooms() []string {
	names := make([]string, 0, len(g.rooms))
	for n := range g.rooms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Info describes a room; ok is false for a room the gate does not have.
func (g *Gate) Info(room string) (RoomInfo, bool) {
	ln := g.rooms[room]
	if ln == nil {
		return RoomInfo{}, false
	}
	eff, st := ln.eff.Load(), ln.stats.Load()
	info := RoomInfo{Room: ln.room, Effective: *eff, Stats: *st, Message: ln.message(), Phase: ln.room.Schedule.Phase(g.now())}
	if seed := ln.shuffleSeed.Load(); seed != nil {
		info.ShuffleSeed = *seed
	}
	if rate := admissionRate(st, eff.Limits.AdmitRate); rate > 0 && eff.Limits.MaxActive > 0 {
		info.BackETA = time.Duration(float64(st.Waiting+1)/rate) * time.Second
		info.BackETAOK = true
	}
	return info, true
}

// Stats returns the room's latest snapshot, as of the last tick.
func (g *Gate) Stats(room string) (Stats, bool) {
	ln := g.rooms[room]
	if ln == nil {
		return Stats{}, false
	}
	return *ln.stats.Load(), true
}

// History returns the room's samples of the last HistorySpan, oldest first.
func (g *Gate) History(room string) ([]Sample, bool) {
	ln := g.rooms[room]
	if ln == nil {
		return nil, false
	}
	return ln.hist.list(), true
}

// Refresh reads the room's override and stats from the store now, so a
// change made through this instance shows at once rather than at the next
// tick.
func (g *Gate) Refresh(ctx context.Context, room string) error {
	ln := g.rooms[room]
	if ln == nil {
		return fmt.Errorf("refreshing room %q: %w", room, ErrNotFound)
	}
	o, err := g.store.Override(ctx, room)
	if err != nil {
		return fmt.Errorf("refreshing room %q: %w", room, err)
	}
	ln.setOverride(o)
	st, err := g.store.Stats(ctx, room)
	if err != nil {
		return fmt.Errorf("refreshing room %q: %w", room, err)
	}
	ln.stats.Store(&st)
	return nil
}

// Store is the store the gate asks.
func (g *Gate) Store() Store { return g.store }

// AdmitNow lets up to n visitors in now, within the room's MaxActive,
// ignoring the token bucket (the admin API's "admit N"); it works in a
// paused room too, and not in a closed (reject) one.
func (g *Gate) AdmitNow(ctx context.Context, room string, n int) (Admitted, error) {
	ln := g.rooms[room]
	if ln == nil {
		return Admitted{}, fmt.Errorf("admitting in room %q: %w", room, ErrNotFound)
	}
	eff := ln.eff.Load()
	lim := eff.Limits
	switch eff.Mode {
	case ModeReject:
		return Admitted{}, fmt.Errorf("admitting in room %q: %w", room, ErrRoomClosed)
	case ModePaused:
		// A paused room admits nobody by itself, but an operator who asks
		// for N gets them, within the room's max_active, in the order the
		// configuration says (fifo or random).
		o := eff.Override
		o.Mode = ln.room.Mode
		if o.Mode == ModePaused || o.Mode == ModeReject {
			o.Mode = ModeFIFO
		}
		lim, _ = o.Apply(ln.room)
	}
	a, err := g.store.AdmitN(ctx, room, lim, n)
	if err != nil {
		return a, fmt.Errorf("admitting %d in room %q: %w", n, room, err)
	}
	g.obs.Tick(room, a)
	return a, nil
}

// Release ends a visitor's session or place; how says who asked
// ("upstream", "leave", "admin"), for the metrics.
func (g *Gate) Release(ctx context.Context, room, visitor, how string) error {
	g.sessions.drop(room, visitor)
	if err := g.store.Release(ctx, room, visitor); err != nil {
		return fmt.Errorf("releasing %s in room %q: %w", visitor, room, err)
	}
	g.obs.Released(room, how)
	return nil
}
