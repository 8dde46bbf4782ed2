package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A hoarder keeps tickets that once held something, or were handed out
// before the challenge was on, and brings each back at the sale as a
// copied cookie in a fresh browser. In a room with a challenge such a
// ticket is a newcomer: it gets a challenge, never a number.

// solveIn takes a place in a challenge room as a browser does: the
// challenge, the work, the answer.
func solveIn(t *testing.T, v *visitor, client, path string) reply {
	t.Helper()
	prefix, bits := challengeOf(t, v.from(client, http.MethodGet, path))
	return v.from(client, http.MethodGet, path, waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, bits))
}

// challengedWith brings a kept ticket ("name=value") back in a fresh
// browser and wants a challenge and no ticket.
func challengedWith(t *testing.T, base, client, path, cookie, what string) {
	t.Helper()
	r := newVisitor(t, base).from(client, http.MethodGet, path, "Cookie", cookie)
	if r.state() != "challenge" || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("a ticket %s: %d %v, want a challenge and no ticket", what, r.status, r.json)
	}
}

// staleRoom lets one visitor in for a second, drops a waiting one after
// two seconds unseen, and asks for the challenge.
const staleRoom = "    max_active: 1\n    session_ttl: 1s\n    abandon_after: 2s\n    tick: 50ms\n    challenge: pow\n" +
	"    challenge_bits: 8\n    join_limit: 60/m\n    page: { refresh: 1s, refresh_max: 1s }"

// After leave, after abandonment and after the session ended, a kept
// ticket is challenged before it gets a number.
func TestStale_TicketsThatHoldNothingAreChallenged(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		app, base := startGateway(t, trustedConfig(site.URL, staleRoom, addr))
		inside, left, abandoned := newVisitor(t, base), newVisitor(t, base), newVisitor(t, base)
		if r := solveIn(t, inside, "198.51.100.1", "/events/1"); r.body != "site:/events/1" {
			t.Fatalf("the first solver goes in at once: %d %v", r.status, r.json)
		}
		ended := "waitroom_concert=" + inside.cookieValue("concert")
		if r := solveIn(t, left, "198.51.100.2", "/events/1"); r.state() != "waiting" {
			t.Fatalf("the second solver waits: %v", r.json)
		}
		kept := "waitroom_concert=" + left.cookieValue("concert")
		if r := left.do(http.MethodPost, "/.waitroom/leave?room=concert", "X-Forwarded-For", "198.51.100.2", "Accept", "application/json"); r.state() != "left" {
			t.Fatalf("leave: %d %v", r.status, r.json)
		}
		challengedWith(t, base, "198.51.100.2", "/events/1", kept, "after leave")

		if r := solveIn(t, abandoned, "198.51.100.3", "/events/1"); r.state() != "waiting" {
			t.Fatalf("the third solver waits: %v", r.json)
		}
		stale := "waitroom_concert=" + abandoned.cookieValue("concert")
		admin := newAdmin(t, app)
		time.Sleep(2500 * time.Millisecond) // abandon_after passes unseen, and the session's second
		waitFor(t, 10*time.Second, func() bool {
			_, m, _ := admin.do("GET", "/admin/api/rooms/concert", "")
			return num(m, "waiting") == 0 && num(m, "active") == 0
		})
		challengedWith(t, base, "198.51.100.3", "/events/1", stale, "after abandonment")
		challengedWith(t, base, "198.51.100.1", "/events/1", ended, "after its session ended")
	})
}

// Tickets handed out before an operator turned the challenge on carry no
// right to skip it: an unplaced one is challenged before it gets a
// number, and a status poll does not place it, while those already in
// line keep their places. Turned on by a reload of the file.
func TestStale_MintedBeforeTheChallengeByReload(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		room := "    max_active: 0\n    tick: 50ms\n    join_limit: 60/m"
		app, base, path, _ := fileGateway(t, trustedConfig(site.URL, room, addr), false)
		placed, minted := newVisitor(t, base), newVisitor(t, base)
		placed.from("198.51.100.1", http.MethodGet, "/events/1")
		if r := placed.from("198.51.100.1", http.MethodGet, "/events/1"); r.position() != 1 {
			t.Fatalf("the placed visitor: %v", r.json)
		}
		if r := minted.from("198.51.100.2", http.MethodGet, "/events/1"); r.state() != "waiting" {
			t.Fatalf("the minted ticket: %v", r.json)
		}
		stock := "waitroom_concert=" + minted.cookieValue("concert")
		rewrite(t, path, trustedConfig(site.URL, room+"\n    challenge: pow\n    challenge_bits: 8", addr))
		if err := app.Reload("test"); err != nil {
			t.Fatal(err)
		}
		poll := newVisitor(t, base).from("198.51.100.2", http.MethodGet, "/.waitroom/status?room=concert", "Cookie", stock)
		if poll.state() == "waiting" || poll.header.Get("Set-Cookie") != "" {
			t.Fatalf("a status poll placed a ticket minted before the challenge: %v", poll.json)
		}
		challengedWith(t, base, "198.51.100.2", "/events/1", stock, "minted before the challenge")
		if r := placed.from("198.51.100.1", http.MethodGet, "/events/1"); r.state() != "waiting" || r.position() != 1 {
			t.Fatalf("the visitor in line before the challenge: %v, want its place (1)", r.json)
		}
	})
}

// The same when the admin API turns the challenge on in a room it made.
func TestStale_MintedBeforeTheChallengeByAPI(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		app, base := startGateway(t, trustedConfig(site.URL, "    max_active: 0", addr))
		admin := newAdmin(t, app)
		const open = `"max_active":0,"tick":"50ms","join_limit":"60/m","routes":[{"path":"/presale/","upstream":"site"}]`
		if code, _, body := admin.do("POST", "/admin/api/rooms", `{"name":"presale",`+open+`}`); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		minted := newVisitor(t, base)
		waitFor(t, 5*time.Second, func() bool { return minted.from("198.51.100.2", http.MethodGet, "/presale/x").state() == "waiting" })
		stock := "waitroom_presale=" + minted.cookieValue("presale")
		if code, _, body := admin.do("PUT", "/admin/api/rooms/presale", `{"challenge":"pow","challenge_bits":8,`+open+`}`); code != 200 {
			t.Fatalf("replace: %d %s", code, body)
		}
		waitFor(t, 5*time.Second, func() bool {
			return newVisitor(t, base).from("198.51.100.9", http.MethodGet, "/presale/y").state() == "challenge"
		})
		challengedWith(t, base, "198.51.100.2", "/presale/x", stock, "minted before the API turned the challenge on")
	})
}
