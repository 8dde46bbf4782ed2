package main

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// A preview link opened in a real Chromium shows the position it names,
// in its language, titled as a preview; its script polls the link and the
// page stays the preview (no reload, no join); the browser holds no cookie
// of the gateway and the store no new place.
func TestBrowser_PreviewLink(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, previewRoom))
	before := visitorCounts(t, app, "concert")
	link := makePreview(t, app, "concert", `{"state":"waiting","position":4321,"lang":"ko"}`)

	tab := newBrowserVisitor(t, browser)
	brDo(t, tab, "open the preview link", chromedp.Navigate(base+link))
	brWaitJS(t, tab, "the position on the page", `document.getElementById('wr-pos').textContent.trim() === '4,321'`)
	if got := brEval[string](t, tab, `document.title`); !strings.HasPrefix(got, "미리보기 · ") {
		t.Errorf("title %q should say preview in Korean", got)
	}
	if got := brEval[string](t, tab, `document.documentElement.lang`); got != "ko" {
		t.Errorf("page language %q", got)
	}
	if !brEval[bool](t, tab, `!!document.getElementById('wr-preview') && document.getElementById('wr-preview').offsetHeight > 0`) {
		t.Error("no visible preview banner")
	}
	if brEval[bool](t, tab, `!!document.querySelector('form.leave')`) {
		t.Error("a preview offers to leave a place it does not hold")
	}
	// The page polls (every second here) and updates in place: a mark on
	// the window survives, and the poll kept the preview.
	updated := brEval[string](t, tab, `document.getElementById('wr-updated').getAttribute('datetime')`)
	brEval[bool](t, tab, `window.wrMark = true`)
	brWaitJS(t, tab, "a poll of the preview", `window.wrMark === true && document.getElementById('wr-updated').getAttribute('datetime') !== '`+updated+`'`)
	if got := brEval[string](t, tab, `document.getElementById('wr-pos').textContent.trim() + ' ' + document.title`); !strings.HasPrefix(got, "4,321 미리보기 · ") {
		t.Errorf("after a poll the page reads %q", got)
	}
	if !strings.HasPrefix(brEval[string](t, tab, `location.pathname`), "/.waitroom/preview") {
		t.Error("the page left the preview")
	}
	res, err := chromedp.Call(tab, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/", base + "/events/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cookies) != 0 {
		t.Errorf("the preview set %d cookies, first %q", len(res.Cookies), res.Cookies[0].Name)
	}
	if after := visitorCounts(t, app, "concert"); after != before {
		t.Errorf("the preview changed what the store or the metrics count:\nbefore %s\nafter  %s", before, after)
	}

	// A challenge's preview does the work, as a visitor's page does, and
	// then sends nothing: a visitor's page would send the solution at once
	// (a fetch in the promise's next step), so none by the time the page
	// sees the work done is none at all.
	ch := newBrowserVisitor(t, browser)
	if _, err := chromedp.Call(ch, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		window.wrFetches = [];
		const realFetch = window.fetch;
		window.fetch = function (u) { window.wrFetches.push(String(u)); return realFetch.apply(this, arguments); };
		let solve;
		Object.defineProperty(window, 'waitroomSolve', { configurable: true,
			get() { return solve; },
			set(fn) { solve = function () { const p = fn.apply(this, arguments); p.then(() => setTimeout(() => { window.wrSolved = true; }, 0)); return p; }; } });`}); err != nil {
		t.Fatal(err)
	}
	brDo(t, ch, "open the challenge preview", chromedp.Navigate(base+makePreview(t, app, "concert", `{"state":"challenge","lang":"en"}`)))
	brWaitJS(t, ch, "the work done", `window.wrSolved === true`)
	if got := brEval[string](t, ch, `window.wrFetches.join(' ') + '|' + document.getElementById('wr-heading').textContent + '|' + location.pathname`); got != "|Checking your browser|/.waitroom/preview" {
		t.Errorf("after the work the challenge preview reads %q, want no request and the same page", got)
	}
	if after := visitorCounts(t, app, "concert"); after != before {
		t.Errorf("the challenge preview changed what the store or the metrics count:\nbefore %s\nafter  %s", before, after)
	}
}
