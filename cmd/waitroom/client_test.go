package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// spaPage is a small SPA whose "buy" button calls an API behind a room
// through waitroom.fetch, and whose "enter" button gates a flow with
// waitroom.enter. It records every position the overlay showed.
const spaPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>shop</title>
<script src="/.waitroom/client.js"></script></head><body>
<button id="buy">Buy</button> <button id="enter">Enter</button> <p id="result"></p>
<script>
window.seen = [];
new MutationObserver(function () {
  var p = document.getElementById('waitroom-overlay-position');
  if (p && p.textContent && window.seen[window.seen.length - 1] !== p.textContent) window.seen.push(p.textContent);
}).observe(document.body, { subtree: true, childList: true, characterData: true });
document.getElementById('buy').addEventListener('click', function () {
  waitroom.fetch('/events/api/buy', { method: 'POST', body: 'seat=7' })
    .then(function (r) { return r.text(); })
    .then(function (t) { document.getElementById('result').textContent = t; });
});
document.getElementById('enter').addEventListener('click', function () {
  waitroom.enter('concert').then(function (a) { document.getElementById('result').textContent = 'entered:' + a.state; });
});
</script></body></html>`

// A button click queues, shows the overlay with a falling position, and
// completes the API call once admitted, without a reload.
func TestBrowser_SPAClient(t *testing.T) {
	t.Parallel()
	posts := make(chan string, 4)
	up, pages := newUpstream(t)
	_ = up
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/spa/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, spaPage)
		case r.URL.Path == "/events/api/buy":
			b := make([]byte, 64)
			n, _ := r.Body.Read(b)
			posts <- string(b[:n])
			fmt.Fprintf(w, "bought %s", b[:n])
		default:
			pages.Config.Handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(site.Close)
	_, base := startGateway(t, gwConfig(site.URL, "    max_active: 1\n    tick: 100ms\n    page: { refresh: 1s }"))
	holder, ahead := newVisitor(t, base), newVisitor(t, base)
	if r := holder.get("/events/"); r.body != "site:/events/" {
		t.Fatalf("the holder: %d %q", r.status, r.body)
	}
	ahead.getJSON("/events/")
	ahead.getJSON("/events/") // its place, at 1
	browser := startChromium(t)
	tab := newBrowserVisitor(t, browser)
	brDo(t, tab, "open the SPA", chromedp.Navigate(base+"/spa/"))
	brWaitJS(t, tab, "client.js loaded", `typeof waitroom === 'object' && typeof waitroom.fetch === 'function'`)
	brDo(t, tab, "click buy", chromedp.Click(chromedp.ID("buy")))
	brWaitJS(t, tab, "the overlay at place 2", `(document.getElementById('waitroom-overlay-position')||{}).textContent === 'Your place: 2'`)
	if got := brEval[string](t, tab, `document.getElementById('waitroom-overlay').getAttribute('role')`); got != "dialog" {
		t.Fatalf("the overlay's role: %q", got)
	}
	holder.get("/events/done") // the site releases the holder: the one ahead goes in
	brWaitJS(t, tab, "the overlay at place 1", `(document.getElementById('waitroom-overlay-position')||{}).textContent === 'Your place: 1'`)
	ahead.waitAdmitted("concert", browserWait)
	ahead.get("/events/done")
	brWaitJS(t, tab, "the API call done", `document.getElementById('result').textContent === 'bought seat=7'`)
	if got := <-posts; got != "seat=7" {
		t.Fatalf("the site got %q", got)
	}
	if len(posts) != 0 {
		t.Fatal("the request was sent to the site twice")
	}
	if n := brEval[int](t, tab, `document.querySelectorAll('#waitroom-overlay').length`); n != 0 {
		t.Fatal("the overlay stays after admission")
	}
	seen := brEval[string](t, tab, `window.seen.join('|')`)
	if !strings.HasPrefix(seen, "Your place: 2|Your place: 1") {
		t.Fatalf("positions shown: %q", seen)
	}
	// waitroom.enter: the visitor inside goes on at once.
	brDo(t, tab, "click enter", chromedp.Click(chromedp.ID("enter")))
	brWaitJS(t, tab, "entered", `document.getElementById('result').textContent === 'entered:admitted'`)
	if !strings.Contains(brEval[string](t, tab, `document.documentElement.outerHTML`), "/.waitroom/client.js") {
		t.Fatal("the page lost its script")
	}
}
