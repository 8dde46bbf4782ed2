package waitroom

import (
	"testing"
	"time"
)

// A cookie's ticket raises Visitor.Known only within MendMax of the
// highest number the store confirmed: one rival deployment's ticket (the
// same cookie keys and room name) seen once moves it no further, while a
// ticket a failover may have lost (just past the counter) still does, and
// before the store confirmed anything a cookie counts (a full loss is
// found by a cookie's ticket below the new seed).
func TestKnownTickets_CookieFarPastConfirmedRaisesNothingFar(t *testing.T) {
	now := time.Now()
	var k knownTickets
	k.seeCookie(5000, now)
	if got := k.hint(now, Limits{}); got != 5000 {
		t.Errorf("a cookie before any confirmation: hint %d, want 5000", got)
	}
	k.see(4000, now) // the store's answer
	k.seeCookie(4000+1<<30, now)
	if got := k.hint(now, Limits{}); got != 5000 {
		t.Errorf("a cookie 2^30 past the confirmed 4000: hint %d, want 5000 (it raises nothing)", got)
	}
	var p knownTickets
	p.seeCookie(4000+1<<30, now) // before the store confirmed anything
	p.see(4000, now)
	if got := p.hint(now, Limits{}); got != 4000 {
		t.Errorf("a cookie 2^30 past what the store then confirmed: hint %d, want 4000", got)
	}
	var j knownTickets
	j.see(4000, now)
	j.seeCookie(4010, now)
	if got := j.hint(now, Limits{}); got != 4010 {
		t.Errorf("a cookie 10 past the confirmed 4000: hint %d, want 4010", got)
	}
}
