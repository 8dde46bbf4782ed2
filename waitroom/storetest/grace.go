package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testRecoveryGrace: after the store lost its data, the first returning
// ticket holder starts the recovery grace. Until it ends nobody goes in at
// once, not even into an empty line with slots free; returning holders
// still take the places their tickets give, ahead of newcomers; ticks let in
// only restored tickets. Once it is over the newcomers follow.
//
// What the grace forbids can only be seen while it runs, and a stalled
// machine may outlast a short grace. An attempt that finds the grace may
// have ended before its last observation is inconclusive: the test tries
// again with a grace twice as long, on fresh backends, and fails only if
// three attempts in a row say nothing.
func testRecoveryGrace(t *testing.T, e *env) {
	grace := 300 * time.Millisecond
	for attempt := 1; ; attempt++ {
		took, conclusive := e.tryRecoveryGrace(attempt, grace)
		if conclusive {
			return
		}
		if attempt == 3 {
			t.Fatalf("inconclusive, the machine stalled: %v passed in a grace of %v, three times", took, grace)
		}
		t.Logf("attempt %d inconclusive: %v passed in a grace of %v; trying again", attempt, took, grace)
		grace *= 2
	}
}

// tryRecoveryGrace runs the scenario once, on a new room and backends; it
// reports how long the part that must fit in the grace took and whether it
// did. Any failure it reports is one the store made while the grace ran.
func (e *env) tryRecoveryGrace(attempt int, grace time.Duration) (time.Duration, bool) {
	t := e.t
	room := fmt.Sprintf("%s-%d", e.room, attempt)
	before := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: room}
	old := make([]waitroom.Visitor, 3)
	for i := range old {
		old[i] = before.wait(limits(0))
	}
	time.Sleep(20 * time.Millisecond) // the new backend's seed must pass the old tickets
	after := &env{t: t, newStores: e.newStores, stores: e.newStores(t, len(e.stores)), room: room}
	lim := limits(8)
	lim.RecoveryGrace = grace
	after.enter(lim) // nothing was restored yet: no grace

	start := time.Now() // the grace starts during the next call, so it runs at least until start+grace
	running := func() bool { return time.Since(start) < grace-clockSlack }
	first := after.decide(lim, old[1], true)
	if !running() {
		return time.Since(start), false
	}
	if first.State != waitroom.StateWaiting || first.Ticket != old[1].Ticket {
		t.Fatalf("first returning holder, empty line, slots free: %+v, want waiting on ticket %d: its return starts the grace", first, old[1].Ticket)
	}
	restored := time.Now() // the grace ends by restored+grace
	if got := after.admit(lim); got.Admitted != 1 {
		t.Fatalf("tick during the grace: %+v, want the restored visitor admitted", got)
	}
	newcomer, d := after.join(lim)
	if !running() {
		return time.Since(start), false
	}
	if d.State != waitroom.StateWaiting {
		t.Fatalf("newcomer during the grace, empty line, slots free: %+v, want waiting", d)
	}
	after.restore(lim, old[2], old[0])
	after.expectLine(lim, old[0], old[2], newcomer)
	got := after.admit(lim)
	if !running() {
		return time.Since(start), false
	}
	if got.Admitted != 2 {
		t.Fatalf("tick during the grace: %+v, want the 2 restored admitted and not the newcomer", got)
	}
	after.expect(lim, old[0], waitroom.StateAdmitted, 0)
	after.expect(lim, old[2], waitroom.StateAdmitted, 0)
	after.expect(lim, newcomer, waitroom.StateWaiting, 1)

	time.Sleep(time.Until(restored.Add(grace + 2*clockSlack)))
	if got := after.admit(lim); got.Admitted != 1 {
		t.Fatalf("tick after the grace: %+v, want the newcomer admitted", got)
	}
	after.expect(lim, newcomer, waitroom.StateAdmitted, 0)
	if st := after.stats(); st.Joined != 5 || st.Active != 5 {
		t.Errorf("stats %+v, want 5 joined and inside", st)
	}
	return 0, true
}
