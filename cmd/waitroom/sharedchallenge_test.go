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
