package storetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testUnknownWithoutJoin: asked not to join, the store answers "none" for a
// visitor it does not know, whatever ticket it shows, and records nothing.
func testUnknownWithoutJoin(t *testing.T, e *env) {
	lim := limits(0)
	strangers := []waitroom.Visitor{{ID: newVisitorID()}, {ID: newVisitorID(), Ticket: 42}}
	for _, v := range strangers {
		if d := e.decide(lim, v, false); d != (waitroom.Decision{}) {
			t.Errorf("unknown visitor %+v without join: got %+v, want the zero Decision", v, d)
		}
	}
	// MeasuredOver is the room's age and Epoch its incarnation, which a
	// store may start at the first lookup, its counter with it (no ticket
	// handed out yet), and Low and Floor just past it; every count must
	// be zero.
	if st := e.stats(); st.MeasuredOver > time.Minute || st.Counter != 0 && st.Counter != st.Epoch ||
		st.Low != st.Floor || st.Low != 0 && st.Low != st.Epoch+1 ||
		(st != waitroom.Stats{MeasuredOver: st.MeasuredOver, Epoch: st.Epoch, Counter: st.Counter, Low: st.Low, Floor: st.Floor}) {
		t.Errorf("stats %+v after lookups only, want all zero", st)
	}
	e.wait(lim)
	for _, v := range strangers {
		if d := e.decide(lim, v, false); d.State != waitroom.StateNone {
			t.Errorf("unknown visitor %+v without join: got %+v, want none", v, d)
		}
	}
	if st := e.stats(); st.Joined != 1 || st.Waiting != 1 {
		t.Errorf("stats %+v, want 1 joined, 1 waiting", st)
	}
}

// testConservation: a crowd that waits, leaves, goes quiet and gets in,
// with every instance ticking. Every snapshot balances (Joined = Waiting +
// Active + Released + Expired + Abandoned); the totals match what the
// visitors were told; once time runs out on everyone, nobody is left.
func testConservation(t *testing.T, e *env) {
	const visitors = 24
	lim := limits(3)
	lim.SessionTTL, lim.AbandonAfter = 150*time.Millisecond, 150*time.Millisecond
	var joined, released atomic.Int64
	stopTickers := e.tickers(lim, 5*time.Millisecond)
	stopSampler := background(2*time.Millisecond, func() {
		st, err := e.store().Stats(context.Background(), e.room)
		if err != nil {
			e.t.Errorf("Stats: %v", err)
			return
		}
		checkConserved(e.t, st)
	})
	var wg sync.WaitGroup
	for i := range visitors {
		wg.Go(func() {
			time.Sleep(jitter(100 * time.Millisecond))
			e.behave(lim, crowd[i%len(crowd)], &joined, &released)
		})
	}
	wg.Wait()
	stopTickers()
	// Leave some inside and some in line, then let time run out on them.
	for range lim.MaxActive + 2 {
		e.join(lim)
		joined.Add(1)
	}
	time.Sleep(max(lim.SessionTTL, lim.AbandonAfter) + 100*time.Millisecond)
	e.admit(lim)
	stopSampler()
	st := e.stats()
	if st.Waiting != 0 || st.Active != 0 || st.Joined != joined.Load() || st.Released != released.Load() {
		t.Errorf("stats %+v, want nobody left, %d joined, %d released", st, joined.Load(), released.Load())
	}
	if st.Expired < 1 || st.Abandoned < 2 {
		t.Errorf("stats %+v, want the last ones counted: at least 1 expired, 2 abandoned", st)
	}
}

// manner is how a visitor of the crowd behaves: it polls until admitted (or
// for a few polls), then stays for some polls, then leaves or goes quiet.
type manner struct {
	untilAdmitted bool
	polls         int // polls before acting, when not waiting for admission
	leaves        bool
}

var crowd = []manner{
	{untilAdmitted: true, polls: 2, leaves: true}, // patient
	{polls: 2},                      // quits while waiting: abandoned
	{polls: 3, leaves: true},        // gives up its place
	{untilAdmitted: true},           // gets in, then goes quiet: expires
	{untilAdmitted: true, polls: 1}, // as above, after one more request
}

// behave plays one visitor of the crowd. Every request asks to join, as the
// gate's do, so a visitor who lost its place takes a new one; joined and
// released count what the store said.
func (e *env) behave(lim waitroom.Limits, m manner, joined, released *atomic.Int64) {
	ctx := context.Background()
	v := waitroom.Visitor{ID: newVisitorID()}
	polls, admitted := m.polls+rand.IntN(2), false
	for stop := time.Now().Add(deadline); time.Now().Before(stop); {
		d, err := e.store().Decide(ctx, e.room, lim, v, waitroom.JoinTicket)
		if err != nil {
			e.t.Errorf("Decide(%s): %v", v.ID, err)
			return
		}
		if d.Joined && d.Placed {
			joined.Add(1) // a place or a session: what Stats.Joined counts
		}
		if d.Joined {
			// What its cookie carries now.
			v.Ticket, v.Placed, v.Issued, v.Seen = d.Ticket, d.Placed, time.Now(), time.Now()
		}
		admitted = admitted || d.State == waitroom.StateAdmitted
		if !m.untilAdmitted || admitted {
			if polls--; polls < 0 {
				break
			}
		}
		time.Sleep(2*time.Millisecond + jitter(8*time.Millisecond))
	}
	if m.untilAdmitted && !admitted {
		e.t.Errorf("visitor %s not admitted within %v", v.ID, deadline)
	}
	if !m.leaves {
		return
	}
	switch err := e.store().Release(ctx, e.room, v.ID); {
	case err == nil:
		released.Add(1)
	case !isNotFound(err):
		e.t.Errorf("Release(%s): %v", v.ID, err)
	}
}

// testAdmittedLastMinute: the measured rate counts every admission, those
// made at once included, and is not lowered by leaving.
func testAdmittedLastMinute(t *testing.T, e *env) {
	lim := limits(3)
	var first waitroom.Visitor
	for i := range 5 {
		v, _ := e.join(lim)
		if i == 0 {
			first = v
		}
	}
	if st := e.stats(); st.AdmittedLastMinute != 3 || st.AdmittedTotal != 3 {
		t.Errorf("after 3 immediate admissions: %+v", st)
	}
	if got := e.admit(limits(5)); got.Admitted != 2 {
		t.Fatalf("Admit into 2 free slots: %+v", got)
	}
	e.mustRelease(first.ID)
	if st := e.stats(); st.AdmittedLastMinute != 5 || st.AdmittedTotal != 5 {
		t.Errorf("after 2 more admissions and a release: %+v, want 5 in the last minute", st)
	}
}

// testPing: every instance answers.
func testPing(t *testing.T, e *env) {
	for i, s := range e.stores {
		if err := s.Ping(context.Background()); err != nil {
			t.Errorf("Ping on instance %d: %v", i, err)
		}
	}
}

// testHead: Stats.Head lists the line's first tickets in order, each at
// the position the store tells its holder, at most MaxHead of them; none
// while a ticket handed out below the last of them may still come back;
// one let in leaves it, and the next tick's view starts at the new first.
func testHead(t *testing.T, e *env) {
	lim := limits(1)
	in := e.enter(lim)
	vs := e.waitMany(lim, 3)
	checkHead(t, e, lim, vs)
	late, _ := e.issue(lim) // handed out, not brought back yet
	vs = append(vs, e.wait(lim))
	if st := e.stats(); st.Head != ([waitroom.MaxHead]int64{}) {
		t.Fatalf("head %v with a ticket pending below its last, want none", st.Head[:5])
	}
	late, _ = e.place(lim, late)
	vs = append(vs[:3], late, vs[3])
	checkHead(t, e, lim, vs)
	if err := e.release(in.ID); err != nil {
		t.Fatal(err)
	}
	if a := e.admit(lim); a.Admitted != 1 {
		t.Fatalf("admit: %+v, want 1 let in", a)
	}
	checkHead(t, e, lim, vs[1:])
	vs = append(vs[1:], e.waitMany(lim, waitroom.MaxHead)...)
	checkHead(t, e, lim, vs[:waitroom.MaxHead])
}

// checkHead checks that Stats.Head is the tickets of vs in order, and that
// the store tells each of vs the position it has there.
func checkHead(t *testing.T, e *env, lim waitroom.Limits, vs []waitroom.Visitor) {
	t.Helper()
	var want [waitroom.MaxHead]int64
	for i, v := range vs {
		want[i] = v.Ticket
	}
	st := e.stats()
	if st.Head != want {
		n := min(len(vs)+1, waitroom.MaxHead)
		t.Fatalf("head %v, want %v", st.Head[:n], want[:n])
	}
	for i, v := range vs {
		e.expect(lim, v, waitroom.StateWaiting, int64(i+1))
	}
}
