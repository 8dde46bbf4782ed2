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

// refused wants a quota refusal that takes no number and waits about want
// (less by the seconds a busy machine took over the places before it).
func refused(t *testing.T, what string, d waitroom.Decision, want time.Duration) {
	t.Helper()
	if d.Refusal != waitroom.RefusedQuota || d.Ticket != 0 || d.State != waitroom.StateNone ||
		d.RetryAfter < want-5*time.Second || d.RetryAfter > want+clockSlack {
		t.Fatalf("%s: %+v, want RefusedQuota, no number, RetryAfter about %v", what, d, want)
	}
}

// ticket is a newcomer's first request from network in block ("" for
// none), and the visitor its ticket then says: a number, or loose.
func (e *env) ticket(lim waitroom.Limits, network, block string) (waitroom.Visitor, waitroom.Decision) {
	e.t.Helper()
	v := waitroom.Visitor{ID: newVisitorID(), Network: network, Block: block, Issued: time.Now(), Seen: time.Now()}
	d, err := e.store().Decide(context.Background(), e.room, lim, v, waitroom.JoinTicket)
	if err != nil {
		e.t.Fatalf("Decide(%s, %s): %v", network, block, err)
	}
	v.Ticket, v.Placed, v.Loose = d.Ticket, d.Placed, d.State == waitroom.StateWaiting && d.Ticket == 0
	return v, d
}

// solved is a solved challenge for number, from network in block.
func solved(number int64, network, block string) waitroom.Visitor {
	return waitroom.Visitor{ID: newVisitorID(), Ticket: number, Network: network, Block: block, Issued: time.Now(),
		Seen: time.Now(), Challenge: newVisitorID(), ChallengeUntil: time.Now().Add(time.Minute)}
}

// placed wants d to be a place taken.
func placed(t *testing.T, what string, d waitroom.Decision) {
	t.Helper()
	if d.Refusal != "" || !d.Placed || d.State == waitroom.StateNone {
		t.Fatalf("%s: %+v, want a place", what, d)
	}
}

// testJoinCeiling: what a network's quota counts is places taken (tickets
// brought back, challenges solved), not first requests: a network's
// places stop at JoinLimit.N ahead of its pace, a challenge's at
// ChallengeJoinFactor times that, however much work would follow. Past
// it, a refusal with a wait and no place, and nothing counted; its
// newcomers are then refused before they take a number.
func testJoinCeiling(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 3, Per: time.Hour} // one every 20 minutes
	var tickets []waitroom.Visitor
	for i := range 10 { // first requests that take nothing from the quota
		v, d := e.ticket(lim, "net-a", "")
		if d.Refusal != "" || d.State != waitroom.StateWaiting || d.Placed {
			t.Fatalf("first request %d of net-a: %+v, want a ticket", i+1, d)
		}
		tickets = append(tickets, v)
	}
	for i, v := range []waitroom.Visitor{tickets[0], tickets[1], tickets[9]} { // two numbered, one loose
		placed(t, fmt.Sprintf("ticket %d of net-a brought back", i+1), e.decide(lim, v, false))
	}
	d := e.decide(lim, tickets[2], false)
	refused(t, "net-a's fourth ticket brought back", d, 20*time.Minute)
	refused(t, "net-a's newcomer past its places", e.ask(lim, "net-a", "", waitroom.JoinTicket), 20*time.Minute)
	most := 3 * waitroom.ChallengeJoinFactor
	var numbers []int64
	for i := range most + 2 { // numbers count nothing until solved (past PendingPerNetwork they are 0)
		d := e.ask(lim, "net-b", "", waitroom.JoinNumber)
		if d.Refusal != "" || (d.Ticket == 0) != (i >= waitroom.PendingPerNetwork) || d.Recent != 0 {
			t.Fatalf("number %d of net-b: %+v, want a number (0 past %d), nothing recent", i+1, d, waitroom.PendingPerNetwork)
		}
		numbers = append(numbers, d.Ticket)
	}
	for i := range most {
		placed(t, fmt.Sprintf("net-b's challenge %d solved", i+1), e.decide(lim, solved(numbers[i], "net-b", ""), false))
	}
	late := solved(numbers[most], "net-b", "")
	refused(t, "a solved challenge past net-b's ceiling", e.decide(lim, late, false), 20*time.Minute)
	refused(t, "a number past net-b's ceiling", e.ask(lim, "net-b", "", waitroom.JoinNumber), 20*time.Minute)
	other := solved(numbers[most+1], "net-c", "") // the challenge was not spent by the refusal
	other.Challenge = late.Challenge
	placed(t, "the refused challenge from another network", e.decide(lim, other, false))
}

// testBlockCeiling: the networks of one block share BlockFactor times a
// network's allowance of places, counted in the same call; a refusal
// counts nothing against the refused network, and another block is not
// affected.
func testBlockCeiling(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 1, Per: time.Hour}
	for i := range waitroom.BlockFactor {
		v, d := e.ticket(lim, fmt.Sprintf("a%d", i), "block-a")
		if d.Refusal != "" {
			t.Fatalf("network %d of block-a: %+v", i+1, d)
		}
		placed(t, fmt.Sprintf("network %d of block-a brought its ticket back", i+1), e.decide(lim, v, false))
	}
	refused(t, "a fresh network of a full block", e.ask(lim, "a-late", "block-a", waitroom.JoinTicket), time.Hour/waitroom.BlockFactor)
	if v, d := e.ticket(lim, "a-late", "block-b"); d.Refusal != "" {
		t.Fatalf("the refused network's own quota was spent: %+v", d)
	} else {
		placed(t, "the refused network in another block", e.decide(lim, v, false))
	}
	// A challenge's places: ChallengeJoinFactor times as many per block.
	n := 0
	for i := 0; n < waitroom.ChallengeJoinFactor*waitroom.BlockFactor; i++ {
		for range waitroom.ChallengeJoinFactor {
			net := fmt.Sprintf("c%d", i)
			d := e.ask(lim, net, "block-c", waitroom.JoinNumber)
			if d.Refusal != "" {
				t.Fatalf("number %d of block-c: %+v", n+1, d)
			}
			placed(t, fmt.Sprintf("place %d of block-c", n+1), e.decide(lim, solved(d.Ticket, net, "block-c"), false))
			n++
		}
	}
	refused(t, "a number past block-c's ceiling", e.ask(lim, "c-late", "block-c", waitroom.JoinNumber), time.Hour/waitroom.BlockFactor)
}

// testFloodTakesNothing: a flood of first requests that never come back
// spends no place of its network's quota, so a neighbour in the same
// network gets its place; past PendingPerNetwork its tickets are loose
// (no number, counted by nobody), so it moves nobody's position by more
// than twice that, and no position shown grows; a loose ticket brought
// back takes a place at the back, counted like any other.
func testFloodTakesNothing(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 3, Per: time.Hour}
	first, _ := e.ticket(lim, "net-f", "")
	first, d := e.place(lim, first)
	if d.Position != 1 {
		t.Fatalf("the first visitor: %+v, want position 1", d)
	}
	const flood = 200
	loose := 0
	for i := range flood {
		v, d := e.ticket(lim, "net-f", "")
		if d.Refusal != "" || d.State != waitroom.StateWaiting {
			t.Fatalf("flood request %d: %+v, want a ticket", i+1, d)
		}
		if v.Loose {
			loose++
			if d.Position != 0 || d.Line != 0 {
				t.Fatalf("a loose ticket: %+v, want no position", d)
			}
		}
	}
	if counted := flood - loose; counted > 2*waitroom.PendingPerNetwork {
		t.Fatalf("%d of %d flood tickets are counted in the places behind, want at most %d", counted, flood, 2*waitroom.PendingPerNetwork)
	}
	bound := int64(2 * waitroom.PendingPerNetwork)
	// A neighbour of the flood, and a visitor of another network: each
	// is placed, no more than bound behind where it would be without it.
	neighbour, d := e.ticket(lim, "net-f", "")
	if d.Refusal != "" {
		t.Fatalf("the flood's neighbour: %+v, want a ticket", d)
	}
	d = e.decide(lim, neighbour, false)
	placed(t, "the flood's neighbour brought its ticket back", d)
	if d.Position < 2 || d.Position > 2+bound {
		t.Fatalf("the flood's neighbour placed: %+v, want position 2 to %d", d, 2+bound)
	}
	other, d := e.ticket(lim, "net-g", "")
	if d.Position > 3+bound {
		t.Fatalf("a newcomer after a flood of %d: %+v, want position at most %d", flood, d, 3+bound)
	}
	shown := d.Position
	other, d = e.place(lim, other)
	if d.Position > shown {
		t.Fatalf("a position shown grew from %d to %d when its ticket came back", shown, d.Position)
	}
	e.expect(lim, first, waitroom.StateWaiting, 1)
	// Challenges fetched and never solved: past the allowance they carry
	// no number; one solved still takes a place, at the back.
	var numberless int64
	var line int64
	for i := range flood {
		d := e.ask(lim, "net-h", "", waitroom.JoinNumber)
		if d.Refusal != "" {
			t.Fatalf("challenge %d of net-h: %+v", i+1, d)
		}
		if d.Ticket == 0 {
			numberless++
		}
	}
	if counted := flood - numberless; counted > 2*waitroom.PendingPerNetwork {
		t.Fatalf("%d of %d unsolved challenges are counted in the places behind, want at most %d", counted, flood, 2*waitroom.PendingPerNetwork)
	}
	d = e.decide(lim, solved(0, "net-h", ""), false)
	placed(t, "a challenge with no number, solved", d)
	if line = e.expect(lim, other, waitroom.StateWaiting, e.decide(lim, other, false).Position).Position; d.Position <= line {
		t.Fatalf("a challenge with no number solved: position %d, want behind %d", d.Position, line)
	}
	// The flood's own tickets that come back spend the quota: one more
	// place (3 an hour), then refusals.
	var back []waitroom.Visitor
	for range 3 {
		v, d := e.ticket(lim, "net-f", "")
		if d.Refusal != "" {
			t.Fatalf("net-f's ticket with a place left: %+v", d)
		}
		back = append(back, v)
	}
	placed(t, "net-f's third place", e.decide(lim, back[0], false))
	// The first place was taken before the flood, which may take a
	// while on a busy machine: the wait is under 20 minutes by that.
	if d := e.decide(lim, back[1], false); d.Refusal != waitroom.RefusedQuota || d.State != waitroom.StateNone ||
		d.RetryAfter < 15*time.Minute || d.RetryAfter > 20*time.Minute+clockSlack {
		t.Fatalf("net-f's fourth place: %+v, want RefusedQuota, no place, a wait of up to 20 minutes", d)
	}
}

// testChallengeLifetime: a solved challenge buys a place while it lives
// (Visitor.ChallengeUntil), once: at its number within the placement
// window, after it at the back, so the places behind its number, which
// stopped counting it, do not grow; past its end it buys nothing.
func testChallengeLifetime(t *testing.T, e *env) {
	lim := limits(0)
	// The window must outlast the two calls that issue and place quick's
	// ticket: at 50ms a quiet CI machine's stall between them lost it
	// ("brought back: got none"). The test waits the window out once.
	lim.PlaceWithin = 500 * time.Millisecond
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
