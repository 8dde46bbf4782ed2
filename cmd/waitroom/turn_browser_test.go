package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// turnRecorder is an init script for the "your turn" tests. Headless
// Chromium shows every tab as visible, and a frozen page
// (Page.setWebLifecycleState) runs no timers at all, so the script makes
// the page hidden itself: document.hidden and visibilityState read a flag
// that wrSetHidden flips, firing visibilitychange as a browser does. It
// records, in sessionStorage so that the record outlives the tab's
// navigation to the site, every navigator.vibrate call (stubbed: Chromium
// ignores one without a tap), every oscillator started, every title set
// and every Notification constructed. %t is whether the tab starts hidden.
const turnRecorder = `(() => {
  let store;
  try { store = window.sessionStorage; store.getItem('wr'); } catch (e) { return; }
  const rec = (k, v) => { const r = JSON.parse(store.getItem('wr') || '{}'); (r[k] = r[k] || []).push(v); store.setItem('wr', JSON.stringify(r)); };
  window.wrRec = () => JSON.parse(store.getItem('wr') || '{}');
  if (store.getItem('wrHidden') === null) store.setItem('wrHidden', %t ? '1' : '0');
  let hidden = store.getItem('wrHidden') === '1';
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get() { return hidden; } });
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get() { return hidden ? 'hidden' : 'visible'; } });
  window.wrSetHidden = h => { hidden = h; store.setItem('wrHidden', h ? '1' : '0'); document.dispatchEvent(new Event('visibilitychange')); };
  Object.defineProperty(Navigator.prototype, 'vibrate', { configurable: true, writable: true, value(p) { rec('vibrate', p); return true; } });
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function () { rec('osc', this.frequency.value + ' ' + this.context.state); return start.apply(this, arguments); };
  const title = Object.getOwnPropertyDescriptor(Document.prototype, 'title');
  Object.defineProperty(Document.prototype, 'title', { configurable: true,
    get() { return title.get.call(this); }, set(v) { rec('title', v); title.set.call(this, v); } });
  if (window.Notification) {
    const N = window.Notification;
    window.Notification = class extends N { constructor(t, o) { rec('note', t); super(t, o); } };
  }
})()`

// turnRecord is what the recorder kept.
type turnRecord struct {
	Vibrate [][]int  `json:"vibrate"`
	Osc     []string `json:"osc"`
	Title   []string `json:"title"`
	Note    []string `json:"note"`
}

// turnTab is a visitor's tab with the recorder, hidden or not, and the
// notification permission granted to the gateway's origin (as if the
// visitor had once said yes to the browser's question) when grant is set.
func turnTab(t *testing.T, b context.Context, base string, hidden, grant bool) context.Context {
	t.Helper()
	tab := newBrowserVisitor(t, b)
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(turnRecorder, hidden)}); err != nil {
		t.Fatal(err)
	}
	if grant {
		if _, err := chromedp.CallBrowser(tab, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted,
			Origin: base, BrowserContextID: chromedp.FromContext(tab).BrowserContextID}); err != nil {
			t.Fatalf("granting notifications: %v", err)
		}
	}
	return tab
}

func turnRec(t *testing.T, tab context.Context) turnRecord {
	t.Helper()
	return brEval[turnRecord](t, tab, `window.wrRec()`)
}

func titled(titles []string, s string) bool {
	for _, x := range titles {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// The waiting page in a background tab: A opted in to notifications, B
// did not (the browser would allow them all the same), C is in front.
// When A's turn comes, A's page plays the tone, vibrates, flashes its
// title and shows a notification, and stays until the tab is seen, then
// opens the site; B gets all of it but the notification; C goes on to
// the site at once, as before, with none of it.
func TestBrowser_TurnAlerts(t *testing.T) {
	t.Parallel()
	b := startChromium(t)
	site, srv := newSite(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 100ms\n    page: { refresh: 1s }"))
	holder := newVisitor(t, base)
	if r := holder.get("/events/show?seat=H"); r.status != http.StatusOK {
		t.Fatalf("the holder: %d %q", r.status, r.body)
	}
	const show = "/events/show?seat=A1"
	onSite := `document.getElementById('site') !== null`
	waitAt := func(tab context.Context, who, pos string) {
		t.Helper()
		brDo(t, tab, who+" opens the page", chromedp.Navigate(base+show))
		brWaitJS(t, tab, who+" waits at "+pos, `(document.getElementById('wr-pos') || {}).textContent === '`+pos+`'`)
	}

	a := turnTab(t, b, base, true, true)
	waitAt(a, "A", "1")
	brWaitJS(t, a, "A's opt-in shown", `!document.getElementById('wr-notify').hidden`)
	if got := brEval[string](t, a, `document.getElementById('wr-notify-btn').textContent`); got != "Notify me when it's my turn" {
		t.Errorf("the opt-in reads %q", got)
	}
	brDo(t, a, "A opts in", chromedp.Click(chromedp.ID("wr-notify-btn")))
	brWaitJS(t, a, "A opted in", `document.getElementById('wr-notify-btn').getAttribute('aria-pressed') === 'true' &&
		localStorage.getItem('waitroom.notify') === '1' && document.getElementById('wr-notify-state').textContent !== ''`)

	bb := turnTab(t, b, base, true, true)
	waitAt(bb, "B", "2")
	brDo(t, bb, "B taps the page", chromedp.Click(chromedp.ID("wr-heading")))
	if brEval[string](t, bb, `document.getElementById('wr-notify-btn').getAttribute('aria-pressed')`) != "false" {
		t.Error("B shows as opted in without a click")
	}

	c := turnTab(t, b, base, false, true)
	waitAt(c, "C", "3")

	holder.get("/events/done") // the site releases the holder: A's turn
	brWaitJS(t, a, "A's title flashing", `window.wrRec().title.some(s => s.startsWith('\u25cb Your turn'))`)
	ra := turnRec(t, a)
	if !titled(ra.Title, "\u25cf Your turn — Waiting room") || len(ra.Vibrate) != 1 || len(ra.Osc) == 0 || len(ra.Note) != 1 || ra.Note[0] != "Your turn — Waiting room" {
		t.Errorf("A's alerts: %+v", ra)
	}
	if got := brEval[string](t, a, `document.getElementById('wr-heading').textContent + '|' + document.getElementById('wr-announce').textContent + '|' + document.getElementById('wr-line').hidden`); got != "It is your turn|Come back to this tab: the site opens as soon as you do.|true" {
		t.Errorf("A's page says %q", got)
	}
	if brEval[bool](t, a, onSite) {
		t.Fatal("A's hidden tab opened the site before it was seen")
	}
	brEval[bool](t, a, `window.wrSetHidden(false), true`)
	brWaitJS(t, a, "A on the site once seen", onSite)
	brDo(t, a, "A finishes", chromedp.Navigate(base+"/events/done")) // B's turn

	brWaitJS(t, bb, "B's title changed", `window.wrRec().title.some(s => s.startsWith('\u25cf Your turn'))`)
	rb := turnRec(t, bb)
	if len(rb.Vibrate) != 1 || len(rb.Osc) == 0 || len(rb.Note) != 0 {
		t.Errorf("B's alerts (a tone and a vibration, no notification without the opt-in): %+v", rb)
	}
	brEval[bool](t, bb, `window.wrSetHidden(false), true`)
	brWaitJS(t, bb, "B on the site once seen", onSite)
	brDo(t, bb, "B finishes", chromedp.Navigate(base+"/events/done")) // C's turn

	brWaitJS(t, c, "C on the site", onSite)
	rc := turnRec(t, c)
	if len(rc.Vibrate) != 0 || len(rc.Osc) != 0 || len(rc.Note) != 0 || titled(rc.Title, "Your turn") {
		t.Errorf("C, in front, was alerted: %+v", rc)
	}
	t.Logf("A: %d titles, tone %v; site: %s", len(ra.Title), ra.Osc, site.log())
}

// turnSPA is a page of the site that gates a flow with client.js, opted
// in to the alerts, recording what onTurn saw.
const turnSPA = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>shop</title>
<script src="/.waitroom/client.js"></script></head><body>
<button id="enter">Enter</button> <p id="result"></p>
<script>
window.turns = [];
waitroom.alerts();
waitroom.onTurn(function (a, info) { window.turns.push(a.state + ' ' + info.hidden); });
document.getElementById('enter').addEventListener('click', function () {
  waitroom.enter('concert').then(function (a) { document.getElementById('result').textContent = 'entered:' + a.state; });
});
</script></body></html>`

// client.js: a hidden SPA that opted in to the alerts gets them through
// the overlay's opt-in when its wait ends, and onTurn hears of it; one in
// front hears of it through onTurn and is not alerted.
func TestBrowser_TurnClient(t *testing.T) {
	t.Parallel()
	b := startChromium(t)
	_, pages := newUpstream(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/spa/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, turnSPA)
			return
		}
		pages.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(site.Close)
	_, base := startGateway(t, gwConfig(site.URL, "    max_active: 1\n    tick: 100ms\n    page: { refresh: 1s }"))
	holder := newVisitor(t, base)
	if r := holder.get("/events/"); r.body != "site:/events/" {
		t.Fatalf("the holder: %d %q", r.status, r.body)
	}
	open := func(tab context.Context, who string) {
		t.Helper()
		brDo(t, tab, who+" opens the SPA", chromedp.Navigate(base+"/spa/"))
		brWaitJS(t, tab, "client.js loaded", `typeof waitroom === 'object' && typeof waitroom.onTurn === 'function'`)
		brDo(t, tab, who+" clicks enter", chromedp.Click(chromedp.ID("enter")))
		brWaitJS(t, tab, who+" in line", `(document.getElementById('waitroom-overlay-position') || {}).textContent === 'Your place: 1'`)
	}

	hid := turnTab(t, b, base, true, true)
	open(hid, "the hidden SPA")
	brDo(t, hid, "opt in from the overlay", chromedp.Click(chromedp.ID("waitroom-overlay-notify")))
	brWaitJS(t, hid, "opted in", `document.getElementById('waitroom-overlay-notify').getAttribute('aria-pressed') === 'true'`)
	holder.get("/events/done")
	brWaitJS(t, hid, "entered", `document.getElementById('result').textContent === 'entered:admitted'`)
	r := turnRec(t, hid)
	turns := brEval[string](t, hid, `window.turns.join('|')`)
	if turns != "admitted true" || !titled(r.Title, "\u25cf Your turn — shop") || len(r.Vibrate) != 1 || len(r.Osc) == 0 || len(r.Note) != 1 {
		t.Errorf("the hidden SPA: onTurn %q, alerts %+v", turns, r)
	}
	brEval[bool](t, hid, `window.wrSetHidden(false), true`)
	brWaitJS(t, hid, "the SPA's title back once seen", `document.title === 'shop'`)

	front := turnTab(t, b, base, false, true)
	open(front, "the SPA in front")
	brEval[bool](t, front, `localStorage.setItem('waitroom.notify', '1'), true`) // even opted in: no alert in front
	brEval[bool](t, hid, `waitroom.leave('concert'), true`)                      // the hidden SPA leaves: the one in front goes in
	brWaitJS(t, front, "entered", `document.getElementById('result').textContent === 'entered:admitted'`)
	r = turnRec(t, front)
	if turns := brEval[string](t, front, `window.turns.join('|')`); turns != "admitted false" || len(r.Vibrate) != 0 || len(r.Osc) != 0 || len(r.Note) != 0 || titled(r.Title, "Your turn") {
		t.Errorf("the SPA in front: onTurn %q, alerts %+v", turns, r)
	}
}

// A room with page.sound: false, in Korean: a hidden visitor who tapped
// the page (so audio could play) gets the Korean title and the vibration,
// and no tone; and no notification, though the opt-in is remembered,
// since the browser never granted the permission.
func TestBrowser_TurnQuietRoom(t *testing.T) {
	t.Parallel()
	b := startChromium(t)
	_, srv := newSite(t)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 1\n    tick: 100ms\n    page: { refresh: 1s, sound: false }"))
	holder := newVisitor(t, base)
	if r := holder.get("/events/show?seat=H"); r.status != http.StatusOK {
		t.Fatalf("the holder: %d %q", r.status, r.body)
	}
	tab := turnTab(t, b, base, true, false)
	if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Accept-Language": "ko-KR,ko;q=0.9"}}); err != nil {
		t.Fatal(err)
	}
	brDo(t, tab, "open the page", chromedp.Navigate(base+"/events/show?seat=A1"))
	brWaitJS(t, tab, "in line", `(document.getElementById('wr-pos') || {}).textContent === '1'`)
	brEval[bool](t, tab, `localStorage.setItem('waitroom.notify', '1'), true`)
	brDo(t, tab, "tap the page", chromedp.Click(chromedp.ID("wr-heading")))
	holder.get("/events/done")
	brWaitJS(t, tab, "the title changed", `window.wrRec().title.some(s => s.startsWith('\u25cf 입장 차례 — 대기실'))`)
	if r := turnRec(t, tab); len(r.Vibrate) != 1 || len(r.Osc) != 0 || len(r.Note) != 0 {
		t.Errorf("a quiet room's alerts (a vibration, no tone, no notification without the permission): %+v", r)
	}
	if got := brEval[string](t, tab, `document.getElementById('wr-announce').textContent`); got != "이 탭으로 돌아오시면 바로 사이트로 이동합니다." {
		t.Errorf("the Korean page announces %q", got)
	}

	// Where the visitor told the browser no, the page offers no opt-in.
	denied := newBrowserVisitor(t, b)
	if _, err := chromedp.CallBrowser(denied, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingDenied,
		Origin: base, BrowserContextID: chromedp.FromContext(denied).BrowserContextID}); err != nil {
		t.Fatalf("denying notifications: %v", err)
	}
	brDo(t, denied, "open the page, notifications denied", chromedp.Navigate(base+"/events/show?seat=A2"))
	brWaitJS(t, denied, "its script running", `typeof window.waitroomTurn === 'object' && Notification.permission === 'denied' &&
		(document.getElementById('wr-pos') || {}).textContent !== ''`)
	if !brEval[bool](t, denied, `document.getElementById('wr-notify').hidden`) {
		t.Error("the opt-in is shown where notifications are denied")
	}
}
