package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// The tests below wait for real time to pass. Where an assertion holds only
// if this process was not stalled for longer than a TTL (a store may rightly
// expire a session nobody touched for that long), they measure the time and
// stop naming the stall, rather than blame the store; the suite runs such a
// case again on fresh backends, and fails it after stallAttempts stalls. They
// never skip: an inconclusive run must not pass for a good one.

// stalled is what within stops a case with (a panic the suite recovers).
type stalled struct{ why string }

// stallAttempts bounds how many times a case the machine stalled is run.
const stallAttempts = 3

// within stops the case if more than d passed since start: what the test
// was about to assert no longer follows from the contract.
func within(t *testing.T, start time.Time, d time.Duration, what string) {
	t.Helper()
	if took := time.Since(start); took >= d {
		panic(stalled{fmt.Sprintf("inconclusive, the machine stalled: %v passed, more than %v, so %s proves nothing", took, d, what)})
	}
}

// attempt runs one case, and reports the stall that stopped it, if any.
func attempt(run func()) (stall *stalled) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(stalled)
			if !ok {
				panic(r)
			}
			stall = &s
		}
	}()
	run()
	return nil
}

// keeper polls visitors who must keep their place while another one goes
// stale, and remembers when it last did.
type keeper struct {
	e    *env
	lim  waitroom.Limits
	vs   []waitroom.Visitor
	last time.Time
}

func (k *keeper) poll() {
	k.e.t.Helper()
	from := time.Now()
	for _, v := range k.vs {
		if d := k.e.decide(k.lim, v, false); d.State != waitroom.StateWaiting {
			within(k.e.t, k.last, k.lim.AbandonAfter, "a visitor dropped after not polling")
			k.e.t.Fatalf("visitor %s polled %v ago: got %v, want waiting", v.ID, time.Since(k.last), d.State)
		}
	}
	k.last = from
}

// tick polls, then runs an admission tick.
func (k *keeper) tick() {
	k.e.t.Helper()
	k.poll()
	k.e.admit(k.lim)
	within(k.e.t, k.last, k.lim.AbandonAfter, "who the tick dropped")
}

// testAbandonment: a visitor who stops polling is dropped from the middle of
// the line, counted, never admitted; those behind it move up; its ticket,
// being this store's own, later buys only a place at the back.
func testAbandonment(t *testing.T, e *env) {
	lim := limits(1)
	lim.AbandonAfter = 400 * time.Millisecond
	h := e.enter(lim)
	k := &keeper{e: e, lim: lim, last: time.Now()}
	a, b, c := e.wait(lim), e.wait(lim), e.wait(lim)
	bSeen := time.Now()
	k.vs = []waitroom.Visitor{a, c}
	for time.Since(bSeen) <= lim.AbandonAfter+50*time.Millisecond {
		time.Sleep(25 * time.Millisecond)
		k.poll()
	}
	k.tick()
	if d := e.expect(lim, c, waitroom.StateWaiting, 2); d.Line != 2 {
		t.Errorf("line length %d after dropping one of 3, want 2", d.Line)
	}
	e.expect(lim, b, waitroom.StateNone, 0)
	if st := e.stats(); st.Abandoned != 1 || st.Waiting != 2 {
		t.Errorf("stats %+v, want 1 abandoned, 2 waiting", st)
	}
	e.mustRelease(h.ID)
	k.tick()
	e.expect(lim, a, waitroom.StateAdmitted, 0)
	e.mustRelease(a.ID)
	k.vs = []waitroom.Visitor{c}
	k.tick()
	e.expect(lim, c, waitroom.StateAdmitted, 0)
	if st := e.stats(); st.AdmittedTotal != 3 {
		t.Errorf("stats %+v, want 3 admitted: the abandoned visitor never", st)
	}
	if d := e.decide(lim, b, true); !d.Joined || d.Ticket <= b.Ticket || d.State != waitroom.StateWaiting {
		t.Errorf("abandoned visitor back: got %+v, want a new ticket after %d", d, b.Ticket)
	}
}

// testRelease: leaving frees a slot for the next tick; giving up a place
// takes the visitor out of line; a visitor with neither is not found.
func testRelease(t *testing.T, e *env) {
	lim := limits(1)
	a := e.enter(lim)
	b, c := e.wait(lim), e.wait(lim)
	if got := e.admit(lim); got.Admitted != 0 {
		t.Fatalf("Admit with no free slot: %+v", got)
	}
	e.mustRelease(c.ID)
	e.expect(lim, c, waitroom.StateNone, 0)
	if d := e.expect(lim, b, waitroom.StateWaiting, 1); d.Line != 1 {
		t.Errorf("line length %d after one of 2 left, want 1", d.Line)
	}
	e.mustRelease(a.ID)
	e.expect(lim, a, waitroom.StateNone, 0)
	if got := e.admit(lim); got.Admitted != 1 {
		t.Errorf("Admit after a release: %+v, want 1 admitted", got)
	}
	e.expect(lim, b, waitroom.StateAdmitted, 0)
	for _, id := range []string{a.ID, c.ID, newVisitorID()} {
		if err := e.release(id); !isNotFound(err) {
			t.Errorf("Release(%s) of a visitor with no place: %v, want ErrNotFound", id, err)
		}
	}
	if err := e.sibling("unused").release(b.ID); !isNotFound(err) {
		t.Errorf("Release in a room never used: %v, want ErrNotFound", err)
	}
	if st := e.stats(); st.Released != 2 || st.Joined != 3 || st.Active != 1 || st.Waiting != 0 {
		t.Errorf("stats %+v, want 3 joined, 2 released, 1 active", st)
	}
}

// testExpiry: a session nobody touches ends after its TTL, is counted, frees
// its slot for the next tick, and its holder is a stranger afterwards.
func testExpiry(t *testing.T, e *env) {
	lim := limits(1)
	lim.SessionTTL = 300 * time.Millisecond
	start := time.Now()
	a := e.enter(lim)
	admitted := time.Now() // a's session ends by admitted + TTL
	b := e.wait(lim)
	e.admit(lim)
	if time.Since(start) < lim.SessionTTL {
		e.expect(lim, b, waitroom.StateWaiting, 1) // a still held the slot
	}
	time.Sleep(time.Until(admitted.Add(lim.SessionTTL + 50*time.Millisecond)))
	tick := time.Now()
	e.admit(lim)
	d := e.decide(lim, b, false)
	within(t, tick, lim.SessionTTL, "b's session")
	if d.State != waitroom.StateAdmitted {
		t.Fatalf("next in line after the session expired and a tick ran: got %+v, want admitted", d)
	}
	e.expect(lim, a, waitroom.StateNone, 0)
	if st := e.stats(); st.Expired < 1 || st.AdmittedTotal != 2 {
		t.Errorf("stats %+v, want a's session counted as expired", st)
	}
	if d := e.decide(lim, a, true); !d.Joined || d.Ticket <= a.Ticket {
		t.Errorf("expired visitor back: got %+v, want a new ticket after %d", d, a.Ticket)
	}
}

// testSlidingRenewal: a session that keeps making requests outlives its TTL
// many times over; its expiry stays between TTL minus the renew interval
// and TTL ahead, and it is written at most once per renew interval.
func testSlidingRenewal(t *testing.T, e *env) {
	lim := limits(1)
	lim.SessionTTL = 300 * time.Millisecond
	ttl, renew := lim.SessionTTL, lim.RenewInterval()
	start := time.Now()
	a := e.enter(lim)
	b := e.wait(lim)
	lastLive, lastRenewal, renewals := start, time.Time{}, 0
	for time.Since(start) < 5*ttl/2 {
		time.Sleep(20 * time.Millisecond)
		from := time.Now()
		d := e.decide(lim, a, false)
		to := time.Now()
		if d.State != waitroom.StateAdmitted {
			within(t, lastLive, ttl-renew, "an expired session")
			t.Fatalf("session gone %v after a request found it live (TTL %v, renew interval %v): %+v", to.Sub(lastLive), ttl, renew, d)
		}
		if lo, hi := from.Add(ttl-renew-clockSlack), to.Add(ttl+clockSlack); d.Until.Before(lo) || d.Until.After(hi) {
			t.Errorf("Until %v outside [%v, %v]", d.Until, lo, hi)
		}
		if d.Renewed {
			if !lastRenewal.IsZero() && to.Sub(lastRenewal) <= renew-clockSlack {
				t.Errorf("renewed twice within %v, renew interval %v", to.Sub(lastRenewal), renew)
			}
			lastRenewal, renewals = from, renewals+1
		}
		lastLive = from
	}
	if renewals == 0 {
		t.Errorf("no request renewed the session in %v", time.Since(start))
	}
	e.admit(lim)
	within(t, lastLive, ttl-renew, "b's state")
	e.expect(lim, b, waitroom.StateWaiting, 1)
}

// testLeftTickets: Stats lists the tickets of the last visitors who gave
// up their place, oldest first, at most MaxLeftTickets; a released
// session is not on it.
func testLeftTickets(t *testing.T, e *env) {
	lim := limits(1)
	lim.JoinLimit = waitroom.Rate{}
	inside := e.enter(lim)
	n := waitroom.MaxLeftTickets + 6
	var tickets []int64
	for range n {
		v := e.wait(lim)
		e.mustRelease(v.ID)
		tickets = append(tickets, v.Ticket)
	}
	e.mustRelease(inside.ID)
	st := e.stats()
	var want [waitroom.MaxLeftTickets]int64
	copy(want[:], tickets[n-waitroom.MaxLeftTickets:])
	if st.Left != int64(n) || st.LeftTickets != want {
		t.Fatalf("after %d left the line: left %d, tickets %v, want the last %d: %v", n, st.Left, st.LeftTickets, waitroom.MaxLeftTickets, want)
	}
}
