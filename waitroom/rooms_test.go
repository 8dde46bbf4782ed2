package waitroom_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

func testRoom(name string, maxActive int) waitroom.Room {
	return waitroom.Room{Name: name, Tick: time.Second, Mode: waitroom.ModeFIFO,
		Limits: waitroom.Limits{MaxActive: maxActive, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
}

// A reload keeps what a room learned while it ran (the override in effect,
// its stats and history) for every room the new configuration keeps, takes
// its new settings, starts new rooms empty and reports the removed ones.
func TestRooms_ApplyKeepsLiveState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{testRoom("concert", 5), testRoom("expo", 5)}})
	for range 7 { // five go in at once, two come back and wait
		lim, v := testRoom("concert", 5).Limits, waitroom.Visitor{ID: waitroom.NewVisitorID(), Issued: time.Now()}
		d, err := store.Decide(ctx, "concert", lim, v, waitroom.JoinTicket)
		if err == nil && d.State == waitroom.StateWaiting {
			v.Ticket = d.Ticket
			_, err = store.Decide(ctx, "concert", lim, v, waitroom.JoinNone)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rooms.SetOverride(ctx, "concert", waitroom.Override{Mode: waitroom.ModePaused}); err != nil {
		t.Fatal(err)
	}
	ad, _ := rooms.Admitter("concert")
	ad.Tick(ctx)

	removed := rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{testRoom("concert", 9), testRoom("fair", 1)}})
	if !slices.Equal(removed, []string{"expo"}) {
		t.Fatalf("removed %v, want [expo]", removed)
	}
	info, ok := rooms.Info("concert")
	switch {
	case !ok:
		t.Fatal("a kept room is gone")
	case info.Room.Limits.MaxActive != 9:
		t.Errorf("the new settings are not in service: max_active %d", info.Room.Limits.MaxActive)
	case info.Effective.Mode != waitroom.ModePaused || info.Effective.Limits.MaxActive != 0:
		t.Errorf("the override in effect was lost: %+v", info.Effective)
	case info.Stats.Waiting != 2 || info.Stats.Active != 5:
		t.Errorf("the stats were lost: %+v", info.Stats)
	}
	if h, _ := rooms.History("concert"); len(h) != 1 {
		t.Errorf("history has %d samples after one tick and a reload, want 1", len(h))
	}
	if info, _ := rooms.Info("fair"); info.Stats != (waitroom.Stats{}) || info.Room.Limits.MaxActive != 1 {
		t.Errorf("a new room must start empty: %+v", info)
	}
	if _, ok := rooms.Info("expo"); ok || !slices.Equal(rooms.Names(), []string{"concert", "fair"}) {
		t.Errorf("rooms in service: %v", rooms.Names())
	}
}

// forgetting records the rooms an observer was told to forget.
type forgetting struct {
	outageCount
	mu   sync.Mutex
	gone []string
}

func (f *forgetting) Forget(room string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gone = append(f.gone, room)
}

// Run ticks every room in service, starts a room a reload adds and stops
// (and has the observer forget) one it removes, without touching the rest.
func TestRooms_RunFollowsApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memstore.New()
		defer store.Close()
		obs := &forgetting{}
		rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store, Observer: obs})
		rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{testRoom("concert", 1), testRoom("expo", 1)}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- rooms.Run(ctx) }()
		synctest.Wait()
		rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{testRoom("concert", 1), testRoom("fair", 1)}})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		obs.mu.Lock()
		gone := slices.Clone(obs.gone)
		obs.mu.Unlock()
		if !slices.Equal(gone, []string{"expo"}) {
			t.Fatalf("forgotten %v, want [expo]", gone)
		}
		for _, name := range []string{"concert", "fair"} {
			if h, _ := rooms.History(name); len(h) == 0 {
				t.Errorf("room %s was never ticked", name)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(obs.gone) != 1 {
			t.Fatalf("stopping Run forgot rooms still in service: %v", obs.gone)
		}
	})
}

// The gates' session cache reaches every room's limits, so an address
// counts toward session_clients for at least three caches: an owner
// answered from a gate's cache is heard by the store before it could be
// taken for gone. A reload that changes the cache changes it.
func TestRooms_ApplyGivesLimitsTheSessionCache(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	defer store.Close()
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	for _, c := range []struct{ cache, quiet time.Duration }{{10 * time.Second, 30 * time.Second}, {time.Second, 20 * time.Second}} {
		rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{testRoom("concert", 5)}, SessionCache: c.cache})
		info, ok := rooms.Info("concert")
		if !ok {
			t.Fatal("no room")
		}
		if got := info.Effective.Limits.ClientQuiet(); got != c.quiet {
			t.Errorf("session_cache %v, abandon_after 1h: quiet %v, want %v", c.cache, got, c.quiet)
		}
	}
}
