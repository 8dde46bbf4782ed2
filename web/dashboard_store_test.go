package web

import (
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web/browsertest"
)

// TestDashboard_StoreState: the room card says what the store is going
// through, as AdminOptions.StoreState reports it: nothing while ok, that a
// failover is under way (visitors held), or that the store is unreachable,
// in Korean and in English.
func TestDashboard_StoreState(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rooms, _ := realRooms(t)
	var state atomic.Value
	state.Store(waitroom.StoreFailingOver)
	srv := httptest.NewServer(NewAdmin(AdminOptions{Rooms: rooms, Pages: newPages(t),
		StoreState: func() waitroom.StoreState { return state.Load().(waitroom.StoreState) }}))
	defer srv.Close()
	for _, lang := range []string{"ko", "en"} {
		ctx := headlessTab(t, chromium)
		_, problems := watchPage(ctx)
		state.Store(waitroom.StoreFailingOver)
		run(t, ctx, acceptLanguage(lang), chromedp.Navigate(srv.URL+"/admin/"))
		shows := func(text, what string) {
			t.Helper()
			waitJS(t, ctx, `(() => { const p = document.querySelector('article.room [data-f="store"]');
				return p && !p.hidden && p.textContent === `+jsString(text)+`; })()`, lang+": "+what)
		}
		shows(dashboardText[lang]["store_failover"], "the failover notice")
		state.Store(waitroom.StoreUnreachable)
		shows(dashboardText[lang]["store_warn"], "the unreachable notice")
		state.Store(waitroom.StoreOK)
		waitJS(t, ctx, `document.querySelector('article.room [data-f="store"]').hidden`, lang+": no notice once ok")
		problems.check(t)
	}
}

// jsString quotes s for a script.
func jsString(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}
