package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web/browsertest"
)

// The browser tests below drive Debian's chromium through chromedp. Every
// wait is a bounded poll of a condition, with room to spare for a loaded
// two-core CI machine running -race.
const (
	browserWait  = 30 * time.Second  // one condition in the browser
	browserTotal = 150 * time.Second // the whole test
)

// startChromium starts one headless chromium for the test and returns a
// context on it. Visitors get their own BrowserContext (own cookie jar) from
// newBrowserVisitor.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	chromium := browsertest.Chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), browserTotal)
	t.Cleanup(cancel)
	// The flags keep Chromium off the network and out of the user's profile,
	// and keep timers of pages that are not in front running at full speed.
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true), chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// newBrowserVisitor is a tab in a fresh BrowserContext: a visitor with a
// cookie jar of its own.
func newBrowserVisitor(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	return ctx
}

func brDo(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func brEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// brWait polls cond until it holds, at most browserWait.
func brWait(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v in vain for %s; last seen: %s", browserWait, what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// brWaitJS polls a boolean expression in the page; errors (say, while the
// page navigates) count as false.
func brWaitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	brWait(t, what, func() (bool, string) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + ' ' + document.title`))
		return ok && err == nil, fmt.Sprintf("%s (%v)", href, err)
	})
}

// docHTML reads the DOM through DevTools, which works with scripts disabled.
func docHTML(ctx context.Context) (string, error) {
	doc, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{})
	if err != nil {
		return "", err
	}
	res, err := chromedp.Call(ctx, dom.GetOuterHTML, dom.GetOuterHTMLParams{BackendNodeID: doc.Root.BackendNodeID})
	return res.OuterHTML, err
}

// browserVisitorID decodes the visitor id from the tab's room cookie.
func browserVisitorID(t *testing.T, ctx context.Context, base, room string) string {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/events/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "waitroom_"+room {
			tk, err := testTickets(t).Decode(room, c.Value)
			if err != nil {
				t.Fatalf("the %s cookie holds no ticket: %v", room, err)
			}
			return tk.Visitor
		}
	}
	t.Fatalf("no waitroom_%s cookie in the browser", room)
	return ""
}

// siteLog is the site behind the gateway: it counts requests per
// Waitroom-Visitor and ends a visitor's session at /events/done.
type siteLog struct {
	mu       sync.Mutex
	visitors map[string]int
	seen     []string // "visitor path?query", in order
}

func newSite(t *testing.T) (*siteLog, *httptest.Server) {
	s := &siteLog{visitors: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(waitroom.VisitorHeader)
		s.mu.Lock()
		s.visitors[v]++
		s.seen = append(s.seen, v+" "+r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/events/show":
			fmt.Fprintf(w, `<!doctype html><html><head><link rel="icon" href="data:,"><title>Seat</title></head>`+
				`<body><h1 id="site">Seat %s</h1></body></html>`, r.URL.Query().Get("seat"))
		case "/events/done":
			w.Header().Set("Waitroom-Command", "release")
			fmt.Fprint(w, `<!doctype html><html><head><link rel="icon" href="data:,"><title>Done</title></head><body><h1 id="site">Thanks</h1></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *siteLog) requests(visitor string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.visitors[visitor]
}

func (s *siteLog) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "; ")
}

// TestBrowser_EndToEnd: a room of one in front of a site. Browser A gets in;
// browser B waits at position 1 with an estimated wait; the site releases A and
// B arrives on the page it first asked for by itself, the site seeing B once.
// Browser C, with JavaScript disabled, gets in by the <noscript> meta refresh
// alone once the admin API releases B.
func TestBrowser_EndToEnd(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	site, srv := newSite(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 100ms\n    page: { refresh: 1s }"))
	const show = "/events/show?seat=A1"
	onSite := `document.getElementById('site') !== null && location.pathname + location.search === '` + show + `'`

	a := newBrowserVisitor(t, browser)
	brDo(t, a, "A opens the page", chromedp.Navigate(base+show))
	if got := brEval[string](t, a, `(document.getElementById('site') || {}).textContent || document.title`); got != "Seat A1" {
		t.Fatalf("A should be on the site, sees %q", got)
	}
	idA := browserVisitorID(t, a, base, "concert")

	b := newBrowserVisitor(t, browser)
	brDo(t, b, "B opens the page", chromedp.Navigate(base+show))
	idB := browserVisitorID(t, b, base, "concert")
	if idA == idB {
		t.Fatal("A and B share a visitor id")
	}
	type waitingDOM struct {
		Pos     string `json:"pos"`
		ETA     string `json:"eta"`
		LineOn  bool   `json:"lineOn"`
		Updated string `json:"updated"`
	}
	const readWaiting = `(() => { const e = id => document.getElementById(id);
		return {pos: e('wr-pos') ? e('wr-pos').textContent.trim() : '', eta: e('wr-eta') ? e('wr-eta').textContent.trim() : '',
			lineOn: !!e('wr-line') && !e('wr-line').hidden, updated: e('wr-updated') ? e('wr-updated').getAttribute('datetime') : ''}; })()`
	w := brEval[waitingDOM](t, b, readWaiting)
	if w.Pos != "1" || w.ETA == "" || !w.LineOn {
		t.Fatalf("B should wait at position 1 with an estimated wait, sees %+v (site log: %s)", w, site.log())
	}
	if n := site.requests(idB); n != 0 {
		t.Fatalf("the site saw waiting B %d times", n)
	}
	// While waiting the page polls and updates in place, never reloading:
	// a mark left on the window survives a poll.
	brEval[bool](t, b, `window.wrMark = true`)
	brWaitJS(t, b, "B's page to poll once", `window.wrMark === true && document.getElementById('wr-updated').getAttribute('datetime') !== '`+w.Updated+`'`)
	if got := brEval[string](t, b, `document.getElementById('wr-pos').textContent.trim()`); got != "1" {
		t.Fatalf("after a poll B's position reads %q", got)
	}

	// The site releases A; B moves on by itself.
	brDo(t, a, "A finishes", chromedp.Navigate(base+"/events/done"))
	brWait(t, "the site to see A's release", func() (bool, string) { return site.requests(idA) == 2, site.log() })
	brWaitJS(t, b, "B to arrive on the page first asked for", onSite)
	if n := site.requests(idB); n != 1 {
		t.Fatalf("the site saw B %d times, want exactly once: %s", n, site.log())
	}

	// C has no JavaScript: only the <noscript> meta refresh moves it along.
	c := newBrowserVisitor(t, browser)
	if _, err := chromedp.Call(c, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	brDo(t, c, "C opens the page", chromedp.Navigate(base+show))
	// The meta refresh reloads the page every second: read it in a loop.
	brWait(t, "C to wait at position 1 on a page with a meta refresh", func() (bool, string) {
		html, err := docHTML(c)
		return err == nil && strings.Contains(html, `id="wr-pos">1<`) && strings.Contains(html, `http-equiv="refresh"`),
			fmt.Sprintf("%s (%v)", html, err)
	})
	idC := browserVisitorID(t, c, base, "concert")
	code, _, body := newAdmin(t, app).do("POST", "/admin/api/rooms/concert/release", `{"visitor":"`+idB+`"}`)
	if code != http.StatusOK {
		t.Fatalf("admin release of B: %d %s", code, body)
	}
	brWait(t, "C to get in by meta refresh", func() (bool, string) {
		html, err := docHTML(c)
		return err == nil && strings.Contains(html, `<h1 id="site">Seat A1</h1>`), fmt.Sprintf("%.300s (%v)", html, err)
	})
	if n := site.requests(idC); n != 1 {
		t.Errorf("the site saw C %d times, want once: %s", n, site.log())
	}
	if n := site.requests(idB); n != 1 {
		t.Errorf("in the end the site saw B %d times, want once: %s", n, site.log())
	}
}

// TestBrowser_WaitingPageScreenshots renders the waiting page of "Concert
// tickets" with three people ahead, in English and Korean, on a phone and a
// desktop. The pictures go into docs/ only with WAITROOM_UPDATE_DOCS=1
// (`WAITROOM_UPDATE_DOCS=1 go test -run Screenshots ./cmd/waitroom/`): the
// fonts of another machine draw other bytes, and a test run must not
// leave the tree dirty. Otherwise they go to the test's temporary
// directory, and the test still proves every page renders.
func TestBrowser_WaitingPageScreenshots(t *testing.T) {
	browser := startChromium(t)
	browsertest.KoreanFont(t) // else the Korean shots are empty boxes
	_, srv := newSite(t)
	// A long refresh: the page does not poll while it is photographed.
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 100ms\n    page: { title: \"Concert tickets\", refresh: 30s }"))
	const show = "/events/show?seat=A1"
	if r := newVisitor(t, base).get(show); r.status != http.StatusOK {
		t.Fatalf("the first visitor should get in: %d", r.status)
	}
	for i := range 3 {
		if r := newVisitor(t, base).getJSON(show); r.state() != "waiting" || r.position() != i+1 {
			t.Fatalf("visitor %d: %d %v", i+1, r.status, r.json)
		}
	}
	tab := newBrowserVisitor(t, browser)
	// No pulsing dot and no bar transition: the same page gives the same bytes.
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
		t.Fatal(err)
	}
	shots := []struct {
		file, lang, accept string
		w, h               int64
		phone              bool
	}{
		{"waiting-en-phone.png", "en", "en-US,en;q=0.9", 390, 844, true},
		{"waiting-ko-phone.png", "ko", "ko-KR,ko;q=0.9", 390, 844, true},
		{"waiting-en-desktop.png", "en", "en-US,en;q=0.9", 1280, 900, false},
		{"waiting-ko-desktop.png", "ko", "ko-KR,ko;q=0.9", 1280, 900, false},
	}
	for _, s := range shots {
		viewport := chromedp.EmulateViewport(s.w, s.h)
		if s.phone {
			viewport = chromedp.EmulateViewport(s.w, s.h, chromedp.EmulateScale(2), chromedp.EmulatePortrait,
				chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Accept-Language": s.accept}}); err != nil {
			t.Fatal(err)
		}
		brDo(t, tab, s.file, viewport, chromedp.Navigate(base+show))
		brWaitJS(t, tab, s.file+" to be ready", `document.fonts.status === 'loaded' && document.documentElement.lang === '`+s.lang+
			`' && document.getElementById('wr-pos').textContent.trim() === '4'`)
		// The one thing that changes from run to run is the clock.
		brEval[bool](t, tab, `(() => { const e = document.getElementById('wr-updated'), d = new Date(Date.UTC(2026, 4, 1, 1, 0, 0));
			e.setAttribute('datetime', d.toISOString());
			e.textContent = d.toLocaleTimeString('`+s.lang+`', {timeZone: 'Asia/Seoul'}); return true; })()`)
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		writeIfChanged(t, filepath.Join(shotDir(t), s.file), png)
	}
}

// shotDir is where screenshots go: docs/ when WAITROOM_UPDATE_DOCS=1, else
// a directory that disappears with the test.
func shotDir(t *testing.T) string {
	if os.Getenv("WAITROOM_UPDATE_DOCS") == "1" {
		return filepath.Join("..", "..", "docs")
	}
	return t.TempDir()
}

// writeIfChanged writes data to path unless the file already holds it.
func writeIfChanged(t *testing.T, path string, data []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(data))
}
