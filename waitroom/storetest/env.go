package storetest

import (
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// clockSlack absorbs the resolution of a store's clock (Redis stores times in
// milliseconds) in comparisons between its times and ours. Both run on one
// host, so there is no skew to allow for.
const clockSlack = 5 * time.Millisecond

// deadline bounds every wait for something that must happen eventually; it
// is generous because a loaded CI machine running -race is slow.
const deadline = 15 * time.Second

// env is one subtest's backend and room.
type env struct {
	t         *testing.T
	newStores NewFunc
	stores    []waitroom.Store
	room      string
	next      atomic.Uint64 // round robin over stores
}

func newEnv(t *testing.T, newStores NewFunc, n int) *env {
	stores := newStores(t, n)
	if len(stores) != n {
		t.Fatalf("NewFunc returned %d stores, want %d", len(stores), n)
	}
	return &env{t: t, newStores: newStores, stores: stores, room: roomName(t)}
}

// beside is another room on the same stores, named after e's.
func (e *env) beside(suffix string) *env {
	return &env{t: e.t, newStores: e.newStores, stores: e.stores, room: e.room + "-" + suffix}
}

// roomName is unique per subtest and run, and safe in a Redis key.
func roomName(t *testing.T) string {
	name := strings.NewReplacer("/", "-", "=", "").Replace(t.Name())
	return fmt.Sprintf("%s-%08x", name, rand.Uint32())
}

// newVisitorID makes an id shaped like a real one: 128 random bits, 22
// characters of base64url.
func newVisitorID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// store returns the next instance, so consecutive calls spread over all.
func (e *env) store() waitroom.Store {
	return e.stores[(e.next.Add(1)-1)%uint64(len(e.stores))]
}

// limits are a room with no rate limit, whose sessions and places last far
// longer than any subtest unless it says otherwise.
func limits(maxActive int) waitroom.Limits {
	return waitroom.Limits{MaxActive: maxActive, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
}

// decide asks the store about v; join true hands a newcomer a ticket
// (waitroom.JoinTicket), false never (waitroom.JoinNone).
func (e *env) decide(lim waitroom.Limits, v waitroom.Visitor, join bool) waitroom.Decision {
	e.t.Helper()
	j := waitroom.JoinNone
	if join {
		j = waitroom.JoinTicket
	}
	d, err := e.store().Decide(context.Background(), e.room, lim, v, j)
	if err != nil {
		e.t.Fatalf("Decide(%s, join=%t): %v", v.ID, join, err)
	}
	return d
}

// join brings in a new visitor as a browser does: the first request hands
// it a ticket (or a session at once), the next one brings the ticket back
// and takes its place. It returns the visitor as its cookie then says and
// the second decision.
func (e *env) join(lim waitroom.Limits) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	v, d := e.issue(lim)
	if d.State == waitroom.StateAdmitted {
		return v, d
	}
	return e.place(lim, v)
}

// issue is a newcomer's first request: a ticket, not yet a place.
func (e *env) issue(lim waitroom.Limits) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	// Seen is the ticket's seal, which a gate renews as its holder polls.
	v := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now(), Seen: time.Now()}
	d := e.decide(lim, v, true)
	if !d.Joined || d.Ticket == 0 {
		e.t.Fatalf("new visitor: got %+v, want Joined with a ticket", d)
	}
	v.Ticket, v.Placed = d.Ticket, d.Placed
	return v, d
}

// place brings an unplaced ticket back, which must take its place.
func (e *env) place(lim waitroom.Limits, v waitroom.Visitor) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	d := e.decide(lim, v, false)
	if !d.Placed || (d.State == waitroom.StateWaiting && (d.Ticket != v.Ticket || !d.Joined)) {
		e.t.Fatalf("ticket %d brought back: got %+v, want its place", v.Ticket, d)
	}
	v.Placed = true
	return v, d
}

// wait joins a visitor that must be put in line.
func (e *env) wait(lim waitroom.Limits) waitroom.Visitor {
	e.t.Helper()
	v, d := e.join(lim)
	if d.State != waitroom.StateWaiting {
		e.t.Fatalf("new visitor: got state %v, want waiting", d.State)
	}
	return v
}

// enter joins a visitor that must be admitted at once, and uses its
// session once, as the page it was let in to would: an admission at once
// is short until used (see Store.Decide).
func (e *env) enter(lim waitroom.Limits) waitroom.Visitor {
	e.t.Helper()
	v, d := e.join(lim)
	if d.State != waitroom.StateAdmitted {
		e.t.Fatalf("new visitor: got state %v, want admitted", d.State)
	}
	v.Until, v.Entered = d.Until, time.Now() // as the gate seals it
	if d = e.decide(lim, v, false); d.State != waitroom.StateAdmitted {
		e.t.Fatalf("admitted visitor's next request: got state %v, want admitted", d.State)
	}
	v.Until = d.Until
	return v
}

// expect asserts a visitor's state and, when waiting, its position.
func (e *env) expect(lim waitroom.Limits, v waitroom.Visitor, state waitroom.State, position int64) waitroom.Decision {
	e.t.Helper()
	d := e.decide(lim, v, false)
	if d.State != state || (state == waitroom.StateWaiting && d.Position != position) {
		e.t.Fatalf("visitor %s: got %v at position %d, want %v at %d", v.ID, d.State, d.Position, state, position)
	}
	return d
}

func (e *env) admit(lim waitroom.Limits) waitroom.Admitted {
	e.t.Helper()
	a, err := e.store().Admit(context.Background(), e.room, lim)
	if err != nil {
		e.t.Fatalf("Admit: %v", err)
	}
	return a
}

func (e *env) release(id string) error {
	return e.store().Release(context.Background(), e.room, id)
}

func (e *env) mustRelease(id string) {
	e.t.Helper()
	if err := e.release(id); err != nil {
		e.t.Fatalf("Release(%s): %v", id, err)
	}
}

func (e *env) stats() waitroom.Stats {
	e.t.Helper()
	st, err := e.store().Stats(context.Background(), e.room)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	checkConserved(e.t, st)
	return st
}

// checkConserved holds a snapshot to the books balancing: everyone who ever
// joined is waiting, inside, or left in one of three counted ways.
func checkConserved(tb testing.TB, st waitroom.Stats) {
	tb.Helper()
	if sum := st.Waiting + st.Active + st.Released + st.Expired + st.Abandoned; st.Joined != sum {
		tb.Errorf("stats %+v: Joined %d != Waiting+Active+Released+Expired+Abandoned %d", st, st.Joined, sum)
	}
}

// background runs fn every period in its own goroutine until the returned
// stop is called; stop waits for it to finish. fn must not call t.Fatal.
func background(period time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			fn()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// tickers runs an admission loop on every instance, as every gateway does.
func (e *env) tickers(lim waitroom.Limits, period time.Duration) (stop func()) {
	stops := make([]func(), len(e.stores))
	for i, s := range e.stores {
		stops[i] = background(period, func() {
			if _, err := s.Admit(context.Background(), e.room, lim); err != nil {
				e.t.Errorf("Admit on instance %d: %v", i, err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// jitter returns a random duration in [0, d).
func jitter(d time.Duration) time.Duration {
	return rand.N(d)
}

// isNotFound reports whether err is the store's "no such visitor".
func isNotFound(err error) bool { return errors.Is(err, waitroom.ErrNotFound) }
