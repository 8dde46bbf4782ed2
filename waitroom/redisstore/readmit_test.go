package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A tick's admission batch lost (doc.go, "Repairs"; readmit in
// common.lua): the admitted visitors are back in line on the store, at its
// head. Told of the highest ticket admitted (Visitor.KnownAdmitted), the
// store puts them back inside at once, on the first poll that carries it
// or on the first tick: nobody's position behind them grows, the active
// count is theirs, and nobody new goes in past max_active.
func TestRepair_LostAdmissionBatch(t *testing.T) {
	for _, by := range []string{"poll", "tick"} {
		t.Run(by, func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.Start(t)
			s := newStore(t, srv.NewClient(), "wr")
			c := srv.Client()
			lim := repairLimits(0)
			line := make([]waitroom.Visitor, 10)
			for i := range line {
				line[i] = join(t, s, lim, waitroom.StateWaiting)
				line[i] = polled(line[i])
			}
			// Two admitted by a tick the new master keeps (its high-water
			// mark among them), three by one it loses.
			lim.MaxActive = 2
			if a, err := s.Admit(ctx, "concert", lim); err != nil || a.Admitted != 2 || a.Highest != line[1].Ticket {
				t.Fatalf("first tick: %+v, %v; want 2 admitted, highest %d", a, err, line[1].Ticket)
			}
			snap := takeSnapshot(t, c, "wr")
			lim.MaxActive = 5
			a, err := s.Admit(ctx, "concert", lim)
			if err != nil || a.Admitted != 3 || a.Highest != line[4].Ticket {
				t.Fatalf("lost tick: %+v, %v; want 3 admitted, highest %d", a, err, line[4].Ticket)
			}
			for i := 5; i < 10; i++ {
				if d := decide(t, s, lim, line[i], false); d.Position != int64(i-4) {
					t.Fatalf("visitor %d before the loss at %d, want %d", i, d.Position, i-4)
				}
			}
			rewind(t, c, "wr", snap)
			if st, err := s.Stats(ctx, "concert"); err != nil || st.Active != 2 || st.Waiting != 8 {
				t.Fatalf("staged loss: active %d, waiting %d, %v; want 2 and 8", st.Active, st.Waiting, err)
			}
			hint := a.Highest
			if by == "tick" {
				a, err := s.Admit(waitroom.WithKnownAdmitted(ctx, hint), "concert", lim)
				if err != nil || !a.Repaired || a.Readmitted != 3 || a.Admitted != 0 {
					t.Fatalf("tick after the loss: %+v, %v; want repaired, 3 readmitted, none admitted", a, err)
				}
			}
			for i := 5; i < 10; i++ {
				v := line[i]
				v.KnownAdmitted = hint
				d := decide(t, s, lim, polled(v), false)
				if d.State != waitroom.StateWaiting || d.Position != int64(i-4) {
					t.Errorf("visitor %d after the loss: %+v, want waiting at %d (no growth)", i, d, i-4)
				}
				if want := by == "poll" && i == 5; d.Repaired != want {
					t.Errorf("visitor %d: repaired %v, want %v", i, d.Repaired, want)
				}
			}
			st, err := s.Stats(ctx, "concert")
			if err != nil || st.Active != 5 || st.Waiting != 5 || st.Repairs != 1 {
				t.Fatalf("after the repair: active %d, waiting %d, repairs %d, %v; want 5, 5, 1", st.Active, st.Waiting, st.Repairs, err)
			}
			// The readmitted come back on their cookies and are inside.
			for i := 2; i < 5; i++ {
				v := line[i]
				v.Until, v.KnownAdmitted = time.Now().Add(time.Minute), hint
				if d := decide(t, s, lim, v, false); d.State != waitroom.StateAdmitted {
					t.Errorf("readmitted visitor %d back: %+v, want inside", i, d)
				}
			}
			// Full: a tick admits nobody; with a slot freed, the next in
			// line goes in, and the hint, now the store's own, repairs
			// nothing more.
			if a, err := s.Admit(waitroom.WithKnownAdmitted(ctx, hint), "concert", lim); err != nil || a.Admitted != 0 || a.Repaired {
				t.Errorf("tick at max_active: %+v, %v; want nobody in, no repair", a, err)
			}
			if err := s.Release(ctx, "concert", line[0].ID); err != nil {
				t.Fatal(err)
			}
			if a, err := s.Admit(waitroom.WithKnownAdmitted(ctx, hint), "concert", lim); err != nil || a.Admitted != 1 || a.Highest != line[5].Ticket || a.Repaired {
				t.Errorf("tick after a release: %+v, %v; want visitor 5 in, no repair", a, err)
			}
			if st, err := s.Stats(ctx, "concert"); err != nil || st.Active != 5 || st.Repairs != 1 {
				t.Errorf("at the end: active %d, repairs %d, %v; want 5, 1", st.Active, st.Repairs, err)
			}
		})
	}
}

// A session a repair puts back (readmit) began, for a replayed release
// (Store.ReleaseAt), at its holder's last poll in line: the same
// visitor's earlier session, released before it joined the line again,
// is not this one, so that release replayed after the repair spares it;
// a release from after the poll ends it.
func TestRepair_ReadmittedSessionSparedByAnEarlierRelease(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	c := srv.Client()
	lim := repairLimits(1)
	v := join(t, s, lim, waitroom.StateAdmitted)
	at0, err := s.ReleaseAt(ctx, "concert", v.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	other := join(t, s, lim, waitroom.StateAdmitted)
	back, d, err := enter(ctx, s, "concert", lim, v.ID)
	if err != nil || d.State != waitroom.StateWaiting {
		t.Fatalf("the released visitor back in a full room: %+v, %v; want waiting", d, err)
	}
	back = polled(back)
	decide(t, s, lim, back, false)
	if err := s.Release(ctx, "concert", other.ID); err != nil {
		t.Fatal(err)
	}
	snap := takeSnapshot(t, c, "wr")
	a, err := s.Admit(ctx, "concert", lim)
	if err != nil || a.Admitted != 1 || a.Highest != back.Ticket {
		t.Fatalf("the tick the failover loses: %+v, %v; want the visitor in", a, err)
	}
	rewind(t, c, "wr", snap)
	a, err = s.Admit(waitroom.WithKnownAdmitted(ctx, a.Highest), "concert", lim)
	if err != nil || a.Readmitted != 1 {
		t.Fatalf("tick after the loss: %+v, %v; want the visitor readmitted", a, err)
	}
	if _, err := s.ReleaseAt(ctx, "concert", v.ID, at0); !errors.Is(err, waitroom.ErrNotFound) {
		t.Fatalf("the release of its earlier session, replayed: %v; want ErrNotFound, the readmitted session spared", err)
	}
	back.Until = time.Now().Add(time.Minute)
	if d := decide(t, s, lim, back, false); d.State != waitroom.StateAdmitted {
		t.Fatalf("the readmitted visitor after the replay: %+v, want inside", d)
	}
	at2, err := s.ReleaseAt(ctx, "concert", visitorID(), time.Time{})
	if !errors.Is(err, waitroom.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.ReleaseAt(ctx, "concert", v.ID, at2); err != nil {
		t.Fatalf("a release from after its last poll: %v, want the readmitted session ended", err)
	}
}
