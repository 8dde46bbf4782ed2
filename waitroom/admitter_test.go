package waitroom_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// panicky panics on its first Admit, as a bug would.
type panicky struct {
	waitroom.Store
	calls atomic.Int64
}

func (p *panicky) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	if p.calls.Add(1) == 1 {
		panic("boom")
	}
	return p.Store.Admit(ctx, room, lim)
}

func TestAdmitter_TicksAtStartThenEveryTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &panicky{Store: memstore.New()}
		defer store.Close()
		core, logs := observer.New(zapcore.InfoLevel)
		rate, _ := waitroom.ParseRate("60/m")
		room := waitroom.Room{Name: "concert", Tick: time.Second, Limits: waitroom.Limits{
			MaxActive: 100, AdmitRate: rate, AdmitBurst: 1, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
		rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store, Log: zap.New(core)})
		rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}})
		ctx := context.Background()
		for range 6 { // the first goes in at once and spends the only token; the rest come back and wait
			v := waitroom.Visitor{ID: waitroom.NewVisitorID(), Issued: time.Now()}
			d, err := store.Decide(ctx, "concert", room.Limits, v, waitroom.JoinTicket)
			if err == nil && d.State == waitroom.StateWaiting {
				v.Ticket = d.Ticket
				_, err = store.Decide(ctx, "concert", room.Limits, v, waitroom.JoinNone)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		ad, _ := rooms.Admitter("concert")
		go func() { done <- ad.Run(runCtx) }()

		synctest.Wait() // the first tick, at once, panics and is logged
		if logs.FilterMessage("admission tick panicked").Len() != 1 {
			t.Fatal("a panicking tick must be recovered and logged")
		}
		time.Sleep(3*time.Second + time.Millisecond) // three more ticks, one token each
		synctest.Wait()
		info, _ := rooms.Info("concert")
		if st := info.Stats; st.Active != 4 || st.Waiting != 2 {
			t.Fatalf("after 3 ticks at 1/s: active %d waiting %d, want 4 and 2", info.Stats.Active, info.Stats.Waiting)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	})
}

// slowAdmit is a store whose Admit takes longer than the tick, as under a
// spike, or fails outright.
type slowAdmit struct {
	waitroom.Store
	fail bool
}

func (s *slowAdmit) Admit(ctx context.Context, room string, lim waitroom.Limits) (waitroom.Admitted, error) {
	if s.fail {
		return waitroom.Admitted{}, waitroom.ErrUnavailable
	}
	<-ctx.Done()
	return waitroom.Admitted{}, ctx.Err()
}

// A tick that runs out of its time is skipped, logged once, and is no
// outage: the store still answers. A store that fails is one.
func TestAdmitter_SlowTickIsNoOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &slowAdmit{Store: memstore.New()}
		defer store.Close()
		core, logs := observer.New(zapcore.InfoLevel)
		room := waitroom.Room{Name: "concert", Tick: time.Second, Limits: waitroom.Limits{MaxActive: 1, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
		outages := &outageCount{}
		rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store, Observer: outages, Log: zap.New(core)})
		rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}})
		ad, _ := rooms.Admitter("concert")
		for range 3 {
			ad.Tick(context.Background())
		}
		if outages.n.Load() != 0 || rooms.StoreDown() {
			t.Fatalf("slow ticks counted as %d outages (down %v)", outages.n.Load(), rooms.StoreDown())
		}
		if n := logs.FilterMessageSnippet("took longer than the tick").Len(); n != 1 {
			t.Fatalf("slow ticks logged %d times, want once", n)
		}
		store.fail = true
		ad.Tick(context.Background())
		if outages.n.Load() != 1 || !rooms.StoreDown() {
			t.Fatalf("a failing store: %d outages (down %v), want 1", outages.n.Load(), rooms.StoreDown())
		}
	})
}
