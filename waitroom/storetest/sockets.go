package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// socket runs one Socket call on the next instance.
func (e *env) socket(lim waitroom.Limits, visitor, id string, op waitroom.SocketOp, every time.Duration) error {
	return e.store().Socket(context.Background(), e.room, lim, visitor, id, op, every)
}

// testSocketsPerSession: one session holds at most MaxSockets sockets,
// counted across instances; a closed socket frees its place, a socket no
// longer held stops counting after three holds' time, and one that was
// never admitted or whose session ended is told so.
func testSocketsPerSession(t *testing.T, e *env) {
	lim := limits(1)
	lim.MaxSockets = 2
	every := 200 * time.Millisecond
	in := e.enter(lim)
	for i := range 2 {
		if err := e.socket(lim, in.ID, fmt.Sprint("s", i), waitroom.SocketOpen, every); err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
	}
	if err := e.socket(lim, in.ID, "s2", waitroom.SocketOpen, every); !errors.Is(err, waitroom.ErrTooManySockets) {
		t.Fatalf("a third socket: %v, want ErrTooManySockets", err)
	}
	// Opening one already counted is not another.
	if err := e.socket(lim, in.ID, "s1", waitroom.SocketOpen, every); err != nil {
		t.Fatalf("reopening s1: %v", err)
	}
	if err := e.socket(lim, in.ID, "s0", waitroom.SocketClose, every); err != nil {
		t.Fatal(err)
	}
	if err := e.socket(lim, in.ID, "s2", waitroom.SocketOpen, every); err != nil {
		t.Fatalf("after a close: %v", err)
	}
	// s1 and s2 stop being held (their instance died): after three holds'
	// time they count no more.
	time.Sleep(3*every + 100*time.Millisecond)
	for _, id := range []string{"s3", "s4"} {
		if err := e.socket(lim, in.ID, id, waitroom.SocketOpen, every); err != nil {
			t.Fatalf("after the others went stale, %s: %v", id, err)
		}
	}
	if err := e.socket(lim, in.ID, "s5", waitroom.SocketOpen, every); !errors.Is(err, waitroom.ErrTooManySockets) {
		t.Fatalf("past the cap again: %v", err)
	}
	if err := e.socket(lim, in.ID, "s3", waitroom.SocketHold, every); err != nil {
		t.Fatalf("holding a live socket: %v", err)
	}
	// Nobody inside has no sockets.
	out := e.wait(lim)
	if err := e.socket(lim, out.ID, "w", waitroom.SocketOpen, every); !errors.Is(err, waitroom.ErrNotFound) {
		t.Fatalf("a waiting visitor's socket: %v, want ErrNotFound", err)
	}
	// The session ends: every hold says so, from any instance.
	e.mustRelease(in.ID)
	for _, id := range []string{"s3", "s4"} {
		if err := e.socket(lim, in.ID, id, waitroom.SocketHold, every); !errors.Is(err, waitroom.ErrNotFound) {
			t.Fatalf("holding %s after the release: %v, want ErrNotFound", id, err)
		}
	}
	if err := e.socket(lim, in.ID, "s3", waitroom.SocketClose, every); err != nil {
		t.Fatalf("closing after the end: %v", err)
	}
}

// testSocketEndsWithSession: a session that expires or reaches
// SessionMax ends its sockets too.
func testSocketEndsWithSession(t *testing.T, e *env) {
	lim := limits(1)
	lim.SessionTTL = 300 * time.Millisecond
	in := e.enter(lim)
	if err := e.socket(lim, in.ID, "a", waitroom.SocketOpen, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lim.SessionTTL + 100*time.Millisecond)
	if err := e.socket(lim, in.ID, "a", waitroom.SocketHold, 100*time.Millisecond); !errors.Is(err, waitroom.ErrNotFound) {
		t.Fatalf("holding past the session's end: %v, want ErrNotFound", err)
	}
}

// testAllowance: a network's allowance is one across instances: N at once,
// then refused with the wait until the next; another network and another
// kind are untouched, and an unlimited one never refuses.
func testAllowance(t *testing.T, e *env) {
	limit := waitroom.Rate{N: 3, Per: time.Minute}
	ctx := context.Background()
	for i := range 3 {
		if wait, err := e.store().Allow(ctx, e.room, "preflight", "net-a", limit); err != nil || wait != 0 {
			t.Fatalf("unit %d: wait %v, %v", i+1, wait, err)
		}
	}
	wait, err := e.store().Allow(ctx, e.room, "preflight", "net-a", limit)
	if err != nil || wait < 19*time.Second || wait > 20*time.Second+clockSlack {
		t.Fatalf("fourth unit: wait %v, %v; want about 20s", wait, err)
	}
	if wait, err := e.store().Allow(ctx, e.room, "preflight", "net-b", limit); err != nil || wait != 0 {
		t.Fatalf("another network: wait %v, %v", wait, err)
	}
	if wait, err := e.store().Allow(ctx, e.room, "other", "net-a", limit); err != nil || wait != 0 {
		t.Fatalf("another kind: wait %v, %v", wait, err)
	}
	// The join quota of net-a is its own: a newcomer from it still joins.
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 1, Per: time.Minute}
	if d, err := e.store().Decide(ctx, e.room, lim, waitroom.Visitor{ID: newVisitorID(), Network: "net-a"}, waitroom.JoinTicket); err != nil || d.Refusal != "" {
		t.Fatalf("a join from net-a: %+v, %v", d, err)
	}
	for range 10 {
		if wait, err := e.store().Allow(ctx, e.room, "preflight", "net-c", waitroom.Rate{}); err != nil || wait != 0 {
			t.Fatalf("unlimited: wait %v, %v", wait, err)
		}
	}
}
