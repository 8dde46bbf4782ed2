package redisstore

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// TestTouch_MergesMarks pins what a tick's marks cost Redis (touch.lua):
// 3,000 visitors' marks, shuffled and some twice, are two calls (slices of
// touchBatch) with a BITFIELD per 1,000 marks, not a command per poll;
// every visitor's entry is stamped with the touch's time, as decide.lua's
// SETRANGE lays it out, and the string keeps its length. Three marks far
// apart are one BITFIELD, and the entries between them are left as they
// were.
func TestTouch_MergesMarks(t *testing.T) {
	srv := redistest.Start(t) // its own server: nothing else may run commands
	client := srv.Client()
	ctx := context.Background()
	s := New(client)
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
	const n = 3000
	line := make([]waitroom.Visitor, n)
	// The first visitor goes in alone: the line's first place sets where
	// its last-poll string begins (base), and a lower number placed after
	// a higher one started the line would be marked below it, apart.
	v, d, err := storetest.Enter(ctx, s, "concert", lim, newID())
	if err != nil || !d.Placed || d.State != waitroom.StateWaiting {
		t.Fatalf("visitor 0: %+v, %v", d, err)
	}
	line[0] = v
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if i == 0 {
					continue
				}
				v, d, err := storetest.Enter(ctx, s, "concert", lim, newID())
				if err != nil || !d.Placed || d.State != waitroom.StateWaiting {
					t.Errorf("visitor %d: %+v, %v", i, d, err)
					return
				}
				line[i] = v
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	const key = "{wr:concert}:seen"
	before, err := client.Get(ctx, key).Bytes()
	if err != nil || len(before) != n*7 {
		t.Fatalf("last-poll string: %d bytes, %v; want %d", len(before), err, n*7)
	}
	at, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The script's first call loads it (EVAL); the count is of the calls after.
	if err := s.Touch(ctx, "concert", lim, line[:1]); err != nil {
		t.Fatal(err)
	}
	marks := append(append([]waitroom.Visitor(nil), line...), line[:500]...)
	rand.Shuffle(len(marks), func(i, j int) { marks[i], marks[j] = marks[j], marks[i] })
	commands(t, client, func() {
		if err := s.Touch(ctx, "concert", lim, marks); err != nil {
			t.Fatal(err)
		}
	}, map[string]int64{"evalsha": 2, "time": 2, "hget": 2, "strlen": 2, "bitfield": 3})
	after, err := client.Get(ctx, key).Bytes()
	if err != nil || len(after) != len(before) {
		t.Fatalf("last-poll string after the touch: %d bytes, %v; want %d", len(after), err, len(before))
	}
	end, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got := stampAt(after, i); got < at.UnixMicro() || got > end.UnixMicro() {
			t.Fatalf("entry %d stamped %d, not within the touch (%d to %d)", i, got, at.UnixMicro(), end.UnixMicro())
		}
	}

	far := []waitroom.Visitor{line[2999], line[0], line[1500]}
	commands(t, client, func() {
		if err := s.Touch(ctx, "concert", lim, far); err != nil {
			t.Fatal(err)
		}
	}, map[string]int64{"evalsha": 1, "time": 1, "hget": 1, "strlen": 1, "bitfield": 1})
	last, err := client.Get(ctx, key).Bytes()
	if err != nil || len(last) != len(before) {
		t.Fatalf("last-poll string after the sparse touch: %d bytes, %v", len(last), err)
	}
	base := line[0].Ticket // the line's first ticket: they were taken in any order
	for _, v := range line {
		base = min(base, v.Ticket)
	}
	for i := range n {
		t0 := base + int64(i)
		touched := t0 == line[0].Ticket || t0 == line[1500].Ticket || t0 == line[2999].Ticket
		if same := stampAt(last, i) == stampAt(after, i); same == touched {
			t.Errorf("entry %d (ticket %d): touched %v, but changed %v", i, t0, touched, !same)
		}
	}
}

// stampAt decodes entry i of a last-poll string: seven bytes, most
// significant first (stamp in prelude.lua).
func stampAt(b []byte, i int) int64 {
	var v int64
	for _, c := range b[i*7 : i*7+7] {
		v = v<<8 | int64(c)
	}
	return v
}
