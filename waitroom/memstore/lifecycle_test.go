package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

func TestStore_RenewInterval(t *testing.T) {
	tests := []struct {
		ttl, elapsed time.Duration
		renew        bool
	}{
		{10 * time.Minute, 30 * time.Second, false},
		{10 * time.Minute, time.Minute, false}, // 9m left is TTL - interval: not below
		{10 * time.Minute, time.Minute + time.Nanosecond, true},
		{30 * time.Second, 3 * time.Second, false}, // interval is a tenth of the TTL
		{30 * time.Second, 3*time.Second + 1, true},
		{time.Hour, time.Minute, false}, // interval is at most a minute
		{time.Hour, time.Minute + 1, true},
	}
	for _, tc := range tests {
		f := newFixture(t)
		lim := limits(1)
		lim.SessionTTL = tc.ttl
		v, _ := f.join(lim)
		first := f.decide(lim, v, false) // its first use: the full session
		f.clock.Advance(tc.elapsed)
		d := f.decide(lim, v, false)
		want := first.Until
		if tc.renew {
			want = f.clock.Now().Add(tc.ttl)
		}
		if d.State != waitroom.StateAdmitted || d.Renewed != tc.renew || !d.Until.Equal(want) {
			t.Errorf("TTL %v, %v after admission: %+v, want Renewed=%t until %v", tc.ttl, tc.elapsed, d, tc.renew, want)
		}
		if again := f.decide(lim, v, false); again.Renewed {
			t.Errorf("TTL %v: renewed twice at one instant", tc.ttl)
		}
	}
}

func TestStore_Expiry(t *testing.T) {
	f := newFixture(t)
	lim := limits(1)
	lim.AbandonAfter = time.Hour // b waits without polling
	a, first := f.join(lim)
	b, _ := f.join(lim)
	f.clock.Advance(lim.SessionTTL - time.Nanosecond)
	if st := f.stats(); st.Active != 1 || st.Expired != 0 {
		t.Fatalf("a nanosecond before the end: %+v", st)
	}
	f.clock.Advance(time.Nanosecond) // now == Until: over
	if got := f.admit(lim); got.Expired != 1 || got.Admitted != 1 {
		t.Errorf("tick at Until: %+v, want 1 expired and b admitted", got)
	}
	if d := f.decide(lim, a, false); d.State != waitroom.StateNone {
		t.Errorf("expired visitor without join: %+v, want none", d)
	}
	d := f.decide(lim, a, true)
	if !d.Joined || d.Ticket <= first.Ticket || d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Errorf("expired visitor back: %+v, want a new ticket, waiting behind b's session", d)
	}
	if d := f.decide(lim, b, false); d.State != waitroom.StateAdmitted {
		t.Errorf("b: %v", d.State)
	}
	if st := f.stats(); st.Expired != 1 || st.Joined != 3 {
		t.Errorf("stats %+v, want 1 expired, 3 joined", st)
	}
}

func TestStore_ExpiredSessionFoundByDecide(t *testing.T) {
	f := newFixture(t)
	lim := limits(1)
	a, _ := f.join(lim)
	f.clock.Advance(lim.SessionTTL)
	if d := f.decide(lim, a, true); !d.Joined || d.State != waitroom.StateAdmitted {
		t.Errorf("back after expiry with a free slot: %+v, want a new session", d)
	}
	if st := f.stats(); st.Expired != 1 || st.Joined != 2 || st.Active != 1 {
		t.Errorf("stats %+v, want the old session counted expired", st)
	}
}

func TestStore_Abandonment(t *testing.T) {
	f := newFixture(t)
	lim := limits(0)
	a, _ := f.join(lim)
	b, _ := f.join(lim)
	c, _ := f.join(lim)
	f.clock.Advance(time.Minute)
	f.decide(lim, a, false)
	f.decide(lim, c, false)
	f.clock.Advance(time.Minute) // b unseen for exactly AbandonAfter: kept
	if got := f.admit(lim); got.Abandoned != 0 {
		t.Fatalf("at AbandonAfter: %+v, want nobody dropped", got)
	}
	f.clock.Advance(time.Nanosecond)
	if got := f.admit(lim); got.Abandoned != 1 {
		t.Fatalf("past AbandonAfter: %+v, want b dropped", got)
	}
	if p := f.position(lim, c); p != 2 {
		t.Errorf("c at %d, want 2 once b is gone", p)
	}
	if d := f.decide(lim, b, false); d.State != waitroom.StateNone {
		t.Errorf("b: %v, want none", d.State)
	}
	f.clock.Advance(lim.AbandonAfter + 1) // a and c go quiet too
	if got := f.admit(limits(5)); got.Abandoned != 2 || got.Admitted != 0 {
		t.Errorf("tick with slots free: %+v, want both stale visitors dropped, none admitted", got)
	}
	if st := f.stats(); st.Abandoned != 3 || st.Waiting != 0 || st.AdmittedTotal != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStore_AbandonedHeadIsSkipped(t *testing.T) {
	f := newFixture(t)
	lim := limits(0)
	stale, _ := f.join(lim)
	fresh, _ := f.join(lim)
	f.clock.Advance(lim.AbandonAfter)
	f.decide(lim, fresh, false)
	f.clock.Advance(time.Second)
	if got := f.admit(limits(1)); got.Abandoned != 1 || got.Admitted != 1 {
		t.Fatalf("tick: %+v, want the stale head dropped and the next admitted", got)
	}
	if f.decide(lim, fresh, false).State != waitroom.StateAdmitted || f.decide(lim, stale, false).State != waitroom.StateNone {
		t.Error("the slot went to the wrong visitor")
	}
}

func TestStore_Release(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	lim := limits(1)
	a, _ := f.join(lim)
	b, _ := f.join(lim)
	c, _ := f.join(lim)
	for _, id := range []string{a.ID, b.ID} {
		if err := f.s.Release(ctx, f.room, id); err != nil {
			t.Fatalf("Release(%s): %v", id, err)
		}
	}
	if p := f.position(lim, c); p != 1 {
		t.Errorf("c at %d after b gave up its place, want 1", p)
	}
	for _, tc := range []struct{ room, id string }{{f.room, a.ID}, {f.room, "nobody"}, {"no-such-room", a.ID}} {
		if err := f.s.Release(ctx, tc.room, tc.id); !errors.Is(err, waitroom.ErrNotFound) {
			t.Errorf("Release(%q, %q): %v, want ErrNotFound", tc.room, tc.id, err)
		}
	}
	if st := f.stats(); st.Released != 2 {
		t.Errorf("stats %+v, want 2 released", st)
	}
}

func TestStore_AdmittedLastMinute(t *testing.T) {
	f := newFixture(t)
	lim := limits(100)
	lim.SessionTTL = time.Hour
	join := func(n int) {
		for range n {
			f.join(lim)
		}
	}
	steps := []struct {
		advance time.Duration
		join    int
		want    int64
	}{
		{0, 3, 3},
		{30 * time.Second, 2, 5},
		{29 * time.Second, 0, 5}, // 59s after the first three
		{time.Second, 0, 2},      // 60s: the first second is out
		{30 * time.Second, 0, 0}, // 60s after the last two
		{time.Hour, 1, 1},        // a stale slot of the ring is reused
	}
	for i, s := range steps {
		f.clock.Advance(s.advance)
		join(s.join)
		if st := f.stats(); st.AdmittedLastMinute != s.want {
			t.Errorf("step %d: AdmittedLastMinute %d, want %d", i, st.AdmittedLastMinute, s.want)
		}
	}
}

func TestStore_ClosedAndCanceled(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	s := memstore.New()
	lim := limits(1)
	calls := map[string]func(context.Context) error{
		"Decide": func(ctx context.Context) error {
			_, err := s.Decide(ctx, "r", lim, waitroom.Visitor{ID: "v"}, waitroom.JoinTicket)
			return err
		},
		"Admit":   func(ctx context.Context) error { _, err := s.Admit(ctx, "r", lim); return err },
		"Release": func(ctx context.Context) error { return s.Release(ctx, "r", "v") },
		"Stats":   func(ctx context.Context) error { _, err := s.Stats(ctx, "r"); return err },
		"Ping":    func(ctx context.Context) error { return s.Ping(ctx) },
		"AdmitN":  func(ctx context.Context) error { _, err := s.AdmitN(ctx, "r", lim, 1); return err },
		"SetOverride": func(ctx context.Context) error {
			return s.SetOverride(ctx, "r", waitroom.Override{Mode: waitroom.ModePaused})
		},
		"ClearOverride": func(ctx context.Context) error { return s.ClearOverride(ctx, "r") },
		"Override":      func(ctx context.Context) error { _, err := s.Override(ctx, "r"); return err },
	}
	for name, call := range calls {
		if err := call(canceled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v", name, err)
		}
	}
	if st, _ := s.Stats(context.Background(), "r"); st != (waitroom.Stats{}) {
		t.Errorf("a canceled Decide changed the room: %+v", st)
	}
	if o, _ := s.Override(context.Background(), "r"); !o.IsZero() {
		t.Errorf("a canceled SetOverride changed the room: %+v", o)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	for range 2 {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	for name, call := range calls {
		if err := call(context.Background()); !errors.Is(err, waitroom.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestStore_ClockSteppingBackStandsStill(t *testing.T) {
	f := newFixture(t)
	lim := limits(2)
	t0 := f.clock.Now()
	f.join(lim)
	f.clock.Advance(-time.Hour)
	// Let in at once: the first session, as short as an abandoned place.
	if _, d := f.join(lim); !d.Until.Equal(t0.Add(lim.AbandonAfter)) {
		t.Errorf("admitted while the clock reads an hour back: Until %v, want %v", d.Until, t0.Add(lim.AbandonAfter))
	}
	f.join(limits(0)) // waits, seen at t0 rather than an hour before
	f.clock.Advance(time.Hour + lim.AbandonAfter)
	if got := f.admit(limits(0)); got.Abandoned != 0 {
		t.Errorf("tick AbandonAfter past t0: %+v, want nobody dropped", got)
	}
}
