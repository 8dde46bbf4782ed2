package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/storetest"
	"github.com/waitroom/waitroom/web/browsertest"
)

// TestDashboard_RealAPI signs in to the dashboard served by the real admin
// handler over a real gate and store, and checks that the room card shows
// the numbers the API returns.
func TestDashboard_RealAPI(t *testing.T) {
	chromium := browsertest.Chromium(t)
	const token = "real-admin-token-0123456789"
	rooms, store := realRooms(t)
	ctxb := context.Background()
	lim := waitroom.Limits{MaxActive: 3, SessionTTL: time.Hour, AbandonAfter: time.Hour}
	for range 7 { // three go in, four wait
		if _, _, err := storetest.Enter(ctxb, store, "concert", lim, waitroom.NewVisitorID()); err != nil {
			t.Fatal(err)
		}
	}
	if err := rooms.Refresh(ctxb, "concert"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAdmin(AdminOptions{Token: token, Rooms: rooms, Pages: newPages(t)}))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/api/rooms", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var api struct{ Rooms []RoomView }
	err = json.NewDecoder(resp.Body).Decode(&api)
	resp.Body.Close()
	if err != nil || len(api.Rooms) != 1 || api.Rooms[0].Waiting != 4 || api.Rooms[0].Active != 3 {
		t.Fatalf("the API: %+v, %v", api, err)
	}

	ctx := headlessTab(t, chromium)
	_, problems := watchPage(ctx)
	run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `document.querySelector('article.room [data-f="waiting"]')?.textContent === '4'`, "the card's numbers")
	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]cardText](`[...document.querySelectorAll('article.room')].map(a => {
		const f = k => a.querySelector('[data-f="' + k + '"]').textContent;
		return {room: a.dataset.room, waiting: f('waiting'), active: f('active'), max: f('max'), mode: f('mode'),
			rate: f('rate'), override: !a.querySelector('[data-f=override]').hidden};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	r := api.Rooms[0]
	want := cardText{r.Name, thousands(int(r.Waiting)), thousands(int(r.Active)), thousands(r.Effective.MaxActive), "FIFO", thousands(int(r.LastMinute)), false}
	if len(cards) != 1 || cards[0] != want {
		t.Fatalf("the card shows %+v, the API said %+v", cards, want)
	}
	problems.check(t)
}

func realRooms(t *testing.T) (*waitroom.Rooms, waitroom.Store) {
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	room := waitroom.Room{Name: "concert", Tick: time.Second, Mode: waitroom.ModeFIFO,
		Limits: waitroom.Limits{MaxActive: 3, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}})
	return rooms, store
}

// An admin API without a token (the demo's, a loopback listener's) opens
// the dashboard with no sign-in form and no sign-out button: the page asks
// the API once without a token first.
func TestDashboard_NoTokenNoSignIn(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rooms, _ := realRooms(t)
	srv := httptest.NewServer(NewAdmin(AdminOptions{Rooms: rooms, Pages: newPages(t)}))
	defer srv.Close()
	ctx := headlessTab(t, chromium)
	_, problems := watchPage(ctx)
	run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"))
	waitJS(t, ctx, `document.querySelector('article.room')?.dataset.room === 'concert' && document.getElementById('signin').hidden`,
		"the room card with no sign-in")
	// Nothing to sign out of either.
	waitJS(t, ctx, `document.getElementById('signout').hidden && !document.getElementById('live').hidden`,
		"no sign-out button without a token")
	problems.check(t)
}

// headlessTab is a tab of a headless Chromium kept off the network and out
// of the user's profile, closed with the test; a minute at most.
func headlessTab(t *testing.T, chromium string) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	return ctx
}
