package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// challengeRoom asks newcomers for a little work (8 bits, fast in a test),
// one more bit per doubling past 2 tickets ahead of a 5/m pace.
const challengeRoom = "    max_active: 0\n    tick: 50ms\n    challenge: pow\n    challenge_bits: 8\n" +
	"    challenge_free: 2\n    join_limit: 5/m\n    page: { refresh: 1s }"

// challengeOf reads a challenge answer's work.
func challengeOf(t *testing.T, r reply) (string, int) {
	t.Helper()
	c, _ := r.json["challenge"].(map[string]any)
	prefix, _ := c["prefix"].(string)
	bits, _ := c["bits"].(float64)
	if r.state() != "challenge" || prefix == "" {
		t.Fatalf("want a challenge, got %d %v", r.status, r.json)
	}
	return prefix, int(bits)
}

// A client that does not do the work never gets a place, however often it
// asks, and its asking spends nothing of its network's join_limit (the
// quota counts places taken), so a neighbour in its /24 who does the work
// gets a place; a client that solves as docs/challenge.md says gets its
// ticket and its place in arrival order.
func TestChallenge_OnlyWorkBuysAPlace(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		app, base := startGateway(t, trustedConfig(site.URL, challengeRoom, addr))

		// Solved first, arrived first: it keeps the number it was given.
		early := newVisitor(t, base)
		prefix, bits := challengeOf(t, early.from("198.51.100.1", http.MethodGet, "/events/1"))

		lazy := newVisitor(t, base)
		for i := range 3 * 5 { // three times join_limit
			r := lazy.from("203.0.113.7", http.MethodGet, "/events/1")
			challengeOf(t, r)
			if r.header.Get("Set-Cookie") != "" || lazy.cookieValue("concert") != "" {
				t.Fatalf("request %d without the work got a ticket", i)
			}
		}
		// A made-up or copied answer buys nothing either.
		if r := lazy.from("203.0.113.7", http.MethodGet, "/events/1", "Waitroom-Challenge", prefix+":"+challenge.Solve(prefix, bits)); r.state() != "challenge" {
			t.Fatalf("another network's solution: %v", r.json)
		}

		nonce := challenge.Solve(prefix, bits)
		r := early.from("198.51.100.1", http.MethodGet, "/events/1", "Waitroom-Challenge", prefix+":"+nonce)
		if r.state() != "waiting" || r.position() != 1 || early.cookieValue("concert") == "" {
			t.Fatalf("the solver: %d %v", r.status, r.json)
		}
		if r := early.from("198.51.100.1", http.MethodGet, "/events/1", "Waitroom-Challenge", prefix+":"+nonce); r.state() != "waiting" || r.position() != 1 {
			t.Fatalf("the solver again, with its ticket: %v", r.json)
		}
		replay := newVisitor(t, base)
		if r := replay.from("198.51.100.1", http.MethodGet, "/events/1", "Waitroom-Challenge", prefix+":"+nonce); r.state() != "challenge" {
			t.Fatalf("the same solution from another browser: %v, want a fresh challenge", r.json)
		}
		// Behind the lazy client's unsolved numbers, no more than its
		// network's pending allowance of them (twice PendingPerNetwork).
		most := 2 + 2*waitroom.PendingPerNetwork
		if r := solveIn(t, newVisitor(t, base), "203.0.113.8", "/events/1"); r.state() != "waiting" || r.position() < 2 || r.position() > most {
			t.Fatalf("the lazy client's neighbour who does the work: %d %v, want position 2 to %d", r.status, r.json, most)
		}
		waitFor(t, 2*time.Second, func() bool {
			_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
			return num(m, "waiting") == 2
		})
	})
}

// Real Chromium joins a room with a challenge without a click: the page
// does the work, gets its ticket and shows its place.
func TestBrowser_ChallengeWithoutAClick(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	_, srv := newSite(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 100ms\n    challenge: pow\n    challenge_bits: 12\n    page: { refresh: 1s }"))
	tab := newBrowserVisitor(t, browser)
	brDo(t, tab, "open the room", chromedp.Navigate(base+"/events/show?seat=A1"))
	brWaitJS(t, tab, "a place in line after the browser's check",
		`document.getElementById('wr-main').dataset.state === 'waiting' && document.getElementById('wr-pos').textContent === '1'`)
	if id := browserVisitorID(t, tab, base, "concert"); id == "" {
		t.Fatal("no ticket after the check")
	}
}

// A challenge lives challenge_ttl, not the placement window: a phone that
// solves after the window still gets a place, at the back, behind the
// visitor placed meanwhile, whose position does not grow.
func TestChallenge_LivesChallengeTTL(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		room := "    max_active: 0\n    abandon_after: 2s\n    tick: 50ms\n    challenge: pow\n    challenge_bits: 8\n" +
			"    challenge_ttl: 30s\n    join_limit: 60/m\n    page: { refresh: 1s, refresh_max: 1s }"
		_, base := startGateway(t, trustedConfig(site.URL, room, addr))
		slow, quick := newVisitor(t, base), newVisitor(t, base)
		prefix, bits := challengeOf(t, slow.from("198.51.100.1", http.MethodGet, "/events/1"))
		if r := solveIn(t, quick, "203.0.113.5", "/events/1"); r.state() != "waiting" || r.position() != 2 {
			t.Fatalf("a visitor behind an unsolved challenge: %v, want position 2", r.json)
		}
		// The placement window (2s here) passes while the phone works; the
		// quick visitor keeps polling.
		waitFor(t, 10*time.Second, func() bool {
			time.Sleep(200 * time.Millisecond)
			return quick.from("203.0.113.5", http.MethodGet, "/.waitroom/status?room=concert").position() == 1
		})
		r := slow.from("198.51.100.1", http.MethodGet, "/events/1", waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, bits))
		if r.state() != "waiting" || r.position() != 2 {
			t.Fatalf("a challenge solved after the placement window: %d %v, want a place at the back (2)", r.status, r.json)
		}
		if r := quick.from("203.0.113.5", http.MethodGet, "/events/1"); r.position() != 1 {
			t.Fatalf("the visitor placed meanwhile: %v, want still 1", r.json)
		}
	})
}
