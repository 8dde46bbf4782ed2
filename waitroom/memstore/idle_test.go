package memstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// TestStore_IdleRoomsLeaveTheMap: creating a room drops those with an
// Idle that nobody used for longer, so rooms filled in from templates do
// not pile up; a room with an override (a "closed" the site asked for),
// one without Idle and one used lately stay, and reading a room's stats is
// not using it.
func TestStore_IdleRoomsLeaveTheMap(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := New(WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute, Idle: time.Minute}
	join := func(room string, lim waitroom.Limits) waitroom.Decision {
		t.Helper()
		d, err := s.Decide(ctx, room, lim, waitroom.Visitor{ID: waitroom.NewVisitorID()}, waitroom.JoinTicket)
		if err != nil {
			t.Fatalf("Decide in %s: %v", room, err)
		}
		return d
	}
	for _, room := range []string{"idle", "closed", "lately"} {
		join(room, lim)
	}
	join("configured", waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: time.Minute})
	if err := s.SetOverride(ctx, "closed", waitroom.Override{Mode: waitroom.ModeReject}); err != nil {
		t.Fatal(err)
	}
	old := s.rooms["idle"]

	advance(90 * time.Second)
	if _, err := s.Admit(ctx, "lately", lim); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stats(ctx, "idle"); err != nil {
		t.Fatal(err)
	}
	advance(30 * time.Second)
	join("new", lim)
	if got, want := roomNames(s), []string{"closed", "configured", "lately", "new"}; !slices.Equal(got, want) {
		t.Fatalf("rooms %v, want %v", got, want)
	}
	if !old.gone {
		t.Errorf("the dropped room is not marked gone: a call holding it would write into nothing")
	}
	if o, err := s.Override(ctx, "closed"); err != nil || o.Mode != waitroom.ModeReject {
		t.Errorf("override of the idle closed room: %+v, %v; want reject kept", o, err)
	}
	// Coming back, the idle room starts afresh.
	if d := join("idle", lim); d.Line != 1 {
		t.Errorf("first visitor of the idle room back: %+v, want alone in line", d)
	}
	if s.rooms["idle"] == old {
		t.Errorf("the idle room came back as the dropped one")
	}
}

// TestStore_GoneRoomIsLookedUpAgain: a call that found a room just before
// it was dropped writes not into it but into the room's next incarnation.
func TestStore_GoneRoomIsLookedUpAgain(t *testing.T) {
	t.Parallel()
	s := New()
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: time.Minute, Idle: time.Minute}
	if _, err := s.Decide(ctx, "r", lim, waitroom.Visitor{ID: waitroom.NewVisitorID()}, waitroom.JoinTicket); err != nil {
		t.Fatal(err)
	}
	old := s.rooms["r"]
	old.mu.Lock()
	done := make(chan error)
	go func() {
		_, err := s.Decide(ctx, "r", lim, waitroom.Visitor{ID: waitroom.NewVisitorID()}, waitroom.JoinTicket)
		done <- err
	}()
	// Give the call time to find the room and wait for its lock; if it is
	// slower, it finds no room and the test still holds.
	time.Sleep(50 * time.Millisecond)
	s.mu.Lock()
	old.gone = true
	delete(s.rooms, "r")
	s.mu.Unlock()
	old.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx, "r")
	if err != nil || st.Issued != 1 || old.totals.Issued != 1 {
		t.Errorf("new room issued %d (%v), dropped one %d; want the second ticket in the new room", st.Issued, err, old.totals.Issued)
	}
}

func roomNames(s *Store) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.rooms))
	for name := range s.rooms {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
