package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

func (e *env) admitN(lim waitroom.Limits, n int) waitroom.Admitted {
	e.t.Helper()
	a, err := e.store().AdmitN(context.Background(), e.room, lim, n)
	if err != nil {
		e.t.Fatalf("AdmitN(%d): %v", n, err)
	}
	return a
}

// queued are lim with no slot, for joins that must wait without touching
// the token bucket.
func queued(lim waitroom.Limits) waitroom.Limits {
	lim.MaxActive = 0
	return lim
}

// waitMany puts n visitors in line, in ticket order.
func (e *env) waitMany(lim waitroom.Limits, n int) []waitroom.Visitor {
	e.t.Helper()
	vs := make([]waitroom.Visitor, n)
	for i := range vs {
		vs[i] = e.wait(lim)
	}
	return vs
}

// testAdmitNCapacity: AdmitN lets in the first of the line, in ticket
// order, as many as asked but never past MaxActive; n <= 0 lets nobody in,
// even with slots free.
func testAdmitNCapacity(t *testing.T, e *env) {
	lim := limits(5)
	e.enter(lim)
	e.enter(lim)
	line := e.waitMany(queued(lim), 6)
	for _, n := range []int{0, -1} {
		if a := e.admitN(lim, n); a.Admitted != 0 {
			t.Fatalf("AdmitN(%d) with 3 slots free: %+v, want nobody admitted", n, a)
		}
	}
	e.expectLine(lim, line...)
	if a := e.admitN(lim, 10); a.Admitted != 3 {
		t.Fatalf("AdmitN(10) with 3 slots free: %+v, want 3 admitted", a)
	}
	for _, v := range line[:3] {
		e.expect(lim, v, waitroom.StateAdmitted, 0)
	}
	e.expectLine(lim, line[3:]...)
	if a := e.admitN(lim, 10); a.Admitted != 0 {
		t.Errorf("AdmitN(10) with every slot taken: %+v, want nobody admitted", a)
	}
	if st := e.stats(); st.Active != 5 || st.Waiting != 3 {
		t.Errorf("stats %+v, want 5 active, 3 waiting", st)
	}
}

// testAdmitNIgnoresBucket: AdmitN neither needs a token nor spends one;
// ticks still do.
func testAdmitNIgnoresBucket(t *testing.T, e *env) {
	lim := limits(10)
	lim.AdmitRate, lim.AdmitBurst = waitroom.Rate{N: 1, Per: time.Hour}, 3
	line := e.waitMany(queued(lim), 8)
	if a := e.admitN(lim, 2); a.Admitted != 2 {
		t.Fatalf("AdmitN(2) with a full bucket: %+v, want 2 admitted", a)
	}
	if a := e.admit(lim); a.Admitted != 3 {
		t.Fatalf("tick after AdmitN: %+v, want the whole burst of 3 admitted: AdmitN spent no token", a)
	}
	if a := e.admit(lim); a.Admitted != 0 {
		t.Fatalf("tick with an empty bucket: %+v, want nobody admitted", a)
	}
	if a := e.admitN(lim, 2); a.Admitted != 2 {
		t.Fatalf("AdmitN(2) with an empty bucket: %+v, want 2 admitted", a)
	}
	for _, v := range line[:7] {
		e.expect(lim, v, waitroom.StateAdmitted, 0)
	}
	e.expectLine(lim, line[7])
	if st := e.stats(); st.AdmittedTotal != 7 || st.AdmittedLastMinute != 7 || st.Active != 7 {
		t.Errorf("stats %+v, want 7 admitted, all counted and inside", st)
	}
}

// testAdmitNDropsStale: a visitor who stopped polling is dropped and
// counted as abandoned, not admitted, and those behind it go in instead.
func testAdmitNDropsStale(t *testing.T, e *env) {
	lim := limits(5)
	lim.AbandonAfter = 400 * time.Millisecond
	k := &keeper{e: e, lim: lim, last: time.Now()}
	a, b, c := e.wait(queued(lim)), e.wait(queued(lim)), e.wait(queued(lim))
	bSeen := time.Now()
	k.vs = []waitroom.Visitor{a, c}
	for time.Since(bSeen) <= lim.AbandonAfter+50*time.Millisecond {
		time.Sleep(25 * time.Millisecond)
		k.poll()
	}
	got := e.admitN(lim, 2)
	within(t, k.last, lim.AbandonAfter, "who AdmitN dropped")
	if got.Admitted != 2 || got.Abandoned != 1 {
		t.Fatalf("AdmitN(2) with the second of 3 stale: %+v, want 2 admitted, 1 abandoned", got)
	}
	e.expect(lim, a, waitroom.StateAdmitted, 0)
	e.expect(lim, b, waitroom.StateNone, 0)
	e.expect(lim, c, waitroom.StateAdmitted, 0)
	if st := e.stats(); st.Abandoned != 1 || st.AdmittedTotal != 2 {
		t.Errorf("stats %+v, want 1 abandoned, 2 admitted", st)
	}
}

// testAdmitNIsAnAdmission: AdmitN's admissions count as a tick's do, and
// get a tick's short first session: a visitor who comes to use it slides
// it to the full SessionTTL, one who does not loses it after AbandonAfter.
func testAdmitNIsAnAdmission(t *testing.T, e *env) {
	lim := limits(3)
	lim.SessionTTL, lim.AbandonAfter = 5*time.Second, 400*time.Millisecond
	user, idle := e.wait(queued(lim)), e.wait(queued(lim))
	start := time.Now()
	if a := e.admitN(lim, 2); a.Admitted != 2 {
		t.Fatalf("AdmitN(2): %+v, want 2 admitted", a)
	}
	if st := e.stats(); st.AdmittedTotal != 2 || st.AdmittedLastMinute != 2 || st.Active != 2 || st.Waiting != 0 {
		t.Errorf("stats %+v, want 2 admitted and counted", st)
	}
	d := e.expect(lim, user, waitroom.StateAdmitted, 0)
	within(t, start, lim.AbandonAfter, "the first request's renewal")
	if !d.Renewed || d.Until.Before(start.Add(lim.SessionTTL-clockSlack)) {
		t.Fatalf("first request after AdmitN: %+v, want a short session renewed to about %v from now", d, lim.SessionTTL)
	}
	time.Sleep(lim.AbandonAfter + 100*time.Millisecond)
	e.admit(lim)
	e.expect(lim, idle, waitroom.StateNone, 0)
	e.expect(lim, user, waitroom.StateAdmitted, 0)
	if st := e.stats(); st.Expired != 1 || st.Active != 1 {
		t.Errorf("stats %+v, want the unused admission expired", st)
	}
}

// testAdmitHighest: a tick or AdmitN reports the highest ticket it let in
// (Admitted.Highest, which an instance keeps as its Visitor.KnownAdmitted),
// 0 when it let nobody in, and always 0 in a Random room, where tickets go
// in out of order and the number proves nothing.
func testAdmitHighest(t *testing.T, e *env) {
	lim := limits(3)
	line := e.waitMany(queued(lim), 6)
	if a := e.admit(lim); a.Admitted != 3 || a.Highest != line[2].Ticket {
		t.Fatalf("tick: %+v, want 3 admitted, highest %d", a, line[2].Ticket)
	}
	if a := e.admit(lim); a.Admitted != 0 || a.Highest != 0 {
		t.Errorf("tick with every slot taken: %+v, want nobody and highest 0", a)
	}
	lim.MaxActive = 4
	if a := e.admitN(lim, 5); a.Admitted != 1 || a.Highest != line[3].Ticket {
		t.Errorf("AdmitN: %+v, want 1 admitted, highest %d", a, line[3].Ticket)
	}
	lim.MaxActive, lim.Random = 6, true
	if a := e.admit(lim); a.Admitted != 2 || a.Highest != 0 {
		t.Errorf("random tick: %+v, want 2 admitted, highest 0", a)
	}
}
