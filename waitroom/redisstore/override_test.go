package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestRedisStore_OverrideHash: the override is one hash with the fields
// doc.go lists, the rate spelled as configured and the stamp in
// microseconds; it lives a month, refreshed by every write and by ticks;
// clearing deletes it.
func TestRedisStore_OverrideHash(t *testing.T) {
	srv := shared(t)
	prefix := freshPrefix()
	client := srv.NewClient()
	s := newStore(t, client, prefix)
	ctx := context.Background()
	key := "{" + prefix + ":concert}:override"
	seven, rate, msg := 7, waitroom.Rate{N: 300, Per: time.Minute}, "back at ten"
	before := time.Now()
	if err := s.SetOverride(ctx, "concert", waitroom.Override{MaxActive: &seven, AdmitRate: &rate, Mode: waitroom.ModePaused, Message: &msg}); err != nil {
		t.Fatal(err)
	}
	h := client.HGetAll(ctx, key).Val()
	changed, _ := strconv.ParseInt(h["changed"], 10, 64)
	if h["max_active"] != "7" || h["admit_rate"] != "300/m" || h["mode"] != "paused" || h["message"] != msg || len(h) != 5 ||
		changed < before.Add(-clockSlack).UnixMicro() || changed > time.Now().Add(clockSlack).UnixMicro() {
		t.Errorf("override hash %v, want the five fields doc.go lists, changed now in microseconds", h)
	}
	checkLongLived(t, client.PTTL(ctx, key).Val(), "after a write")

	// A tick of a room in use refreshes it once half its month is gone.
	client.PExpire(ctx, key, time.Hour)
	join(t, s, limits(0), waitroom.StateWaiting)
	admit(t, s, limits(0))
	checkLongLived(t, client.PTTL(ctx, key).Val(), "after a tick")

	if err := s.ClearOverride(ctx, "concert"); err != nil {
		t.Fatal(err)
	}
	if n := client.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("override hash still there after ClearOverride")
	}
}

const clockSlack = 5 * time.Millisecond

func checkLongLived(tb testing.TB, ttl time.Duration, when string) {
	tb.Helper()
	if ttl < 29*24*time.Hour || ttl > 30*24*time.Hour {
		tb.Errorf("%s: override expires in %v, want about 30 days", when, ttl)
	}
}

// TestRedisStore_OverrideUnreadable: a hash the store did not write as it
// reads it is an error naming the key and the field, taken for the store
// being unavailable; a field it does not know is skipped.
func TestRedisStore_OverrideUnreadable(t *testing.T) {
	srv := shared(t)
	prefix := freshPrefix()
	client := srv.NewClient()
	s := newStore(t, client, prefix)
	ctx := context.Background()
	key := "{" + prefix + ":concert}:override"
	client.HSet(ctx, key, "changed", "1795000000000000", "mode", "paused", "colour", "teal")
	if o, err := s.Override(ctx, "concert"); err != nil || o.Mode != waitroom.ModePaused || o.Changed.UnixMicro() != 1795000000000000 {
		t.Errorf("override with an unknown field: %+v, %v; want it skipped", o, err)
	}
	client.HSet(ctx, key, "max_active", "lots")
	_, err := s.Override(ctx, "concert")
	if !errors.Is(err, waitroom.ErrUnavailable) || !strings.Contains(err.Error(), key+": max_active: ") {
		t.Errorf("unreadable max_active: %v, want ErrUnavailable naming %s and the field", err, key)
	}
}

// TestRedisStore_AdmitNPastABatch: a script admits at most a thousand a
// call; AdmitN asks again until it has its count, in ticket order.
func TestRedisStore_AdmitNPastABatch(t *testing.T) {
	redistest.Long(t, "a 2,500-visitor line")
	const n, want = 2500, 2200
	s := newStore(t, shared(t).NewClient(), freshPrefix())
	line := joinMany(t, s, limits(0), n)
	a, err := s.AdmitN(context.Background(), "concert", limits(n), want)
	if err != nil || a.Admitted != want {
		t.Fatalf("AdmitN(%d): %+v, %v", want, a, err)
	}
	for _, i := range []int{0, 999, 1000, want - 1} {
		if d := decide(t, s, limits(n), line[i], false); d.State != waitroom.StateAdmitted {
			t.Errorf("ticket %d of %d: %+v, want admitted", i+1, n, d)
		}
	}
	for i, v := range line[want:] {
		if d := decide(t, s, limits(n), v, false); d.State != waitroom.StateWaiting || d.Position != int64(i+1) {
			t.Fatalf("ticket %d of %d: %+v, want waiting at %d", want+i+1, n, d, i+1)
		}
	}
}

// TestRedisStore_RandomAdmissionIsUniform: a random tick with one slot
// picks each of the waiting alike: 1200 ticks over 4 places expect 300
// each, and a count outside 210..390 (more than 6 standard deviations off)
// means the pick is biased, or repeats from tick to tick.
func TestRedisStore_RandomAdmissionIsUniform(t *testing.T) {
	const places, trials = 4, 1200
	s := newStore(t, shared(t).NewClient(), freshPrefix())
	ctx := context.Background()
	lim := limits(1)
	lim.Random = true
	var counts [places]int
	for trial := range trials {
		room := fmt.Sprint("room-", trial)
		line := make([]waitroom.Visitor, places)
		for i := range line {
			v, d, err := enter(ctx, s, room, limits(0), visitorID())
			if err != nil || d.State != waitroom.StateWaiting || !d.Placed {
				t.Fatalf("join: %+v, %v", d, err)
			}
			line[i] = v
		}
		if a, err := s.Admit(ctx, room, lim); err != nil || a.Admitted != 1 {
			t.Fatalf("trial %d: %+v, %v; want 1 admitted", trial, a, err)
		}
		for i, v := range line {
			if d, err := s.Decide(ctx, room, lim, v, waitroom.JoinNone); err == nil && d.State == waitroom.StateAdmitted {
				counts[i]++
			}
		}
	}
	for i, n := range counts {
		if n < 210 || n > 390 {
			t.Errorf("place %d admitted %d times of %d, want about %d: %v", i+1, n, trials, trials/places, counts)
		}
	}
}

// TestRedisStore_OverridesClosedAndCanceled: the override methods and
// AdmitN answer like the others on a closed store or a canceled context.
func TestRedisStore_OverridesClosedAndCanceled(t *testing.T) {
	s := newStore(t, shared(t).NewClient(), freshPrefix())
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func(context.Context) error{
		"AdmitN": func(ctx context.Context) error { _, err := s.AdmitN(ctx, "concert", limits(1), 1); return err },
		"SetOverride": func(ctx context.Context) error {
			return s.SetOverride(ctx, "concert", waitroom.Override{Mode: waitroom.ModePaused})
		},
		"ClearOverride": func(ctx context.Context) error { return s.ClearOverride(ctx, "concert") },
		"Override":      func(ctx context.Context) error { _, err := s.Override(ctx, "concert"); return err },
	}
	for name, call := range calls {
		if err := call(canceled); !errors.Is(err, context.Canceled) || errors.Is(err, waitroom.ErrUnavailable) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
	}
	_ = s.Close()
	for name, call := range calls {
		if err := call(context.Background()); !errors.Is(err, waitroom.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}
