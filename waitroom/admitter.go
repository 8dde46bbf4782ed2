package waitroom

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
)

// Admitter runs a room's admission ticks. Every gateway instance runs one
// per room; the ticker only triggers, and the store decides atomically, so
// any number of instances admit exactly what one would.
type Admitter struct {
	gate *Gate
	ln   *line
	log  *zap.Logger
	// slowLogged is when a tick that ran past its deadline was last
	// logged: under a spike that can happen every tick.
	slowLogged time.Time
}

// Admitters returns one admitter per room.
func (g *Gate) Admitters() []*Admitter {
	out := make([]*Admitter, 0, len(g.rooms))
	for _, ln := range g.rooms {
		out = append(out, &Admitter{gate: g, ln: ln, log: g.log.Named("admitter").With(zap.String(fieldRoom, ln.room.Name))})
	}
	return out
}

// Room names the admitter's room.
func (a *Admitter) Room() string { return a.ln.room.Name }

// Run ticks once at once, then every room tick, until ctx is done. A tick
// that fails or panics is logged and the next one runs as usual.
func (a *Admitter) Run(ctx context.Context) error {
	a.Tick(ctx)
	t := time.NewTicker(a.ln.room.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
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
	// A tick must not outlive the next one: a slow store skips a beat
	// instead of piling ticks up.
	tctx, cancel := context.WithTimeout(ctx, a.ln.room.Tick)
	defer cancel()
	start := time.Now()
	// The override comes from the store every tick, so a change made
	// through any instance applies on every instance within one tick.
	o, err := a.gate.store.Override(tctx, a.ln.room.Name)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	a.ln.setOverride(o)
	lim, ph, _ := a.ln.admission(time.Now())
	if ph == PhaseOpen && a.ln.shuffleSeed.Load() == nil {
		if !a.shuffle(tctx) {
			return
		}
	}
	res, err := a.gate.store.Admit(tctx, a.ln.room.Name, lim)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	if res.Admitted > 0 || res.Abandoned > 0 || res.Expired > 0 {
		a.log.Info("admission tick",
			zap.Int("admitted", res.Admitted), zap.Int("abandoned", res.Abandoned),
			zap.Int("expired", res.Expired), zap.Duration(fieldDuration, time.Since(start)))
	}
	st, err := a.gate.store.Stats(tctx, a.ln.room.Name)
	if err != nil {
		a.failed(ctx, tctx, err)
		return
	}
	a.gate.storeBack()
	a.ln.stats.Store(&st)
	a.ln.hist.add(time.Now(), &st)
	a.ln.measureSpread(time.Now())
	a.gate.obs.Tick(a.ln.room.Name, res)
	a.gate.obs.Room(a.ln.room.Name, st)
	a.gate.obs.StoreUp(true) // from the first tick on, not only after an outage
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
			a.log.Warn("admission tick took longer than the tick; skipped (logged once a minute)", zap.Duration("tick", a.ln.room.Tick), zap.Error(err))
		}
	default:
		a.gate.storeDown(err)
	}
}

// shuffle draws the order of a scheduled sale's pre-queue at its opening:
// every instance asks, the store does it once per opening and answers
// with the seed it used, which is recorded for the audit. It reports
// whether the tick may go on.
func (a *Admitter) shuffle(ctx context.Context) bool {
	key := a.ln.room.Schedule.ShuffleKey()
	if key == "" {
		none := ""
		a.ln.shuffleSeed.Store(&none)
		return true
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	used, n, err := a.gate.store.Shuffle(ctx, a.ln.room.Name, key, hex.EncodeToString(b[:]))
	if err != nil {
		if ctx.Err() == nil {
			a.gate.storeDown(err)
		}
		return false
	}
	a.ln.shuffleSeed.Store(&used)
	if n > 0 {
		a.log.Info("sale opened: pre-queue shuffled", zap.Int("visitors", n), zap.String("seed", used))
	}
	return true
}
