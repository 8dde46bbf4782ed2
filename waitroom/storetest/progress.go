package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// touch sends one Touch for vs to the next instance.
func (e *env) touch(lim waitroom.Limits, vs ...waitroom.Visitor) {
	e.t.Helper()
	if err := e.store().Touch(context.Background(), e.room, lim, vs); err != nil {
		e.t.Fatalf("Touch(%d visitors): %v", len(vs), err)
	}
}

// testTouchKeepsPlaces: a visitor whose polls only reach the store as a
// Touch keeps its place as one polling through Decide does, and one not
// touched is dropped; a Touch places nobody and leaves those inside alone.
func testTouchKeepsPlaces(t *testing.T, e *env) {
	lim := limits(1)
	lim.AbandonAfter = 400 * time.Millisecond
	h := e.enter(lim)
	a, b := e.wait(lim), e.wait(lim)
	stranger := waitroom.Visitor{ID: newVisitorID(), Ticket: b.Ticket + 1, Placed: true}
	start := time.Now()
	for time.Since(start) <= lim.AbandonAfter+100*time.Millisecond {
		time.Sleep(25 * time.Millisecond)
		e.touch(lim, a, stranger, h)
		e.admit(lim)
	}
	e.expect(lim, a, waitroom.StateWaiting, 1)
	e.expect(lim, b, waitroom.StateNone, 0)
	e.expect(lim, stranger, waitroom.StateNone, 0)
	e.expect(lim, h, waitroom.StateAdmitted, 0)
	if st := e.stats(); st.Abandoned != 1 || st.Waiting != 1 {
		t.Errorf("stats %+v, want 1 abandoned (the one not touched), 1 waiting", st)
	}
}

// testTouchMarksMany: one Touch carries a tick's marks for a long stretch
// of the line, shuffled, some twice, as a busy instance sends them (the
// Redis store merges a stretch's marks into one write): every visitor
// touched keeps its place, every other one between them is dropped, and
// the positions left are the survivors' order.
func testTouchMarksMany(t *testing.T, e *env) {
	lim := limits(1)
	lim.AbandonAfter = 400 * time.Millisecond
	h := e.enter(lim)
	line := e.waitMany(lim, 240)
	var kept []waitroom.Visitor
	for i, v := range line {
		if i%2 == 0 || i >= 200 {
			kept = append(kept, v)
		}
	}
	batch := append(append([]waitroom.Visitor{h}, kept...), kept[:40]...)
	start := time.Now()
	for time.Since(start) <= lim.AbandonAfter+100*time.Millisecond {
		time.Sleep(25 * time.Millisecond)
		rand.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		e.touch(lim, batch...)
		e.admit(lim)
	}
	if st := e.stats(); st.Abandoned != 100 || st.Waiting != int64(len(kept)) {
		t.Fatalf("stats %+v, want 100 abandoned (those not touched), %d waiting", st, len(kept))
	}
	for i, v := range kept {
		e.expect(lim, v, waitroom.StateWaiting, int64(i+1))
	}
	e.expect(lim, line[1], waitroom.StateNone, 0)
	e.expect(lim, h, waitroom.StateAdmitted, 0)
}

// testProgress: a placed ticket's Decision carries the room's progress,
// the same as Stats; it counts every admission and every place given up,
// and keeps its epoch while the store keeps its data.
func testProgress(t *testing.T, e *env) {
	lim := limits(2)
	in := []waitroom.Visitor{e.enter(lim), e.enter(lim)}
	vs := make([]waitroom.Visitor, 6)
	for i := range vs {
		vs[i] = e.wait(lim)
	}
	d0 := e.expect(lim, vs[5], waitroom.StateWaiting, 6)
	p0 := d0.Progress
	if p0.Epoch == 0 || p0.Admitted != 2 || p0.Departed != 0 || p0.Pending != 0 {
		t.Fatalf("progress %+v at the start, want an epoch, 2 admitted, none departed or pending", p0)
	}
	if st := e.stats(); st.Progress() != (waitroom.Progress{Epoch: p0.Epoch, Admitted: 2}) {
		t.Errorf("Stats.Progress %+v, want %+v", st.Progress(), waitroom.Progress{Epoch: p0.Epoch, Admitted: 2})
	}
	e.mustRelease(vs[1].ID) // gives up a place
	if st := e.stats(); st.Left != 1 {
		t.Errorf("stats %+v after one left the line, want Left 1", st)
	}
	for _, h := range in {
		e.mustRelease(h.ID) // frees both slots: releases of sessions are no departure
	}
	e.admit(lim)
	d1 := e.expect(lim, vs[5], waitroom.StateWaiting, 3)
	p1 := d1.Progress
	if p1.Epoch != p0.Epoch || p1.Admitted != 4 || p1.Departed != 1 {
		t.Fatalf("progress %+v after 2 admissions and 1 departure, want epoch %d, 4 admitted, 1 departed", p1, p0.Epoch)
	}
	// The bound Progress promises: the position fell by the admissions
	// since, and by at most the departures more.
	fell := d0.Position - d1.Position
	if adm, dep := p1.Admitted-p0.Admitted, p1.Departed-p0.Departed; fell < adm || fell > adm+dep {
		t.Errorf("position fell by %d with %d admissions and %d departures", fell, adm, dep)
	}
}

// testProgressBoundsPosition: under a churn of joins, polls, departures and
// admissions, what a gate would show from an old Decision and today's
// Stats never lies below the true position, and never further above it
// than the departures since plus the pending it counted.
func testProgressBoundsPosition(t *testing.T, e *env) {
	lim := limits(3)
	lim.AdmitBurst = 1
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	type anchor struct {
		v waitroom.Visitor
		d waitroom.Decision
	}
	var line []anchor
	var inside []string
	for round := 0; round < 40; round++ {
		for range rng.IntN(4) {
			v, d := e.join(lim)
			if d.State == waitroom.StateAdmitted {
				inside = append(inside, v.ID) // the line was empty
				continue
			}
			line = append(line, anchor{v, e.decide(lim, v, false)})
		}
		if len(line) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(line))
			_ = e.release(line[i].v.ID) // may have been admitted already
			line = append(line[:i], line[i+1:]...)
		}
		if rng.IntN(2) == 0 {
			kept := inside[:0]
			for _, id := range inside {
				if rng.IntN(2) == 0 {
					_ = e.release(id) // its first session may have run out
				} else {
					kept = append(kept, id)
				}
			}
			inside = kept
			e.admit(lim)
		}
		st := e.stats()
		kept := line[:0]
		for _, a := range line {
			d := e.decide(lim, a.v, false)
			if d.State != waitroom.StateWaiting {
				inside = append(inside, a.v.ID) // the gate asks the store once it may be in
				continue
			}
			p, now := a.d.Progress, st.Progress()
			if now.Epoch != p.Epoch {
				t.Fatalf("epoch moved from %d to %d with no data lost", p.Epoch, now.Epoch)
			}
			shown := a.d.Position - (now.Admitted - p.Admitted)
			slack := (now.Departed - p.Departed) + p.Pending
			// Stats was read before this Decide, so admissions in between
			// only make the true position lower still.
			if shown < d.Position || shown-d.Position > slack {
				t.Fatalf("round %d: shown %d from %+v at %d, true %d, slack %d", round, shown, p, a.d.Position, d.Position, slack)
			}
			kept = append(kept, a)
		}
		line = kept
	}
}
