package memstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// TestStore_AutopilotRecordsBounded: the autopilot records of rooms no
// longer used (a room taken out, rooms filled in from a template that
// went) leave the map a day after their last use, as Redis expires its
// hashes, and past autopilotMax rooms the least lately used goes for
// each new one, but only once unused for autopilotLive: a room in use
// keeps its record and its limit.
func TestStore_AutopilotRecordsBounded(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	s := New(WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()
	p := waitroom.AutopilotParams{Interval: time.Second, Target: time.Second, Percentile: 90, ErrorsPPM: 20_000, Min: 5, Max: 50, Pin: -1}
	sp := waitroom.StartParams{AboveMilli: 1000, Window: 10 * time.Second, Hold: 30 * time.Second}
	for i := range 100 {
		room := fmt.Sprintf("tpl-%d", i)
		if _, err := s.Autopilot(ctx, room, p, waitroom.AutopilotReport{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AutopilotStart(ctx, room, sp); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.AutopilotNotice(ctx, room, 5, time.Minute, false); err != nil {
			t.Fatal(err)
		}
	}
	// "kept" is used every hour; the others never again.
	pinned := p
	pinned.Pin = 42
	for range 25 {
		advance(time.Hour)
		if _, err := s.Autopilot(ctx, "kept", pinned, waitroom.AutopilotReport{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.autopilotRooms(); n != 1 {
		t.Fatalf("%d rooms with records a day after the template rooms went, want 1 (kept)", n)
	}
	if st, _ := s.Autopilot(ctx, "kept", p, waitroom.AutopilotReport{}); st.Step == 0 {
		t.Fatalf("the room in use lost its record: %+v", st)
	}
	// Past the bound with every room live (used within autopilotLive),
	// none goes: evicting a live room would restart it at min_active.
	advance(autopilotLive + time.Second)
	for i := range autopilotMax + 10 {
		advance(time.Millisecond)
		if _, _, _, err := s.AutopilotNotice(ctx, fmt.Sprintf("many-%d", i), 5, time.Minute, false); err != nil {
			t.Fatal(err)
		}
	}
	// "kept" was used over autopilotLive before: the first past the
	// bound took its place.
	if n := s.autopilotRooms(); n != autopilotMax+10 {
		t.Fatalf("%d rooms with records, want %d: the live ones kept, the stale one gone", n, autopilotMax+10)
	}
	s.auto.mu.Lock()
	_, stale := s.auto.rooms["kept"]
	s.auto.mu.Unlock()
	if stale {
		t.Fatal("past the bound: the stale record kept")
	}
	// Once they are stale, the least lately used go, one for each new.
	advance(autopilotLive + time.Second)
	for i := range 5 {
		if _, _, _, err := s.AutopilotNotice(ctx, fmt.Sprintf("fresh-%d", i), 5, time.Minute, false); err != nil {
			t.Fatal(err)
		}
	}
	s.auto.mu.Lock()
	_, first := s.auto.rooms["many-4"]
	_, next := s.auto.rooms["many-5"]
	_, last := s.auto.rooms["fresh-4"]
	n := len(s.auto.rooms)
	s.auto.mu.Unlock()
	if first || !next || !last || n != autopilotMax+10 {
		t.Fatalf("past the bound, stale: many-4 kept %v, many-5 kept %v, fresh-4 kept %v, %d rooms; want the five oldest gone, %d rooms", first, next, last, n, autopilotMax+10)
	}
}
