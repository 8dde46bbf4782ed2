package waitroom

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// releaseCounter counts the releases a store is asked for, and fails
// them while down.
type releaseCounter struct {
	Store
	calls atomic.Int64
	down  atomic.Bool
}

func (s *releaseCounter) Release(ctx context.Context, room, visitor string) error {
	_, err := s.ReleaseAt(ctx, room, visitor, time.Time{})
	return err
}

func (s *releaseCounter) ReleaseAt(ctx context.Context, room, visitor string, began time.Time) (time.Time, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return time.Time{}, ErrUnavailable
	}
	return time.Now(), ErrNotFound
}

// A replay the tick runs out of time for is kept and applied by the next
// tick (before: dropped, so the sessions it ends held their slots on the
// new master until they ran out); a store that is down gets at most
// releaseWorkers calls a tick, however many releases are kept.
func TestRetryReleases_ReplayOutlastingTheTickIsKept(t *testing.T) {
	store := &releaseCounter{}
	rs := NewRooms(RoomsOptions{Store: store})
	rs.Apply(RoomsConfig{Rooms: []Room{{Name: "concert", Tick: time.Second, Mode: ModeFIFO,
		Limits: Limits{MaxActive: 1, SessionTTL: time.Hour, AbandonAfter: time.Hour}}}})
	lr := rs.get("concert")
	now := time.Now()
	const kept = 100
	for i := range kept {
		rs.releases.keep(keptRelease{room: "concert", visitor: NewVisitorID(), how: "upstream", at: now.Add(time.Duration(i) * time.Millisecond)}, true)
	}
	spent, cancel := context.WithCancel(context.Background())
	cancel()
	rs.retryReleases(spent, lr, true, now) // the repair noticed by a tick with no time left
	if n := store.calls.Load(); n != 0 {
		t.Fatalf("a tick with no time left asked the store %d times", n)
	}
	store.down.Store(true)
	rs.retryReleases(context.Background(), lr, false, now)
	if n := store.calls.Load(); n == 0 || n > releaseWorkers {
		t.Errorf("the store down: %d calls in a tick, want 1 to %d", n, releaseWorkers)
	}
	store.down.Store(false)
	store.calls.Store(0)
	rs.retryReleases(context.Background(), lr, false, now)
	if n := store.calls.Load(); n != kept {
		t.Errorf("the next tick applied %d replays, want the %d kept", n, kept)
	}
	store.calls.Store(0)
	rs.retryReleases(context.Background(), lr, false, now)
	if n := store.calls.Load(); n != 0 {
		t.Errorf("a tick after they were applied asked %d times, want 0", n)
	}
}

// One visitor keeps the pending release that ends more: a replay of an
// older release (which spares a later session) never displaces a newer
// one the store has not taken (which ends whatever runs), whichever
// comes last; of two replays the later store time stays. A room at its
// cap drops a replay before a release the store never took.
func TestReleases_KeepTheStrongerAndDropReplaysFirst(t *testing.T) {
	now := time.Now()
	var rl releases
	p := keptRelease{room: "concert", visitor: "v", how: "upstream", at: now}
	d1 := keptRelease{room: "concert", visitor: "v", how: "upstream", at: now.Add(-time.Second), storeAt: now.Add(-time.Second), replay: true}
	rl.keep(p, false)
	rl.keep(d1, false)
	if got := rl.take("concert", false, now); len(got) != 1 || !got[0].storeAt.IsZero() {
		t.Fatalf("a replay kept after a release never taken: %+v, want the release never taken alone", got)
	}
	d2 := d1
	d2.storeAt = now
	rl.keep(d2, false)
	rl.keep(d1, false)
	if got := rl.take("concert", false, now); len(got) != 1 || !got[0].storeAt.Equal(now) {
		t.Fatalf("two replays: %+v, want the later store time alone", got)
	}
	rl.keep(d1, false)
	rl.keep(p, false)
	if got := rl.take("concert", false, now); len(got) != 1 || !got[0].storeAt.IsZero() {
		t.Fatalf("a release never taken after a replay: %+v, want it alone", got)
	}

	var full releases
	full.keep(keptRelease{room: "concert", visitor: "replayed", at: now, storeAt: now, replay: true}, false)
	for i := range maxPendingPerRoom - 1 {
		full.keep(keptRelease{room: "concert", visitor: NewVisitorID(), at: now.Add(time.Duration(i))}, false)
	}
	full.keep(keptRelease{room: "concert", visitor: "newest", at: now}, false)
	got := full.take("concert", false, now)
	if len(got) != maxPendingPerRoom {
		t.Fatalf("%d kept, want the cap %d", len(got), maxPendingPerRoom)
	}
	for _, k := range got {
		if k.visitor == "replayed" {
			t.Fatal("the room at its cap dropped a release never taken before the replay")
		}
	}
	if got[len(got)-1].visitor != "newest" {
		t.Errorf("the newest release was not kept")
	}
}
