package memstore_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// clock is a fake clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixture is a store on a fake clock, one room, and helpers that fail the
// test on any error.
type fixture struct {
	t     *testing.T
	clock *clock
	s     *memstore.Store
	room  string
}

var ids atomic.Int64

// visitorID is unique per test binary; memstore does not care about the
// shape of ids.
func visitorID() string { return "visitor-" + strconv.FormatInt(ids.Add(1), 10) }

func newFixture(t *testing.T) *fixture {
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	t.Cleanup(func() { _ = s.Close() })
	return &fixture{t: t, clock: c, s: s, room: "concert"}
}

// limits: no rate limit, 10 minute sessions, 2 minute abandonment.
func limits(maxActive int) waitroom.Limits {
	return waitroom.Limits{MaxActive: maxActive, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 2 * time.Minute}
}

// decide asks about v; join true hands a newcomer a ticket and, as a
// browser's next request would, brings it back to take its place.
func (f *fixture) decide(lim waitroom.Limits, v waitroom.Visitor, join bool) waitroom.Decision {
	f.t.Helper()
	j := waitroom.JoinNone
	if join {
		j = waitroom.JoinTicket
	}
	if v.Seen.IsZero() {
		v.Seen = f.clock.Now()
	}
	d, err := f.s.Decide(context.Background(), f.room, lim, v, j)
	if err != nil {
		f.t.Fatalf("Decide: %v", err)
	}
	if join && d.State == waitroom.StateWaiting && !d.Placed {
		v.Ticket, v.Issued = d.Ticket, f.clock.Now()
		if d, err = f.s.Decide(context.Background(), f.room, lim, v, waitroom.JoinNone); err != nil {
			f.t.Fatalf("Decide: %v", err)
		}
	}
	return d
}

// join brings in a new visitor and returns it with its ticket.
func (f *fixture) join(lim waitroom.Limits) (waitroom.Visitor, waitroom.Decision) {
	f.t.Helper()
	v := waitroom.Visitor{ID: visitorID()}
	d := f.decide(lim, v, true)
	v.Ticket = d.Ticket
	return v, d
}

func (f *fixture) admit(lim waitroom.Limits) waitroom.Admitted {
	f.t.Helper()
	a, err := f.s.Admit(context.Background(), f.room, lim)
	if err != nil {
		f.t.Fatalf("Admit: %v", err)
	}
	return a
}

func (f *fixture) stats() waitroom.Stats {
	f.t.Helper()
	st, err := f.s.Stats(context.Background(), f.room)
	if err != nil {
		f.t.Fatalf("Stats: %v", err)
	}
	if sum := st.Waiting + st.Active + st.Released + st.Expired + st.Abandoned; sum != st.Joined {
		f.t.Errorf("stats %+v do not balance: %d joined, %d accounted for", st, st.Joined, sum)
	}
	return st
}

func (f *fixture) position(lim waitroom.Limits, v waitroom.Visitor) int64 {
	f.t.Helper()
	d := f.decide(lim, v, false)
	if d.State != waitroom.StateWaiting {
		f.t.Fatalf("visitor %s: %v, want waiting", v.ID, d.State)
	}
	return d.Position
}

func TestStore_TicketsSeededFromClock(t *testing.T) {
	f := newFixture(t)
	seed := f.clock.Now().UnixMicro()
	lim := limits(1)
	_, first := f.join(lim) // admitted at once: still takes a ticket
	f.clock.Advance(time.Minute)
	_, second := f.join(lim)
	if first.State != waitroom.StateAdmitted || first.Ticket != seed+1 {
		t.Errorf("first join: %+v, want admitted on ticket %d", first, seed+1)
	}
	if second.State != waitroom.StateWaiting || second.Ticket != seed+2 {
		t.Errorf("second join: %+v, want waiting on ticket %d: the counter is seeded once", second, seed+2)
	}
	f.room = "other" // a room created later starts from the clock then
	if _, d := f.join(lim); d.Ticket != f.clock.Now().UnixMicro()+1 {
		t.Errorf("later room's first ticket %d, want %d", d.Ticket, f.clock.Now().UnixMicro()+1)
	}
}

func TestStore_ImmediateAdmission(t *testing.T) {
	f := newFixture(t)
	lim := limits(1)
	v, d := f.join(lim)
	// In at once, on the short first session a tick gives: a request that
	// never comes back frees the slot as soon as an abandoned place would.
	want := waitroom.Decision{State: waitroom.StateAdmitted, Ticket: v.Ticket, Until: f.clock.Now().Add(lim.AbandonAfter), Joined: true, Placed: true}
	if d != want {
		t.Errorf("got %+v, want %+v", d, want)
	}
	want.Joined, want.Renewed, want.Until = false, true, f.clock.Now().Add(lim.SessionTTL)
	if again := f.decide(lim, v, true); again != want {
		t.Errorf("next request: got %+v, want %+v (slid to the full session)", again, want)
	}
	if st := f.stats(); st.Joined != 1 || st.AdmittedTotal != 1 || st.AdmittedLastMinute != 1 || st.Active != 1 {
		t.Errorf("stats %+v, want the immediate admission counted as joined and admitted", st)
	}
}

func TestStore_BucketRefill(t *testing.T) {
	f := newFixture(t)
	lim := limits(100)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 60, Per: time.Minute}, 3
	lim.AbandonAfter = 2 * time.Hour // nobody polls here
	for i := range 10 {
		if _, d := f.join(lim); (d.State == waitroom.StateAdmitted) != (i < 3) {
			t.Fatalf("join %d: %v; the bucket starts full with 3 tokens", i, d.State)
		}
	}
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 0},
		{999 * time.Millisecond, 0}, // 0.999 tokens
		{time.Millisecond, 1},       // 1.0
		{500 * time.Millisecond, 0}, // 0.5
		{500 * time.Millisecond, 1}, // 1.0
		{time.Hour, 3},              // capped at the burst
		{0, 0},
	}
	for i, s := range steps {
		f.clock.Advance(s.advance)
		if got := f.admit(lim); got.Admitted != s.want {
			t.Fatalf("step %d (+%v): admitted %d, want %d", i, s.advance, got.Admitted, s.want)
		}
	}
}

func TestStore_BucketWholeTokensExact(t *testing.T) {
	f := newFixture(t)
	lim := limits(100)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 300, Per: time.Minute}, 1
	f.join(lim) // spends the token
	for range 3 {
		f.join(lim)
	}
	for i := range 3 {
		f.clock.Advance(200 * time.Millisecond) // 300/m is one token per 200ms
		if got := f.admit(lim); got.Admitted != 1 {
			t.Fatalf("tick %d: admitted %d, want 1", i, got.Admitted)
		}
	}
}

func TestStore_ImmediateAdmissionRefillsFirst(t *testing.T) {
	f := newFixture(t)
	lim := limits(100)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 1, Per: time.Second}, 1
	if _, d := f.join(lim); d.State != waitroom.StateAdmitted {
		t.Fatalf("first: %v", d.State)
	}
	f.clock.Advance(time.Second)
	if _, d := f.join(lim); d.State != waitroom.StateAdmitted {
		t.Errorf("a second later, with a token earned and nobody waiting: %v, want admitted", d.State)
	}
	if _, d := f.join(lim); d.State != waitroom.StateWaiting {
		t.Errorf("no token left: %v, want waiting", d.State)
	}
}

func TestStore_UnlimitedRateFillsEverySlot(t *testing.T) {
	f := newFixture(t)
	for range 7 {
		f.join(limits(0))
	}
	if got := f.admit(limits(5)); got.Admitted != 5 {
		t.Errorf("admitted %d in one tick, want all 5 slots", got.Admitted)
	}
	if got := f.admit(limits(5)); got.Admitted != 0 {
		t.Errorf("admitted %d with no slot free", got.Admitted)
	}
}

func TestStore_NoImmediateAdmissionPastTheLine(t *testing.T) {
	f := newFixture(t)
	lim := limits(1)
	a, _ := f.join(lim)
	b, _ := f.join(lim)
	if err := f.s.Release(context.Background(), f.room, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, d := f.join(lim); d.State != waitroom.StateWaiting || d.Position != 2 {
		t.Errorf("newcomer with a slot free but b waiting: %+v, want waiting behind b", d)
	}
	if got := f.admit(lim); got.Admitted != 1 || f.decide(lim, b, false).State != waitroom.StateAdmitted {
		t.Errorf("the tick admitted %+v, want b", got)
	}
}

func TestStore_IdempotentJoin(t *testing.T) {
	f := newFixture(t)
	lim := limits(0)
	a, first := f.join(lim)
	f.join(lim)
	for _, ticket := range []int64{a.Ticket, 0, 1, a.Ticket + 99} {
		d := f.decide(lim, waitroom.Visitor{ID: a.ID, Ticket: ticket}, true)
		if d.Joined || d.Ticket != first.Ticket || d.Position != 1 || d.Line != 2 {
			t.Errorf("join again showing ticket %d: %+v, want the same place", ticket, d)
		}
	}
	if st := f.stats(); st.Joined != 2 {
		t.Errorf("joined %d, want 2", st.Joined)
	}
}
