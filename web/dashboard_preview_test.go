package web

import (
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web/browsertest"
)

// The dashboard's Preview control asks the API for a link in the state,
// position and language chosen, and opens the link it gets back.
func TestDashboard_PreviewOpensTheLink(t *testing.T) {
	chromium := browsertest.Chromium(t)
	const token = "preview-admin-token-0123456789"
	rooms, _ := realRooms(t)
	var mu sync.Mutex
	var asked []waitroom.Preview
	linker := func(p waitroom.Preview) (string, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return "https://tickets.example.com/.waitroom/preview?room=concert&p=x", nil
	}
	srv := httptest.NewServer(NewAdmin(AdminOptions{Token: token, Rooms: rooms, Pages: newPages(t), Preview: linker}))
	defer srv.Close()

	ctx := headlessTab(t, chromium)
	_, problems := watchPage(ctx)
	run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `!!document.querySelector('article.room form[data-preview]')`, "the room's preview control")
	// The link would open another site in a new tab; the test records it.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`window.open = (u, target, features) => { window.opened = [u, target, features].join(' '); return null; }`),
		chromedp.SetValue(chromedp.CSS(`article.room form[data-preview] select[name=state]`), "waiting"),
		chromedp.SetValue(chromedp.CSS(`article.room form[data-preview] input[name=position]`), "321"),
		chromedp.SetValue(chromedp.CSS(`article.room form[data-preview] select[name=lang]`), "ko"),
		chromedp.Click(chromedp.CSS(`article.room form[data-preview] button`)))
	waitJS(t, ctx, `window.opened === 'https://tickets.example.com/.waitroom/preview?room=concert&p=x _blank noopener'`, "the link opened")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Room != "concert" || asked[0].State != waitroom.AnswerWaiting || asked[0].Position != 321 || asked[0].Lang != "ko" {
		t.Fatalf("the dashboard asked for %+v", asked)
	}
	problems.check(t)
}
