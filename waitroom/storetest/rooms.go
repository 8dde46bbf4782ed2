package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// useRoom runs one UseRoom call on the next instance, for a template of
// the subtest's own.
func (e *env) useRoom(template, room string, max int, idle time.Duration) error {
	return e.store().UseRoom(context.Background(), e.room+"-"+template, room, max, idle)
}

// testUseRoomCap: a template holds at most max rooms in use, counted
// across instances, even when they all ask at once; a room in use is
// never refused, and another template counts its own.
func testUseRoomCap(t *testing.T, e *env) {
	const max, asking = 3, 12
	var mu sync.Mutex
	var in []string
	var wg sync.WaitGroup
	for i := range asking {
		wg.Go(func() {
			room := fmt.Sprint("r", i)
			err := e.useRoom("t", room, max, time.Minute)
			switch {
			case err == nil:
				mu.Lock()
				in = append(in, room)
				mu.Unlock()
			case !errors.Is(err, waitroom.ErrTooManyRooms):
				t.Errorf("UseRoom(%s): %v, want nil or ErrTooManyRooms", room, err)
			}
		})
	}
	wg.Wait()
	if len(in) != max {
		t.Fatalf("%d rooms asked at once, %d in use (%v), want %d", asking, len(in), in, max)
	}
	for range 2 * len(e.stores) {
		for _, room := range in {
			if err := e.useRoom("t", room, max, time.Minute); err != nil {
				t.Fatalf("a room in use, %s, again: %v", room, err)
			}
		}
		if err := e.useRoom("t", "late", max, time.Minute); !errors.Is(err, waitroom.ErrTooManyRooms) {
			t.Fatalf("a room past max: %v, want ErrTooManyRooms", err)
		}
	}
	if err := e.useRoom("other", "late", max, time.Minute); err != nil {
		t.Fatalf("another template's room: %v", err)
	}
	// A room in use stays in use under a smaller max, which only refuses
	// newcomers.
	if err := e.useRoom("t", in[0], 1, time.Minute); err != nil {
		t.Fatalf("a room in use under max 1: %v", err)
	}
	for _, idle := range []time.Duration{0, -time.Second} {
		if err := e.useRoom("t", in[0], max, idle); err == nil || errors.Is(err, waitroom.ErrTooManyRooms) {
			t.Errorf("idle %v: %v, want an error that is not ErrTooManyRooms", idle, err)
		}
	}
}

// testUseRoomIdle: a room not used for idle frees its place; one used
// within idle keeps it.
func testUseRoomIdle(t *testing.T, e *env) {
	const idle = 300 * time.Millisecond
	if err := e.useRoom("t", "first", 1, idle); err != nil {
		t.Fatal(err)
	}
	last := time.Now()
	for range 4 {
		time.Sleep(idle / 3)
		if err := e.useRoom("t", "second", 1, idle); !errors.Is(err, waitroom.ErrTooManyRooms) {
			within(t, last, idle, "a room used within idle keeping its place")
			t.Fatalf("a second room while the first is used: %v, want ErrTooManyRooms", err)
		}
		if err := e.useRoom("t", "first", 1, idle); err != nil {
			t.Fatalf("the first room, in use: %v", err)
		}
		last = time.Now()
	}
	time.Sleep(idle + 100*time.Millisecond)
	if err := e.useRoom("t", "second", 1, idle); err != nil {
		t.Fatalf("a second room after the first was idle for %v: %v", time.Since(last), err)
	}
	if err := e.useRoom("t", "first", 1, idle); !errors.Is(err, waitroom.ErrTooManyRooms) {
		t.Fatalf("the first room, back after idle: %v, want ErrTooManyRooms (its place was taken)", err)
	}
}

// testUseRoomProbe: a max of 0 asks whether a room is in use without
// counting one (the gate asks so before it spends a network's
// create_limit, Rooms.countedElsewhere): a room not in use is refused and
// takes no place, so another still fits under max 1; a room in use is
// never refused, on any instance.
func testUseRoomProbe(t *testing.T, e *env) {
	if err := e.useRoom("t", "new", 0, time.Minute); !errors.Is(err, waitroom.ErrTooManyRooms) {
		t.Fatalf("asking about a room not in use: %v, want ErrTooManyRooms", err)
	}
	if err := e.useRoom("t", "real", 1, time.Minute); err != nil {
		t.Fatalf("a room under max 1 after a question: %v (the question took a place)", err)
	}
	for range 2 * len(e.stores) {
		if err := e.useRoom("t", "real", 0, time.Minute); err != nil {
			t.Fatalf("asking about a room in use: %v, want nil", err)
		}
	}
	if err := e.useRoom("t", "new", 0, time.Minute); !errors.Is(err, waitroom.ErrTooManyRooms) {
		t.Fatalf("asking again about a room not in use: %v, want ErrTooManyRooms", err)
	}
}

// testIdleRoomForgotten: a room with an Idle that nobody uses is forgotten
// after about twice Idle (its line, its counts), once another room is
// created; one with an override keeps it, read the same by every instance;
// one that is ticked keeps its line. (A ticket of the forgotten room that
// comes back is a survivor of a data loss, which Decide's restore covers.)
func testIdleRoomForgotten(t *testing.T, e *env) {
	ctx := context.Background()
	lim := limits(0)
	lim.Idle = 300 * time.Millisecond
	e.wait(lim)
	ticked, closed := e.beside("ticked"), e.beside("closed")
	kept := ticked.wait(lim)
	closed.wait(lim)
	closed.setOverride(waitroom.Override{Mode: waitroom.ModeReject})

	last := time.Now()
	for start := time.Now(); time.Since(start) < 3*lim.Idle; time.Sleep(lim.Idle / 4) {
		within(t, last, lim.Idle/2, "ticks keeping a room")
		ticked.admit(lim)
		last = time.Now()
	}
	// Creating a room is when an embedded store looks for idle ones.
	if _, err := e.store().Decide(ctx, e.room+"-new", lim, waitroom.Visitor{ID: newVisitorID()}, waitroom.JoinTicket); err != nil {
		t.Fatal(err)
	}
	if st := e.stats(); st != (waitroom.Stats{}) {
		t.Errorf("room idle for %v: stats %+v, want an empty room", 3*lim.Idle, st)
	}
	within(t, last, lim.Idle/2, "ticks keeping a room")
	ticked.expect(lim, kept, waitroom.StateWaiting, 1)
	if o := closed.override(); o.Mode != waitroom.ModeReject {
		t.Errorf("override of an idle room: %s, want mode reject kept", describe(o))
	}
}
