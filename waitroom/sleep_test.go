package waitroom_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// counting counts the store calls an admitter's tick makes.
type counting struct {
	waitroom.Store
	calls atomic.Int64
}

func (c *counting) Override(ctx context.Context, room string) (waitroom.Override, error) {
	c.calls.Add(1)
	return c.Store.Override(ctx, room)
}

// A room filled from a template that a tick found empty sleeps without
// reading its override again; the next request for it reads the override
// before it is served, so a room the site closed through another instance
// meanwhile answers as closed at once, with no tick in between (none runs
// here: the test ticks by hand).
func TestRooms_SleepingRoomReadsItsOverrideOnWaking(t *testing.T) {
	ctx := context.Background()
	store := &counting{Store: memstore.New()}
	tpl, err := waitroom.DefaultRoom().Build("event-{id}")
	if err != nil {
		t.Fatal(err)
	}
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{tpl}})
	if _, err := rooms.Fill(ctx, "event-{id}", "event-1", nil); err != nil {
		t.Fatal(err)
	}
	ad, ok := rooms.Admitter("event-1")
	if !ok {
		t.Fatal("the filled room is not in service")
	}
	ad.Tick(ctx) // nobody in line, nobody inside: the room sleeps
	if err := store.SetOverride(ctx, "event-1", waitroom.Override{Mode: waitroom.ModeReject}); err != nil {
		t.Fatal(err)
	}
	before := store.calls.Load()
	if info, _ := rooms.Info("event-1"); info.Effective.Mode == waitroom.ModeReject {
		t.Fatal("test bug: the sleeping room read the override without a request")
	}
	if _, err := rooms.Fill(ctx, "event-{id}", "event-1", nil); err != nil {
		t.Fatal(err)
	}
	if info, _ := rooms.Info("event-1"); info.Effective.Mode != waitroom.ModeReject || store.calls.Load() != before+1 {
		t.Fatalf("after a waking request: mode %s, %d override reads, want reject after one", info.Effective.Mode, store.calls.Load()-before)
	}
	if _, err := rooms.Fill(ctx, "event-{id}", "event-1", nil); err != nil {
		t.Fatal(err)
	}
	if n := store.calls.Load() - before; n != 1 {
		t.Fatalf("an awake room's request read the override too: %d reads", n)
	}
}
