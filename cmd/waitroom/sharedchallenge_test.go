package main

import (
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
)

// Inside a shared range a challenge is bound to the /24, not the address:
// a carrier's NAT that gives each connection of one phone another address
// still lets the phone spend its own solution.
func TestChallenge_SharedRangeRotatingAddress(t *testing.T) {
	_, site := newUpstream(t)
	_, base := startGateway(t, sharedCarrier(trustedConfig(site.URL, challengeRoom, "")))
	phone := newVisitor(t, base)
	prefix, bits := challengeOf(t, phone.from("100.64.1.7", http.MethodGet, "/events/1"))
	r := phone.from("100.64.1.8", http.MethodGet, "/events/1", waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, bits))
	if r.state() != "waiting" || r.position() != 1 {
		t.Fatalf("a solution sent from the next address of the carrier's /24: %d %v, want waiting at 1", r.status, r.json)
	}
	// Another /24 of the carrier is another network: the solution is not its.
	other := newVisitor(t, base)
	p2, b2 := challengeOf(t, other.from("100.64.1.9", http.MethodGet, "/events/1"))
	if r := other.from("100.64.2.9", http.MethodGet, "/events/1", waitroom.ChallengeHeader, p2+":"+challenge.Solve(p2, b2)); r.state() != "challenge" {
		t.Fatalf("a solution sent from another /24: %d %v, want a fresh challenge", r.status, r.json)
	}
}

// One address of a NAT asking for challenges as fast as it can, never
// solving them, takes no more than PendingPerClient of its /24's pending
// allowance: a neighbour at the next address still gets a challenge with
// a number, so solved it keeps its place ahead of a visitor who arrived
// later, rather than going to the back.
func TestChallenge_FlooderLeavesNeighbourANumber(t *testing.T) {
	_, site := newUpstream(t)
	room := "    max_active: 0\n    tick: 50ms\n    challenge: pow\n    challenge_bits: 8\n    challenge_max_bits: 8\n    join_limit: 60/m"
	_, base := startGateway(t, trustedConfig(site.URL, room, ""))
	for range 20 {
		challengeOf(t, newVisitor(t, base).from("203.0.113.7", http.MethodGet, "/events/1"))
	}
	neighbour := newVisitor(t, base)
	prefix, bits := challengeOf(t, neighbour.from("203.0.113.8", http.MethodGet, "/events/1"))
	later := newVisitor(t, base)
	lp, lb := challengeOf(t, later.from("198.51.100.1", http.MethodGet, "/events/1"))
	if r := later.from("198.51.100.1", http.MethodGet, "/events/1", waitroom.ChallengeHeader, lp+":"+challenge.Solve(lp, lb)); r.state() != "waiting" {
		t.Fatalf("the later visitor's solution: %d %v", r.status, r.json)
	}
	r := neighbour.from("203.0.113.8", http.MethodGet, "/events/1", waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, bits))
	// Ahead of it at most the flooder's own pending numbers.
	if r.state() != "waiting" || r.position() > 1+waitroom.PendingPerClient {
		t.Fatalf("the flooder's neighbour, solved: %d %v, want waiting at most at %d", r.status, r.json, 1+waitroom.PendingPerClient)
	}
	if l := later.from("198.51.100.1", http.MethodGet, "/events/1"); l.position() <= r.position() {
		t.Fatalf("the later visitor at %d, the neighbour at %d: want the neighbour ahead (its challenge's number)", l.position(), r.position())
	}
}
