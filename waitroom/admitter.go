package waitroom

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Run runs one admitter per room in service until ctx is done, starting
// and stopping them as Apply adds and removes rooms. The admitters of rooms
// a reload keeps run on without a break, on the new settings.
func (rs *Rooms) Run(ctx context.Context) error {
	running := map[*liveRoom]context.CancelFunc{}
	var wg sync.WaitGroup
	sweep := time.NewTicker(templateClock)
	defer sweep.Stop()
	for {
		live := *rs.live.Load()
		for _, lr := range live {
			if running[lr] == nil {
				actx, cancel := context.WithCancel(ctx)
				running[lr] = cancel
				ad := rs.admitter(lr)
				wg.Go(func() { _ = ad.Run(actx) })
			}
		}
		for lr, cancel := range running {
			if live[lr.name] != lr {
				cancel()
				delete(running, lr)
			}
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-rs.changed:
		case <-sweep.C:
			rs.sweepTemplates(ctx)
		}
	}
}

// Admitter runs a room's admission ticks. Every gateway instance runs one
// per room; the ticker only triggers, and the store decides atomically, so
// any number of instances admit exactly what one would.
type Admitter struct {
	rs  *Rooms
	lr  *liveRoom
	log *zap.Logger
	// slowLogged is when a tick that ran past its deadline was last
	// logged: under a spike that can happen every tick.
	slowLogged time.Time
}

// Admitter returns an admitter for the room; ok is false for a room not in
// service. Run starts one per room by itself.
func (rs *Rooms) Admitter(room string) (*Admitter, bool) {
	lr := rs.get(room)
	if lr == nil {
		return nil, false
	}
	return rs.admitter(lr), true
}

func (rs *Rooms) admitter(lr *liveRoom) *Admitter {
	return &Admitter{rs: rs, lr: lr, log: rs.log.Named("admitter").With(zap.String(fieldRoom, lr.name))}
}

// Run ticks once at once, then every room tick, until ctx is done. A tick
// that fails or panics is logged and the next one runs as usual. A reload
// that changes the room's tick takes effect at the next tick. A sleeping
// room (sleep.go) skips its ticks until a request wakes it. Once ctx is
// done, a room no longer in service is forgotten by the observer, so its
// metric series go with it.
func (a *Admitter) Run(ctx context.Context) error {
	defer func() {
		// A filled room's series are its template's, which live on.
		if a.rs.get(a.lr.name) != a.lr && !a.lr.filled() {
			a.rs.obs.Forget(a.lr.name)
		}
	}()
	a.Tick(ctx)
	every := a.lr.room().Tick
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if a.lr.asleep.Load() {
				continue // nobody waits and nobody is inside: see sleep.go
			}
			a.Tick(ctx)
			if d := a.lr.room().Tick; d != every {
				every = d
				t.Reset(every)
			}
		case <-a.lr.wake:
			a.Tick(ctx)
		}
	}
}

// Tick runs one admission round and refreshes the room's stats snapshot,
// which the waiting pages read for their estimates.
func (a *Admitter) Tick(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("admission tick panicked", zap.String("panic", fmt.Sprint(p)), zap.ByteString("stack", debug.Stack()))
		}
	}()
	room, store := a.lr.room(), a.rs.store
	seen := a.lr.visits.Load()
	// A tick must not outlive the next one: a slow store skips a beat
	// instead of piling ticks up.
	tctx, cancel := context.WithTimeout(ctx, room.Tick)
	defer cancel()
	start := time.Now()
	// The override comes from the store every tick, so a change made
	// through any instance applies on every instance within one tick.
	o, err := store.Override(tctx, a.lr.name)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	before := a.lr.eff.Load()
	a.lr.setOverride(o)
	a.autopilot(tctx, o)
	if a.lr.overrideRead.Swap(true) {
		a.rs.noticeMode(a.lr.name, before, a.lr.eff.Load())
	}
	lim, ph, _ := a.lr.admission(time.Now())
	if ph == PhaseOpen && a.lr.shuffleSeed.Load() == nil {
		if !a.shuffle(tctx, room) {
			return
		}
	}
	// Releases the store could not take (no master, or a tick that ran
	// out while applying them) go before the admission, so it sees the
	// slots they free; within half the tick, so that a thousand kept
	// leaves each waiting for a replica still resyncing never starve the
	// admission itself (the rest go next tick).
	rctx, rcancel := context.WithTimeout(tctx, a.lr.room().Tick/2)
	a.rs.retryReleases(rctx, a.lr, false, time.Now())
	rcancel()
	// The marks of the polls answered from anchors go first, so the
	// tick's abandonment sees them.
	if vs := a.lr.marks.take(); len(vs) > 0 {
		if err := store.Touch(tctx, a.lr.name, lim, vs); err != nil {
			a.lr.marks.putBack(vs)
			a.failed(ctx, tctx, err)
			return
		}
	}
	// The places of the tickets that came back in a batched room, before
	// the admission, so the tick lets them in in their turn.
	if err := a.placeJoins(tctx, lim); err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	actx := tctx
	if !lim.Random {
		// The admissions this instance saw, so a store that lost some
		// puts them back (Visitor.KnownAdmitted).
		actx = WithKnownAdmitted(tctx, a.lr.admitted.hint(time.Now(), lim))
	}
	res, err := store.Admit(actx, a.lr.name, lim)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	if !lim.Random {
		a.lr.admitted.see(res.Highest, time.Now())
		a.lr.known.see(res.Highest, time.Now()) // a ticket admitted is a ticket seen
	}
	for range res.Readmitted {
		a.rs.obs.Restored(a.lr.label(), "inside") // admissions the store had lost
	}
	if res.Admitted > 0 || res.Abandoned > 0 || res.Expired > 0 {
		a.log.Info("admission tick",
			zap.Int("admitted", res.Admitted), zap.Int("abandoned", res.Abandoned),
			zap.Int("expired", res.Expired), zap.Duration(fieldDuration, time.Since(start)))
	}
	st, err := store.Stats(tctx, a.lr.name)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	a.rs.health.answered()
	var left *leftTickets
	lastView := a.lr.view.Load()
	if lastView != nil {
		left = lastView.left
	}
	left = nextLeft(left, st, anchorKeep(lim), time.Now())
	prev := a.lr.stats.Load()
	first := !a.lr.ticked.Swap(true)
	a.lr.view.Store(&progressView{progress: st.Progress(), waiting: st.Waiting, at: time.Now(), left: left,
		mintedBy: nextMintedBy(lastView, *prev, st, first, time.Now()), head: headOf(st), low: st.Low, floor: st.Floor})
	a.rs.noticeStats(tctx, a.lr, *prev, st, first)
	a.rs.noticeLine(a.lr.name, *prev, st, first)
	a.lr.sampled(time.Now(), st)
	a.rs.obs.Tick(a.lr.label(), res)
	if !a.lr.filled() {
		a.rs.obs.Room(a.lr.name, st) // a template's sum is sweepTemplates'
	}
	a.rs.obs.StoreUp(true) // from the first tick on, not only after an outage
	a.rest(seen, st)
}

// failed handles a store error in a tick. A shutdown is no failure. A tick
// that ran out of its own time (a store slowed by a spike, or a gateway
// short of CPU) is skipped and the next one catches up: the store answered
// the visitors' requests all along, so it is not an outage, and calling it
// one would flip store_up and count outages that never were. Anything
// else is the store failing.
func (a *Admitter) failed(ctx, tctx context.Context, err error) {
	switch {
	case ctx.Err() != nil:
	case tctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		if now := time.Now(); now.Sub(a.slowLogged) >= time.Minute {
			a.slowLogged = now
			a.log.Warn("admission tick took longer than the tick; skipped (logged once a minute)", zap.Duration("tick", a.lr.room().Tick), zap.Error(err))
		}
	default:
		a.freeze()
		a.rs.health.failed(err)
	}
}

// shuffle draws the order of a scheduled sale's pre-queue at its opening:
// every instance asks, the store does it once per opening and answers
// with the seed it used, which is recorded for the audit. It reports
// whether the tick may go on.
func (a *Admitter) shuffle(ctx context.Context, room *Room) bool {
	key := room.Schedule.ShuffleKey()
	if key == "" {
		none := ""
		a.lr.shuffleSeed.Store(&none)
		return true
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	used, n, err := a.rs.store.Shuffle(ctx, a.lr.name, key, hex.EncodeToString(b[:]))
	if err != nil {
		if ctx.Err() == nil {
			a.rs.health.failed(err)
		}
		return false
	}
	a.lr.shuffleSeed.Store(&used)
	if n > 0 {
		a.log.Info("sale opened: pre-queue shuffled", zap.Int("visitors", n), zap.String("seed", used))
	}
	return true
}
