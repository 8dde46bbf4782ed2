package storetest

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testFIFO: visitors who keep polling go in in ticket order, each once. With
// one slot the order is observed directly (the next goes in only after the
// last left); with several, each visitor checks on admission that nobody
// ahead of it still waits.
func testFIFO(t *testing.T, e *env, slots int) {
	const visitors = 16
	lim := limits(slots)
	holders := make([]waitroom.Visitor, slots)
	for i := range holders {
		holders[i] = e.enter(lim) // fill every slot, so the rest queue
	}
	line := make([]waitroom.Visitor, visitors)
	for i := range line {
		line[i] = e.wait(lim)
		if i > 0 && line[i].Ticket <= line[i-1].Ticket {
			t.Fatalf("ticket %d after %d: tickets must grow in arrival order", line[i].Ticket, line[i-1].Ticket)
		}
		e.expect(lim, line[i], waitroom.StateWaiting, int64(i+1))
	}
	for _, h := range holders {
		e.mustRelease(h.ID)
	}
	var mu sync.Mutex
	var order []int64
	admitted := func(ticket int64) { mu.Lock(); order = append(order, ticket); mu.Unlock() }
	stopTickers := e.tickers(lim, 3*time.Millisecond)
	var wg sync.WaitGroup
	for i, v := range line {
		wg.Go(func() { e.queueUp(lim, v, line[:i], admitted) })
	}
	wg.Wait()
	stopTickers()
	if t.Failed() {
		return
	}
	if slots == 1 && !slices.IsSorted(order) {
		t.Errorf("admitted in ticket order %v, want ascending", order)
	}
	st := e.stats()
	if n := int64(slots + visitors); st.AdmittedTotal != n || st.Released != n || st.Waiting != 0 || st.Active != 0 {
		t.Errorf("after everyone left: %+v, want %d admitted and released, none left", st, n)
	}
}

// queueUp polls as a patient visitor until admitted, checks that nobody
// ahead still waits, then leaves and checks it is gone.
func (e *env) queueUp(lim waitroom.Limits, v waitroom.Visitor, ahead []waitroom.Visitor, admitted func(int64)) {
	ctx := context.Background()
	last := int64(math.MaxInt64)
	for stop := time.Now().Add(deadline); time.Now().Before(stop); {
		d, err := e.store().Decide(ctx, e.room, lim, v, waitroom.JoinNone)
		switch {
		case err != nil:
			e.t.Errorf("Decide(%s): %v", v.ID, err)
			return
		case d.State == waitroom.StateNone:
			e.t.Errorf("visitor %s lost its place while polling", v.ID)
			return
		case d.State == waitroom.StateWaiting:
			if d.Ticket != v.Ticket || d.Position > last {
				e.t.Errorf("visitor %s: ticket %d at position %d after %d at %d", v.ID, d.Ticket, d.Position, v.Ticket, last)
			}
			last = d.Position
			time.Sleep(3*time.Millisecond + jitter(4*time.Millisecond))
			continue
		}
		admitted(v.Ticket)
		e.checkNoneWaiting(lim, v, ahead)
		time.Sleep(jitter(5 * time.Millisecond))
		if err := e.store().Release(ctx, e.room, v.ID); err != nil {
			e.t.Errorf("Release(%s): %v", v.ID, err)
		}
		if d, err := e.store().Decide(ctx, e.room, lim, v, waitroom.JoinNone); err != nil || d.State != waitroom.StateNone {
			e.t.Errorf("visitor %s after leaving: got %v (err %v), want none", v.ID, d.State, err)
		}
		return
	}
	e.t.Errorf("visitor %s not admitted within %v", v.ID, deadline)
}

func (e *env) checkNoneWaiting(lim waitroom.Limits, v waitroom.Visitor, ahead []waitroom.Visitor) {
	for _, a := range ahead {
		d, err := e.store().Decide(context.Background(), e.room, lim, a, waitroom.JoinNone)
		if err != nil || d.State == waitroom.StateWaiting {
			e.t.Errorf("ticket %d admitted while ticket %d ahead of it still waits (err %v)", v.Ticket, a.Ticket, err)
		}
	}
}

// testIdempotentJoin: a refresh, a second tab or a resent cookie never
// gives a second place, never moves a visitor back, and a join raced from
// several tabs and instances at once gives exactly one place.
func testIdempotentJoin(t *testing.T, e *env) {
	lim := limits(1)
	h := e.enter(lim)
	a, b, _ := e.wait(lim), e.wait(lim), e.wait(lim)
	// The same id with the right ticket, none, a stale one, someone else's
	// or one from the future: the place holds.
	for _, ticket := range []int64{a.Ticket, 0, 1, b.Ticket, a.Ticket + 1_000_000} {
		d := e.decide(lim, waitroom.Visitor{ID: a.ID, Ticket: ticket}, true)
		if d.State != waitroom.StateWaiting || d.Ticket != a.Ticket || d.Position != 1 || d.Line != 3 || d.Joined {
			t.Fatalf("join again with ticket %d: got %+v, want waiting, ticket %d, 1 of 3, not joined", ticket, d, a.Ticket)
		}
	}
	if d := e.decide(lim, h, true); d.State != waitroom.StateAdmitted || d.Joined || (d.Ticket != 0 && d.Ticket != h.Ticket) {
		t.Fatalf("admitted visitor joining again: got %+v, want its session", d)
	}
	results := e.raceJoin(lim, 8)
	joined := 0
	for i, d := range results {
		if d.State != waitroom.StateWaiting || d.Ticket != results[0].Ticket || d.Position != 4 {
			t.Errorf("racing join %d: got %+v, want waiting at 4 with one ticket", i, d)
		}
		if d.Joined {
			joined++
		}
	}
	if joined != 1 {
		t.Errorf("%d of %d racing joins say Joined, want 1", joined, len(results))
	}
	if st := e.stats(); st.Joined != 5 || st.Waiting != 4 || st.Active != 1 {
		t.Errorf("stats %+v, want 5 joined, 4 waiting, 1 active", st)
	}
}

// raceJoin hands one new visitor a ticket, then brings it back from
// several tabs at once, spread over the instances, as tabs that share the
// cookie do: its place is taken once.
func (e *env) raceJoin(lim waitroom.Limits, tabs int) []waitroom.Decision {
	e.t.Helper()
	v, d := e.issue(lim)
	if d.State != waitroom.StateWaiting || d.Placed {
		e.t.Fatalf("new visitor: got %+v, want an unplaced ticket", d)
	}
	results := make([]waitroom.Decision, tabs)
	errs := make([]error, tabs)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		s := e.store()
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Decide(context.Background(), e.room, lim, v, waitroom.JoinNone)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			e.t.Fatalf("racing join %d: %v", i, err)
		}
	}
	return results
}

// testPositionsNeverWorsen: visitors arrive while others are let in, and
// every request asks to join, as the gate's do. Only a visitor's first
// request may give it a ticket and its second (bringing the ticket back)
// its place; its ticket never changes while it waits, and its position
// never grows, not even when tickets handed out before its own are
// brought back after it.
func testPositionsNeverWorsen(t *testing.T, e *env) {
	const visitors = 12
	lim := limits(2)
	stopTickers := e.tickers(lim, 10*time.Millisecond)
	var wg sync.WaitGroup
	for i := range visitors {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			e.refresher(lim)
		})
	}
	wg.Wait()
	stopTickers()
	if st := e.stats(); !t.Failed() && (st.Joined != visitors || st.AdmittedTotal != visitors || st.Released != visitors) {
		t.Errorf("stats %+v, want %d joined, admitted and released", st, visitors)
	}
}

func (e *env) refresher(lim waitroom.Limits) {
	ctx := context.Background()
	v := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now(), Seen: time.Now()}
	last := int64(math.MaxInt64)
	stop := time.Now().Add(deadline)
	for n := 0; time.Now().Before(stop); n++ {
		d, err := e.store().Decide(ctx, e.room, lim, v, waitroom.JoinTicket)
		switch {
		case err != nil:
			e.t.Errorf("Decide(%s): %v", v.ID, err)
			return
		case d.Joined && n > 1, !d.Joined && n == 0, d.Joined == v.Placed && n == 1:
			e.t.Errorf("visitor %s, request %d: Joined = %t", v.ID, n+1, d.Joined)
		case n == 0:
			v.Ticket, v.Placed = d.Ticket, d.Placed // as its cookie carries them
		case d.State == waitroom.StateWaiting && (d.Ticket != v.Ticket || d.Position > last):
			e.t.Errorf("visitor %s: ticket %d at position %d after %d at %d", v.ID, d.Ticket, d.Position, v.Ticket, last)
		}
		v.Placed = v.Placed || d.Placed
		if d.State == waitroom.StateAdmitted {
			time.Sleep(jitter(5 * time.Millisecond))
			if err := e.store().Release(ctx, e.room, v.ID); err != nil {
				e.t.Errorf("Release(%s): %v", v.ID, err)
			}
			return
		}
		last = d.Position
		time.Sleep(3*time.Millisecond + jitter(4*time.Millisecond))
	}
	e.t.Errorf("visitor %s not admitted within %v", v.ID, deadline)
}
