package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A browser's leave (the page's form, no script needed) is answered 303
// See Other to a GET page, so a reload asks for that page and posts
// nothing; client.js, asking for JSON, gets JSON as before.
func TestLeave_FormIsSentOnToAGetPage(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	a, b := newVisitor(t, base), newVisitor(t, base)
	a.getJSON("/events/1")
	a.getJSON("/events/1") // back with its ticket: its place
	b.getJSON("/events/1")
	b.getJSON("/events/1")
	r := a.do(http.MethodPost, "/.waitroom/leave?room=concert&return_to=%2Fevents%2F1", "Sec-Fetch-Site", "same-origin", "Accept", "text/html")
	const want = "/.waitroom/left?return_to=%2Fevents%2F1&room=concert"
	if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
		t.Fatalf("the form's POST: %d Location %q, want 303 to %s", r.status, r.header.Get("Location"), want)
	}
	if cleared := strings.Join(r.header.Values("Set-Cookie"), "; "); !strings.Contains(cleared, "waitroom_concert=;") {
		t.Fatalf("the 303 must clear the room cookie: %q", cleared)
	}
	if p := b.getJSON("/events/1").position(); p != 1 {
		t.Fatalf("the visitor behind must move up to 1, got %d", p)
	}
	// The visitor joins again; the page the leave ended on, loaded again
	// (a reload), gives nothing up.
	a.getJSON("/events/1")
	a.getJSON("/events/1")
	for range 2 {
		page := a.get(want)
		if page.status != 200 || !strings.Contains(page.body, "You left the line") || !strings.Contains(page.body, `href="/events/1"`) {
			t.Fatalf("the page after leaving: %d %s", page.status, page.body)
		}
	}
	if r := a.getJSON("/.waitroom/status?room=concert"); r.state() != "waiting" || r.position() != 2 {
		t.Fatalf("GET of the left page must not give up the new place: %v", r.json)
	}
	// client.js asks for JSON and gets it.
	if r := a.do(http.MethodPost, "/.waitroom/leave?room=concert", "Sec-Fetch-Site", "same-origin", "Accept", "application/json"); r.status != 200 || r.state() != "left" {
		t.Fatalf("leave as JSON: %d %v", r.status, r.json)
	}
	for path, code := range map[string]int{
		"/.waitroom/left?room=nope":                     404,
		"/.waitroom/left?room=concert&return_to=//evil": 400,
	} {
		if r := a.get(path); r.status != code {
			t.Errorf("GET %s: %d, want %d", path, r.status, code)
		}
	}
	if r := a.do(http.MethodPost, "/.waitroom/left?room=concert"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST to the left page: %d", r.status)
	}
}

// In Chromium, the waiting page's leave button ends on the GET page, and
// reloading that page keeps a place taken since.
func TestBrowser_LeaveButtonEndsOnAGet(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms"))
	v := newBrowserVisitor(t, browser)
	brDo(t, v, "open the page", chromedp.Navigate(base+"/events/1"))
	brWaitJS(t, v, "the waiting page with its leave button", `document.querySelector('form.leave button') !== null`)
	brDo(t, v, "leave", chromedp.Click(chromedp.CSS("form.leave button")))
	brWaitJS(t, v, "the left page", `location.pathname === '/.waitroom/left' && document.body.textContent.includes('You left the line')`)
	// Join again, then load the page the leave ended on and reload it: a
	// GET, so the new place (its ticket) stays.
	left := brEval[string](t, v, `location.href`)
	ticket := func() float64 {
		t.Helper()
		brDo(t, v, "open the room again", chromedp.Navigate(base+"/events/1"))
		brWaitJS(t, v, "the waiting page", `document.getElementById('wr-data') !== null`)
		return brEval[float64](t, v, `JSON.parse(document.getElementById('wr-data').textContent).ticket || 0`)
	}
	first := ticket()
	brDo(t, v, "back to the left page", chromedp.Navigate(left))
	brDo(t, v, "reload the left page", chromedp.Reload())
	brWaitJS(t, v, "the left page again", `location.pathname === '/.waitroom/left' && document.body.textContent.includes('You left the line')`)
	if again := ticket(); first == 0 || again != first {
		t.Fatalf("reloading the left page gave the place up: ticket %v, then %v", first, again)
	}
}
