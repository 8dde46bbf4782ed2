package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// ask is a newcomer's request from network, in block ("" for none).
func (e *env) ask(lim waitroom.Limits, network, block string, join waitroom.Join) waitroom.Decision {
	e.t.Helper()
	v := waitroom.Visitor{ID: newVisitorID(), Network: network, Block: block, Issued: time.Now(), Seen: time.Now()}
	d, err := e.store().Decide(context.Background(), e.room, lim, v, join)
	if err != nil {
		e.t.Fatalf("Decide(%s, %s): %v", network, block, err)
	}
	return d
}

// refused wants a quota refusal that takes no number and waits about want.
func refused(t *testing.T, what string, d waitroom.Decision, want time.Duration) {
	t.Helper()
	if d.Refusal != waitroom.RefusedQuota || d.Ticket != 0 || d.State != waitroom.StateNone ||
		d.RetryAfter < want-time.Second || d.RetryAfter > want+clockSlack {
		t.Fatalf("%s: %+v, want RefusedQuota, no number, RetryAfter about %v", what, d, want)
	}
}

// testJoinCeiling: a network's new tickets stop at JoinLimit.N ahead of
// its pace, and a challenge's numbers (JoinNumber) at ChallengeJoinFactor
// times that, however much work would follow: past it, a refusal with a
// wait and no number, and nothing counted.
func testJoinCeiling(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 3, Per: time.Hour} // one every 20 minutes
	for i := range 3 {
		if d := e.ask(lim, "net-a", "", waitroom.JoinTicket); d.Refusal != "" || d.Ticket == 0 {
			t.Fatalf("ticket %d of net-a: %+v", i+1, d)
		}
	}
	refused(t, "net-a's fourth ticket", e.ask(lim, "net-a", "", waitroom.JoinTicket), 20*time.Minute)
	issued := e.stats().Issued
	most := 3 * waitroom.ChallengeJoinFactor
	for i := range most {
		if d := e.ask(lim, "net-b", "", waitroom.JoinNumber); d.Refusal != "" || d.Ticket == 0 || d.Recent != int64(i+1) {
			t.Fatalf("number %d of net-b: %+v, want a number, %d recent", i+1, d, i+1)
		}
	}
	for range 3 {
		refused(t, "a number past net-b's ceiling", e.ask(lim, "net-b", "", waitroom.JoinNumber), 20*time.Minute)
	}
	if got := e.stats().Issued - issued; got != int64(most) {
		t.Errorf("net-b took %d numbers, want %d", got, most)
	}
}

// testBlockCeiling: the networks of one block share BlockFactor times a
// network's allowance, counted in the same call; a refusal counts nothing
// against the refused network, and another block is not affected.
func testBlockCeiling(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 1, Per: time.Hour}
	for i := range waitroom.BlockFactor {
		if d := e.ask(lim, fmt.Sprintf("a%d", i), "block-a", waitroom.JoinTicket); d.Refusal != "" || d.Ticket == 0 {
			t.Fatalf("network %d of block-a: %+v", i+1, d)
		}
	}
	refused(t, "a fresh network of a full block", e.ask(lim, "a-late", "block-a", waitroom.JoinTicket), time.Hour/waitroom.BlockFactor)
	if d := e.ask(lim, "a-late", "block-b", waitroom.JoinTicket); d.Refusal != "" {
		t.Fatalf("the refused network's own quota was spent: %+v", d)
	}
	// A challenge's numbers: ChallengeJoinFactor times as many per block.
	n := 0
	for i := 0; n < waitroom.ChallengeJoinFactor*waitroom.BlockFactor; i++ {
		for range waitroom.ChallengeJoinFactor {
			if d := e.ask(lim, fmt.Sprintf("c%d", i), "block-c", waitroom.JoinNumber); d.Refusal != "" {
				t.Fatalf("number %d of block-c: %+v", n+1, d)
			}
			n++
		}
	}
	refused(t, "a number past block-c's ceiling", e.ask(lim, "c-late", "block-c", waitroom.JoinNumber), time.Hour/waitroom.BlockFactor)
}

// testChallengeLifetime: a solved challenge buys a place while it lives
// (Visitor.ChallengeUntil), once: at its number within the placement
// window, after it at the back, so the places behind its number, which
// stopped counting it, do not grow; past its end it buys nothing.
func testChallengeLifetime(t *testing.T, e *env) {
	lim := limits(0)
	lim.PlaceWithin = 50 * time.Millisecond
	solved := func(ticket int64, until time.Time) waitroom.Visitor {
		return waitroom.Visitor{ID: newVisitorID(), Ticket: ticket, Issued: time.Now(), Seen: time.Now(),
			Challenge: newVisitorID(), ChallengeUntil: until}
	}
	slow := solved(e.ask(lim, "", "", waitroom.JoinNumber).Ticket, time.Now().Add(time.Minute))
	gone := solved(e.ask(lim, "", "", waitroom.JoinNumber).Ticket, time.Now().Add(-time.Millisecond))
	quick, d := e.join(lim)
	if d.Position != 3 {
		t.Fatalf("a visitor behind two unsolved challenges: %+v, want position 3", d)
	}
	stop := time.Now().Add(deadline)
	for e.decide(lim, quick, false).Position != 1 {
		if time.Now().After(stop) {
			t.Fatal("the placement window never passed the challenges' numbers")
		}
		e.admit(lim)
		time.Sleep(20 * time.Millisecond)
	}
	if d := e.decide(lim, gone, false); d.State != waitroom.StateNone {
		t.Fatalf("a challenge past its end: %+v, want nothing", d)
	}
	d = e.decide(lim, slow, false)
	if d.State != waitroom.StateWaiting || !d.Placed || d.Ticket <= quick.Ticket || d.Position != 2 {
		t.Fatalf("a challenge solved after the window: %+v, want a place at the back (2)", d)
	}
	e.expect(lim, quick, waitroom.StateWaiting, 1)
	again := slow
	again.ID = newVisitorID()
	if d := e.decide(lim, again, false); d.Refusal != waitroom.RefusedChallenge {
		t.Fatalf("the same challenge again: %+v, want RefusedChallenge", d)
	}
}
