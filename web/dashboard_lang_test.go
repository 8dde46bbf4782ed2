package web

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web/browsertest"
)

// acceptLanguage makes the tab send Accept-Language: lang.
func acceptLanguage(lang string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome", AcceptLanguage: lang})
		return err
	})
}

// The dashboard speaks the operator's language: Korean to a Korean
// browser, English to an English one, and the header's switch changes it
// and keeps the choice across visits, whatever the browser asks for.
func TestDashboard_KoreanEnglishAndSwitch(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rooms, _ := realRooms(t)
	srv := httptest.NewServer(NewAdmin(AdminOptions{Rooms: rooms, Pages: newPages(t)}))
	defer srv.Close()
	type shown struct {
		Lang   string `json:"lang"`
		Pick   string `json:"pick"`
		Pause  string `json:"pause"`
		Title  string `json:"title"`
		Totals string `json:"totals"`
	}
	const read = `(() => { const a = document.querySelector('article.room');
		return {lang: document.documentElement.lang, pick: document.getElementById('lang').value,
			pause: a.querySelector('[data-act="mode"]').textContent, title: document.title,
			totals: a.querySelector('[data-f="totals"]').textContent}; })()`
	open := func(ctx context.Context, what string) shown {
		t.Helper()
		run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"))
		waitJS(t, ctx, `(document.querySelector('article.room [data-f="totals"]')?.textContent || '') !== ''`, what)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[shown](read))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ko := headlessTab(t, chromium)
	_, problems := watchPage(ko)
	run(t, ko, acceptLanguage("ko-KR,ko;q=0.9,en;q=0.5"))
	if s := open(ko, "the Korean dashboard"); s.Lang != "ko" || s.Pick != "ko" || s.Pause != "입장 일시 정지" ||
		s.Title != "대시보드 · waitroom" || s.Totals != "참여 0 · 입장 0 · 퇴장 0 · 만료 0 · 이탈 0" {
		t.Fatalf("Accept-Language ko: %+v", s)
	}
	problems.check(t)

	en := headlessTab(t, chromium)
	run(t, en, acceptLanguage("en-US,en;q=0.9"))
	if s := open(en, "the English dashboard"); s.Lang != "en" || s.Pick != "en" || s.Pause != "Pause admissions" ||
		s.Totals != "Joined 0 · Admitted 0 · Released 0 · Expired 0 · Abandoned 0" {
		t.Fatalf("Accept-Language en: %+v", s)
	}
	// The switch reloads the page in Korean and keeps the choice.
	run(t, en, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('lang');
		s.value = 'ko'; s.dispatchEvent(new Event('change')); })()`))
	waitJS(t, en, `document.documentElement.lang === 'ko' && document.querySelector('article.room [data-act="mode"]')?.textContent === '입장 일시 정지'`,
		"the page in Korean after the switch")
	if s := open(en, "a later visit"); s.Lang != "ko" || s.Pick != "ko" || s.Pause != "입장 일시 정지" {
		t.Fatalf("the choice of Korean did not stay with an English browser: %+v", s)
	}
	run(t, en, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('lang');
		s.value = 'en'; s.dispatchEvent(new Event('change')); })()`))
	waitJS(t, en, `document.documentElement.lang === 'en' && document.querySelector('article.room [data-act="mode"]')?.textContent === 'Pause admissions'`,
		"the page in English again")
}

// While a room is paused its card shows the max_active as set and says
// that nobody goes in, and saving another field stores no max_active at
// all; saving max_active as shown stores the operator's figure, not 0.
func TestDashboard_PausedKeepsMaxActive(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rooms, _ := realRooms(t) // max_active 3
	ctxb := context.Background()
	if err := rooms.SetOverride(ctxb, "concert", waitroom.Override{Mode: waitroom.ModePaused, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAdmin(AdminOptions{Rooms: rooms, Pages: newPages(t)}))
	defer srv.Close()
	ctx := headlessTab(t, chromium)
	_, problems := watchPage(ctx)
	run(t, ctx, acceptLanguage("en"), chromedp.Navigate(srv.URL+"/admin/"))
	waitJS(t, ctx, `document.querySelector('article.room [data-f="mode"]')?.textContent === 'Paused'`, "the paused card")
	type card struct {
		Max   string `json:"max"`
		Note  string `json:"note"`
		Input string `json:"input"`
	}
	c, err := chromedp.Run(ctx, chromedp.Evaluate[card](`(() => { const a = document.querySelector('article.room');
		return {max: a.querySelector('[data-f="max"]').textContent, note: a.querySelector('[data-f="max-note"]').textContent,
			input: a.querySelector('form[data-act="max_active"] input').value}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if c != (card{"3", "paused: nobody new goes in", "3"}) {
		t.Fatalf("a paused room's card: %+v, want max_active 3 shown and in the field, with a note", c)
	}
	override := func() waitroom.Override {
		info, _ := rooms.Info("concert")
		return info.Effective.Override
	}
	submit := func(act, value string, done func(waitroom.Override) bool) {
		t.Helper()
		sel := `form[data-act="` + act + `"]`
		run(t, ctx, chromedp.SetValue(chromedp.CSS(sel+" input"), value), chromedp.Click(chromedp.CSS(sel+" button")))
		for deadline := time.Now().Add(20 * time.Second); !done(override()); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s=%s never reached the store: %+v", act, value, override())
			}
		}
	}
	submit("admit_rate", "60/m", func(o waitroom.Override) bool { return o.AdmitRate != nil })
	if o := override(); o.MaxActive != nil || o.Mode != waitroom.ModePaused {
		t.Fatalf("saving the admit rate of a paused room stored %+v (max_active must stay unset)", o)
	}
	submit("max_active", "3", func(o waitroom.Override) bool { return o.MaxActive != nil })
	if o := override(); *o.MaxActive != 3 {
		t.Fatalf("saving max_active as shown stored %d", *o.MaxActive)
	}
	problems.check(t)
}

// Both languages have every word, and every word the page and its script
// ask for exists.
func TestDashboardText_SameKeys(t *testing.T) {
	t.Parallel()
	var en, ko []string
	for k := range dashboardText["en"] {
		en = append(en, k)
	}
	for k := range dashboardText["ko"] {
		ko = append(ko, k)
	}
	slices.Sort(en)
	slices.Sort(ko)
	if !slices.Equal(en, ko) {
		t.Fatalf("the languages differ in keys:\nen %v\nko %v", en, ko)
	}
	html, err := os.ReadFile("templates/dashboard.html")
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("static/dashboard.js")
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, m := range regexp.MustCompile(`\.T\.(\w+)`).FindAllStringSubmatch(string(html), -1) {
		asked++
		if _, ok := dashboardText["en"][m[1]]; !ok {
			t.Errorf("dashboard.html asks for %q, which the table lacks", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`\btr\('(\w+)'`).FindAllStringSubmatch(string(js), -1) {
		asked++
		if _, ok := dashboardText["en"][m[1]]; !ok {
			t.Errorf("dashboard.js asks for %q, which the table lacks", m[1])
		}
	}
	for _, mode := range []waitroom.Mode{waitroom.ModeFIFO, waitroom.ModeRandom, waitroom.ModePaused, waitroom.ModeReject, waitroom.ModePassthrough} {
		if _, ok := dashboardText["ko"]["mode_"+string(mode)]; !ok {
			t.Errorf("no words for mode %s", mode)
		}
	}
	if asked < 60 {
		t.Fatalf("only %d words asked for", asked)
	}
}
