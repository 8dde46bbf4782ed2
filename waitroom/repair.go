package waitroom

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// What an instance does about a store that lost writes (redisstore's doc,
// "Repairs"): it tells the store the highest ticket it saw in each room
// lately (Visitor.Known), so a counter behind the tickets is found on the
// first request that meets it and a store with no data for a room that
// had some starts the recovery grace before anyone goes in; it trusts its
// session cache no longer once the store repaired the room; it counts and
// logs each repair its ticks notice once; and it keeps the releases it
// passed on lately, and those the store could not take, to apply them
// again on a store that lost them.

// hintFor is how long a ticket an instance saw counts as Visitor.Known
// after it last saw any: a room's data outlives its last tick by far more
// (redisstore: the counter half a month at least, or half the room's
// Idle, a key being refreshed once half its time is gone; a quarter of
// Idle bounds the hint too), so a room whose data is missing while the
// hint is that fresh lost it.
const hintFor = 10 * time.Minute

// MendMax is how far past the store's counter a ticket may lie and still
// count as one a failover lost (redisstore's MEND_MAX in prelude.lua): a
// number further on is a ticket of another store sealed with the same
// keys, and moves nothing.
const MendMax = 1 << 20

// knownTickets is the highest ticket number an instance saw in a room:
// max from the store's answers, cookie from cookies, which count only
// within MendMax of max once the store confirmed any (a rival
// deployment's ticket sealed with the same keys raises nothing).
type knownTickets struct {
	max    atomic.Int64
	cookie atomic.Int64
	at     atomic.Int64 // unix nanoseconds of the last see
}

// seeCookie records ticket t, brought by a cookie at now.
func (k *knownTickets) seeCookie(t int64, now time.Time) {
	if m := k.max.Load(); t <= 0 || (m > 0 && t > m+MendMax) {
		return
	}
	k.at.Store(now.UnixNano())
	raise(&k.cookie, t)
}

// raise sets m to t when t is higher.
func raise(m *atomic.Int64, t int64) {
	for {
		old := m.Load()
		if t <= old || m.CompareAndSwap(old, t) {
			return
		}
	}
}

// see records ticket t, seen at now.
func (k *knownTickets) see(t int64, now time.Time) {
	if t <= 0 {
		return
	}
	k.at.Store(now.UnixNano())
	raise(&k.max, t)
}

// raiseTo records ticket t, read at now, when it is above every ticket
// seen.
func (k *knownTickets) raiseTo(t int64, now time.Time) {
	if t > k.max.Load() {
		k.see(t, now)
	}
}

// hint is Visitor.Known: the highest ticket seen, 0 once none was seen for
// hintFor (or a quarter of the room's Idle, when shorter).
func (k *knownTickets) hint(now time.Time, lim Limits) int64 {
	fresh := hintFor
	if lim.Idle > 0 {
		fresh = min(fresh, lim.Idle/4)
	}
	if now.Sub(time.Unix(0, k.at.Load())) >= fresh {
		return 0
	}
	m, c := k.max.Load(), k.cookie.Load()
	if m > 0 && c > m+MendMax {
		c = 0 // seen before the store confirmed anything: not its ticket
	}
	return max(m, c)
}

// cookieCounts reports whether a presented ticket may raise the hint: one
// whose admission runs, or sealed within its room's abandon_after (a
// minute without one), so a ticket long unseen, which the store rightly
// forgot, never makes a room that expired look like one that lost its data.
func cookieCounts(v Visitor, lim Limits, now time.Time) bool {
	if v.Until.After(now) {
		return true
	}
	within := lim.AbandonAfter
	if within <= 0 {
		within = time.Minute
	}
	return !v.Seen.IsZero() && now.Sub(v.Seen) < within
}

// replayWindow is how far back the releases passed on are applied again
// after a repair: the writes a failover loses are those of the last
// moments before the switch, which is noticed within a tick of it;
// sentinels' down-after plus the failover itself take seconds.
const replayWindow = 30 * time.Second

// maxKept bounds the releases kept, recent and failed alike.
const maxKept = 4096

// keptRelease is a release passed on (or not yet) to the store.
type keptRelease struct {
	room, visitor, how string
	at                 time.Time
	// storeAt is the store's clock when it took the release (zero while
	// it has not): the replay ends only a session begun by then
	// (Store.ReleaseAt), so a later session of the same visitor (back in
	// line and admitted again) is left alone. A replay kept for the next
	// tick (replay) keeps it.
	storeAt time.Time
	pending bool // the store has not taken it yet
	replay  bool // pending as a replay a tick ran out before
}

// releases keeps the releases of the last replayWindow that the store
// took (done), to apply again after a repair, and those it could not take
// (pending, failed with ErrUnavailable: no master), retried every tick
// until the store takes them or maxAge passes.
type releases struct {
	mu            sync.Mutex
	done, pending []keptRelease
	lastFailover  time.Time
}

// maxPendingAge bounds how long a release the store could not take is
// retried: past it the session it ends has run out or been renewed by
// its holder since, and the release would mean nothing.
const maxPendingAge = 10 * time.Minute

// maxPendingPerRoom bounds one room's pending releases, so a flood of
// leaves in one room pushes out none of another's.
const maxPendingPerRoom = maxKept / 4

// keep records a release the store took (ok) or could not take, and
// reports whether it is the first pending one (an outage begins). One
// visitor keeps one pending release, the one that ends more (ends): its
// repeated leaves keep one entry, and a replay of an older release, which
// spares a later session, never displaces a newer one that ends it. A
// room with maxPendingPerRoom pending, or a full list, drops a replay
// first (the store took it once already), then the room's own oldest,
// never another room's genuine one.
func (rl *releases) keep(k keptRelease, ok bool) (first bool) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	k.pending = !ok
	if ok {
		// Oldest first: drop those out of the window.
		i := 0
		for i < len(rl.done) && k.at.Sub(rl.done[i].at) > replayWindow {
			i++
		}
		rl.done = rl.done[i:]
		if len(rl.done) >= maxKept {
			rl.done = rl.done[1:]
		}
		rl.done = append(rl.done, k)
		return false
	}
	first = len(rl.pending) == 0
	// The oldest of the room's, of its replays, and of anyone's replays.
	n, mine, myReplay, replayed := 0, -1, -1, -1
	for i, p := range rl.pending {
		if p.room == k.room && p.visitor == k.visitor {
			if ends(p, k) {
				return first
			}
			rl.pending = append(rl.pending[:i], rl.pending[i+1:]...)
			rl.pending = append(rl.pending, k)
			return first
		}
		if p.replay && replayed < 0 {
			replayed = i
		}
		if p.room == k.room {
			if n++; mine < 0 {
				mine = i
			}
			if p.replay && myReplay < 0 {
				myReplay = i
			}
		}
	}
	drop := -1
	switch {
	case n >= maxPendingPerRoom && myReplay >= 0:
		drop = myReplay
	case n >= maxPendingPerRoom:
		drop = mine
	case len(rl.pending) >= maxKept && replayed >= 0:
		drop = replayed
	case len(rl.pending) >= maxKept && mine >= 0:
		drop = mine
	case len(rl.pending) >= maxKept:
		drop = 0 // more rooms at their cap than the list holds: the oldest
	}
	if drop >= 0 {
		rl.pending = append(rl.pending[:drop], rl.pending[drop+1:]...)
	}
	rl.pending = append(rl.pending, k)
	return first
}

// ends reports whether release a ends every session b would: a
// release with no store time ends whatever session runs; of two replays,
// the later store time ends more.
func ends(a, b keptRelease) bool {
	if a.storeAt.IsZero() {
		return !b.storeAt.IsZero()
	}
	return !b.storeAt.IsZero() && !a.storeAt.Before(b.storeAt)
}

// take removes and returns the pending releases of room, and, with
// replay, the recent ones too (which stay kept).
func (rl *releases) take(room string, replay bool, now time.Time) []keptRelease {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	var out []keptRelease
	kept := rl.pending[:0]
	for _, k := range rl.pending {
		switch {
		case now.Sub(k.at) > maxPendingAge:
		case k.room == room:
			out = append(out, k)
		default:
			kept = append(kept, k)
		}
	}
	rl.pending = kept
	if replay {
		for _, k := range rl.done {
			if k.room == room && now.Sub(k.at) <= replayWindow {
				out = append(out, k)
			}
		}
	}
	return out
}

// failoverNoticed reports whether a repair noticed at now is a failover
// not counted yet: one failover repairs every room it touched, each
// noticed by its own tick, so those within replayWindow of the first
// count once.
func (rl *releases) failoverNoticed(now time.Time) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !rl.lastFailover.IsZero() && now.Sub(rl.lastFailover) < replayWindow {
		return false
	}
	rl.lastFailover = now
	return true
}

// noticeStats is the tick's look at a room's repairs: a new incarnation
// (the store lost the room's data) or a repair this instance had not
// seen yet drops the room's session cache; a repair is counted and logged
// once, and the releases of the last moments are applied again, since the
// store may have lost them. The first stats only tell where things stand.
func (rs *Rooms) noticeStats(ctx context.Context, lr *liveRoom, prev, st Stats, first bool) {
	now := time.Now()
	// The incarnation is a ticket number too (every ticket of it is above
	// it): an instance that ticked the room knows it had tickets, even if
	// no visitor of it came through this instance.
	lr.known.see(st.Epoch, now)
	// The store's own high-water marks (Stats.Counter, HighestAdmitted):
	// every instance tells a new master what the old one had as of its
	// last tick. Only a rise is news; an unchanged mark must not keep an
	// old hint fresh.
	lr.known.raiseTo(st.Counter, now)
	lr.admitted.raiseTo(st.HighestAdmitted, now)
	lost := !first && prev.Epoch != 0 && st.Epoch != prev.Epoch
	repaired := !first && st.Epoch == prev.Epoch && st.Repairs > prev.Repairs
	if lost || repaired {
		rs.sessions.Load().dropRoom(lr.name)
	}
	if repaired {
		if rs.releases.failoverNoticed(now) {
			rs.obs.Failover()
		}
		rs.log.Warn("the store lost its last writes (a failover): room repaired; tickets get their places back by number",
			zap.String(fieldRoom, lr.name), zap.Int64("repairs", st.Repairs))
	}
	rs.retryReleases(ctx, lr, repaired || lost, now)
}

// releaseWorkers bounds the releases retryReleases has in flight at once:
// right after a failover each write may wait wait_timeout for a replica
// still resyncing, so one at a time a few dozen would outlast a tick.
const releaseWorkers = 8

// retryReleases applies again the releases of room that the store could
// not take, and with replay those of the last moments, up to
// releaseWorkers at a time.
func (rs *Rooms) retryReleases(ctx context.Context, lr *liveRoom, replay bool, now time.Time) {
	taken := rs.releases.take(lr.name, replay, now)
	if len(taken) == 0 {
		return
	}
	var applied atomic.Int64
	// failed stops the rest at the first failure: a store that is down
	// gets at most releaseWorkers calls a tick, not one per release kept.
	var failed atomic.Bool
	sem := make(chan struct{}, releaseWorkers)
	var wg sync.WaitGroup
	for _, k := range taken {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, failure := rs.retryRelease(ctx, k, now, failed.Load())
			if ok {
				applied.Add(1)
			}
			if failure {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	if n := applied.Load(); n > 0 {
		rs.log.Warn("the store took the releases kept while it could not",
			zap.String(fieldRoom, lr.name), zap.Int64("releases", n))
	}
}

// retryRelease applies one kept release, or keeps it for the next tick
// when skip (an earlier one failed) or the tick ran out. took: a pending
// one the store took now; failed: the store did not answer.
func (rs *Rooms) retryRelease(ctx context.Context, k keptRelease, now time.Time, skip bool) (took, failed bool) {
	if skip || ctx.Err() != nil {
		// The tick ran out: it is tried next tick, a replay too. Dropping
		// a replay left the session it ends holding its slot on the new
		// master until it ran out: right after a failover a tick is slow,
		// so a replay of a few dozen releases outlasts it (chaos
		// sentinel-lag: 15 sessions held against max_active 8,
		// admissions stalled for 12 s).
		k.replay = k.replay || !k.pending
		rs.releases.keep(k, false)
		return false, false
	}
	// A replay ends only a session begun by the time the store took the
	// release (k.storeAt), a replay kept for the next tick too. A release
	// the store never took is unconditional (storeAt zero): there is no
	// store time to compare with, and none is needed: no admission
	// happens while there is no master, the visitor's session still runs
	// in the store meanwhile (so the visitor is not admitted anew), and
	// the first tick that reaches the store after it is back applies it:
	// the session it ends is the one its release was for.
	at, err := rs.store.ReleaseAt(ctx, k.room, k.visitor, k.storeAt)
	switch {
	case err != nil && !errors.Is(err, ErrNotFound):
		// Any failure (no master, the tick's deadline, a refused
		// connection) keeps it: only the store's word ends it.
		k.replay = k.replay || !k.pending
		rs.releases.keep(k, false)
		return false, true
	case k.pending && k.replay:
		if err == nil {
			rs.obs.Restored(rs.labelOf(k.room), "release") // a release the store had lost
		}
	case k.pending:
		// Taken late (ErrNotFound too: the session ended meanwhile);
		// kept as done, so a repair in the next moments applies it again.
		if err == nil {
			rs.obs.Released(rs.labelOf(k.room), k.how)
		}
		rs.releases.keep(keptRelease{room: k.room, visitor: k.visitor, how: k.how, at: now, storeAt: at}, true)
		return true, false
	case err == nil:
		rs.obs.Restored(rs.labelOf(k.room), "release") // a release the store had lost
	}
	// ErrNotFound for a replay: the store has it right already, or the
	// visitor's session began after the release (left alone).
	return false, false
}
