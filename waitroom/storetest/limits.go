package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// testCapacity: however many visitors join and however many instances tick,
// the active sessions never exceed MaxActive. Two witnesses: the store's own
// Active count, and the number of visitors the store told "admitted" who
// have not left yet.
func testCapacity(t *testing.T, e *env) {
	const visitors = 40
	lim := limits(4)
	var inside atomic.Int64
	stopTickers := e.tickers(lim, 3*time.Millisecond)
	stopSampler := background(time.Millisecond, func() {
		st, err := e.store().Stats(context.Background(), e.room)
		if err != nil {
			e.t.Errorf("Stats: %v", err)
			return
		}
		if st.Active > int64(lim.MaxActive) {
			e.t.Errorf("Stats.Active = %d, max_active %d", st.Active, lim.MaxActive)
		}
		checkConserved(e.t, st)
	})
	var wg sync.WaitGroup
	for i := range visitors {
		via, leaveVia := e.stores[i%len(e.stores)], e.stores[(i+1)%len(e.stores)]
		wg.Go(func() { e.visit(via, leaveVia, lim, &inside) })
	}
	wg.Wait()
	stopSampler()
	stopTickers()
	if t.Failed() {
		return
	}
	st := e.stats()
	want := waitroom.Stats{Joined: visitors, AdmittedTotal: visitors, Released: visitors, AdmittedLastMinute: visitors,
		MeasuredOver: st.MeasuredOver, Issued: visitors, Epoch: st.Epoch, Counter: st.Counter, HighestAdmitted: st.HighestAdmitted,
		Low: st.Low, Floor: st.Floor}
	if st != want || st.MeasuredOver <= 0 || st.MeasuredOver > time.Minute || st.Epoch == 0 {
		t.Errorf("after every visitor left: got %+v, want %+v", st, want)
	}
	// A store that reports its marks (Stats.Counter) handed out one
	// ticket each, and admitted them all, the last one too.
	if st.Counter != 0 && (st.Counter != st.Epoch+visitors || st.HighestAdmitted != st.Counter) {
		t.Errorf("marks: counter %d, highest admitted %d; want %d for both (the incarnation %d + %d tickets)",
			st.Counter, st.HighestAdmitted, st.Epoch+visitors, st.Epoch, visitors)
	}
}

// visit is one visitor who arrives, polls until admitted, stays a little
// while, and leaves. inside counts the visitors told they are admitted who
// have not left: it goes up after the store admits and down before the store
// frees the slot, so it may lag the store's count but never lead it.
func (e *env) visit(via, leaveVia waitroom.Store, lim waitroom.Limits, inside *atomic.Int64) {
	time.Sleep(jitter(100 * time.Millisecond))
	ctx := context.Background()
	v := waitroom.Visitor{ID: newVisitorID(), Issued: time.Now()}
	stop := time.Now().Add(deadline)
	for join := waitroom.JoinTicket; time.Now().Before(stop); join = waitroom.JoinNone {
		d, err := via.Decide(ctx, e.room, lim, v, join)
		if d.Ticket != 0 {
			v.Ticket, v.Placed = d.Ticket, d.Placed // as its cookie would carry them
		}
		switch {
		case err != nil:
			e.t.Errorf("Decide(%s): %v", v.ID, err)
			return
		case d.State == waitroom.StateNone:
			e.t.Errorf("visitor %s lost its place while polling", v.ID)
			return
		case d.State == waitroom.StateWaiting:
			time.Sleep(2*time.Millisecond + jitter(4*time.Millisecond))
			continue
		}
		if n := inside.Add(1); n > int64(lim.MaxActive) {
			e.t.Errorf("%d visitors told they are admitted at once, max_active %d", n, lim.MaxActive)
		}
		e.stay(via, lim, v)
		inside.Add(-1)
		if err := leaveVia.Release(ctx, e.room, v.ID); err != nil {
			e.t.Errorf("Release(%s): %v", v.ID, err)
		}
		return
	}
	e.t.Errorf("visitor %s not admitted within %v", v.ID, deadline)
}

// stay makes a couple of requests as an admitted visitor; each must find
// the session.
func (e *env) stay(via waitroom.Store, lim waitroom.Limits, v waitroom.Visitor) {
	for range 2 {
		time.Sleep(2*time.Millisecond + jitter(4*time.Millisecond))
		d, err := via.Decide(context.Background(), e.room, lim, v, waitroom.JoinNone)
		if err != nil || d.State != waitroom.StateAdmitted {
			e.t.Errorf("admitted visitor %s: got %v (err %v), want admitted", v.ID, d.State, err)
		}
	}
}

// sample is a reading of AdmittedTotal taken by a call that ran from from
// to to; the store read it at some instant in between.
type sample struct {
	from, to time.Time
	admitted int64
}

// testTokenBucket: over any window, admissions (immediate ones included)
// stay within burst + rate × window, with every instance ticking at once;
// and the bucket does refill. The room first sits idle for a while, so a
// bucket that fills past its burst shows as a burst of admissions.
func testTokenBucket(t *testing.T, e *env) {
	const visitors = 60
	lim := limits(1000)
	lim.AdmitRate = waitroom.Rate{N: 20, Per: time.Second}
	lim.AdmitBurst = 5
	// The room does not exist before start, so its bucket cannot have
	// filled for longer than the samples say.
	start := time.Now()
	samples := []sample{{from: start, to: start}}
	e.admit(lim)
	samples = e.sampleAdmitted(samples, func(at time.Duration, _ int64) bool { return at < 300*time.Millisecond })
	busy := time.Now()
	for range visitors {
		e.join(lim)
	}
	stopTickers := e.tickers(lim, 2*time.Millisecond)
	samples = e.sampleAdmitted(samples, func(at time.Duration, admitted int64) bool {
		if at > deadline {
			t.Errorf("only %d admitted in %v at %v: the bucket does not refill", admitted, deadline, lim.AdmitRate)
			return false
		}
		return time.Since(busy) < 400*time.Millisecond || admitted < int64(lim.AdmitBurst)+5
	})
	stopTickers()
	checkWindows(t, samples, lim)
}

// sampleAdmitted reads AdmittedTotal every 10ms while more says so; more
// gets the time since the first sample and the count.
func (e *env) sampleAdmitted(samples []sample, more func(at time.Duration, admitted int64) bool) []sample {
	for {
		time.Sleep(10 * time.Millisecond)
		from := time.Now()
		st := e.stats()
		samples = append(samples, sample{from, time.Now(), st.AdmittedTotal})
		if !more(from.Sub(samples[0].from), st.AdmittedTotal) {
			return samples
		}
	}
}

// checkWindows tests every window between two samples. The store read the
// counts at instants inside [from, to], so the window it saw is at most
// later.to - earlier.from long.
func checkWindows(t *testing.T, samples []sample, lim waitroom.Limits) {
	for i, a := range samples {
		for _, b := range samples[i+1:] {
			window := b.to.Sub(a.from) + clockSlack
			allowed := float64(lim.AdmitBurst) + lim.AdmitRate.PerSecond()*window.Seconds()
			if got := b.admitted - a.admitted; float64(got) > allowed {
				t.Fatalf("%d admitted within %v, the bucket allows %.2f (burst %d, rate %v)",
					got, window, allowed, lim.AdmitBurst, lim.AdmitRate)
			}
		}
	}
}
