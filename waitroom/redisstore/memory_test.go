package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// TestMemory_PerWaitingVisitor puts 100,000 visitors with real-sized ids
// in line and weighs the room's keys with MEMORY USAGE (every element
// counted, SAMPLES 0) and the server's used_memory. The target is 150 bytes
// a visitor; see doc.go for where they go.
func TestMemory_PerWaitingVisitor(t *testing.T) {
	redistest.Long(t, "100,000 joins")
	const n = 100_000
	srv := redistest.Start(t) // its own server: used_memory must see nothing else
	client := srv.Client()
	ctx := context.Background()
	s := New(client, WithKeyPrefix("mem"))
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 2 * time.Minute}
	if _, _, err := storetest.Enter(ctx, s, "concert", lim, "warm-up"); err != nil {
		t.Fatal(err) // creates the room and loads the script
	}
	before := usedMemory(t, client)
	joinPipelined(t, s, "concert", lim, n-1)
	st, err := s.Stats(ctx, "concert")
	if err != nil || st.Waiting != n {
		t.Fatalf("stats %+v, %v; want %d waiting", st, err, n)
	}
	parts, total := roomMemory(t, s, "concert")
	used := usedMemory(t, client) - before
	per := float64(total) / n
	t.Logf("%d waiting: MEMORY USAGE %d bytes (%s), %.1f bytes a visitor; used_memory grew %d, %.1f a visitor",
		n, total, parts, per, used, float64(used)/n)
	if per > 150 {
		t.Errorf("%.1f bytes a waiting visitor, want at most 150", per)
	}
}

// roomMemory weighs every key of the room with MEMORY USAGE, every element
// counted (SAMPLES 0): the sizes by key, and their sum.
func roomMemory(tb testing.TB, s *Store, room string) (string, int64) {
	tb.Helper()
	var total int64
	var parts []string
	for _, k := range s.cache.keys(s.prefix, room) {
		b, err := s.client.MemoryUsage(context.Background(), k, 0).Result()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		total += b
		parts = append(parts, k[strings.LastIndexByte(k, ':')+1:]+" "+strconv.FormatInt(b, 10))
	}
	return strings.Join(parts, ", "), total
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func usedMemory(tb testing.TB, client redis.UniversalClient) int64 {
	tb.Helper()
	info, err := client.Info(context.Background(), "memory").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatal("INFO memory without used_memory")
	return 0
}

// TestMemory_BogusLinePruned: a flood that comes back once (a bot farm's
// second request) and then stops polling leaves a line that a paused room
// still prunes, an eighth of it a tick at least, so within nine ticks of
// the flood going stale (ten with a trim of the string's front); its
// memory goes back to what the room held before.
//
// Ticks are counted, not seconds: on a busy machine a tick may take long,
// yet each must sweep its eighth. The flood's tickets get a minute to come
// back (PlaceWithin), as bringing 100,000 back may outlast abandon_after
// there; abandon_after counts from the placements.
func TestMemory_BogusLinePruned(t *testing.T) {
	redistest.Long(t, "100,000 joins")
	const n = 100_000
	srv := redistest.Start(t)
	client := srv.Client()
	ctx := context.Background()
	s := New(client, WithKeyPrefix("bogus"))
	// abandon_after 2s: the real visitor polls right before each tick and
	// must not go stale in between, even on a machine stalled for a second.
	paused := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 2 * time.Second}
	real, _, err := storetest.Enter(ctx, s, "concert", paused, "real-visitor-who-polls")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "concert", paused); err != nil {
		t.Fatal(err)
	}
	_, baseline := roomMemory(t, s, "concert")
	flood := paused
	flood.PlaceWithin = time.Minute
	joinPipelined(t, s, "concert", flood, n)
	placed := time.Now() // every bogus place was last seen before this
	_, full := roomMemory(t, s, "concert")
	stale := 0 // ticks that began once every bogus place was stale
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bogus places still in line 2 minutes after the flood (%d ticks once stale)", n, stale)
		}
		if _, err := s.Decide(ctx, "concert", paused, real, waitroom.JoinNone); err != nil { // the real one keeps polling
			t.Fatal(err)
		}
		if time.Since(placed) > paused.AbandonAfter { // Redis's clock is this one: its cutoff is past every bogus poll
			stale++
		}
		if _, err := s.Admit(ctx, "concert", paused); err != nil {
			t.Fatal(err)
		}
		st, err := s.Stats(ctx, "concert")
		if err != nil {
			t.Fatal(err)
		}
		if st.Waiting == 1 {
			break
		}
	}
	took := time.Since(placed)
	parts, after := roomMemory(t, s, "concert")
	t.Logf("%d bogus places: room keys %d bytes before, %d full, %d after %d ticks once stale (%v after the flood; abandon_after %v): %s",
		n, baseline, full, after, stale, took.Round(time.Millisecond), paused.AbandonAfter, parts)
	if d, err := s.Decide(ctx, "concert", paused, real, waitroom.JoinNone); err != nil || d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("the real visitor: %+v, %v; want waiting, first", d, err)
	}
	if stale > 10 {
		t.Errorf("pruning %d stale places took %d ticks once they were stale, want at most 10 (an eighth of the line a tick)", n, stale)
	}
	if after > full/20 {
		t.Errorf("room keys hold %d bytes after pruning, want at most a twentieth of the %d the flood took", after, full)
	}
}
