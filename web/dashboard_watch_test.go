package web

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web/browsertest"
)

// The room card shows what the metrics counted of the room's newcomers
// (AdminOptions.Watch, metrics.Metrics.Watched in the application): the
// last minute's arrivals and visitors, the waiting pages shown, and bars of
// access types and device classes scaled to the largest; a card without
// the counts shows no such section. Regions show the countries with the
// most newcomers, then "unknown".
func TestDashboard_Watch(t *testing.T) {
	chromium := browsertest.Chromium(t)
	const token = "watch-admin-token-0123456789"
	rooms, _ := realRooms(t)
	watched := waitroom.Watched{Arrivals: 1234, ArrivalsLastMinute: 56, VisitorsLastMinute: 789,
		Pages:   map[string]int64{"waiting": 4321, "challenge": 12},
		Access:  map[string]int64{"browser": 800, "app": 400, "api": 0, "challenged": 12, "refused": 22},
		Devices: map[string]int64{"phone": 700, "tablet": 50, "desktop": 350, "bot": 100, "unknown": 34},
		Regions: map[string]int64{"KR": 300, "JP": 100, "other": 5, "unknown": 50, "US": 0}}
	srv := httptest.NewServer(NewAdmin(AdminOptions{Token: token, Rooms: rooms, Pages: newPages(t),
		Watch: func(room string) (waitroom.Watched, bool) { return watched, room == "concert" }}))
	defer srv.Close()

	ctx := headlessTab(t, chromium)
	_, problems := watchPage(ctx)
	run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `document.querySelector('article.room [data-f="w-arrivals"]')?.textContent === '56'`, "the watch numbers")
	type barText struct{ Key, Label, Count, Width string }
	type watchText struct {
		Hidden                           bool
		Arrivals, Total, Visitors, Pages string
		Challenge                        string
		Access, Devices, Regions         []barText
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[watchText](`(() => {
		const a = document.querySelector('article.room'), f = k => a.querySelector('[data-f="' + k + '"]').textContent;
		const bars = kind => [...a.querySelectorAll('[data-bars="' + kind + '"] .bar')].map(b => ({key: b.dataset.k,
			label: b.querySelector('span').textContent, count: b.querySelector('b').textContent,
			width: b.querySelector('.fill').getAttribute('width')}));
		return {hidden: a.querySelector('[data-f=watch]').hidden, arrivals: f('w-arrivals'), total: f('w-arrivals-total'),
			visitors: f('w-visitors'), pages: f('w-pages'), challenge: f('w-challenge'), access: bars('access'), devices: bars('devices'),
			regions: bars('regions')};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	want := watchText{Arrivals: "56", Total: "1,234 since start", Visitors: "789", Pages: "4,321", Challenge: "challenged 12",
		Access: []barText{{"browser", "browser", "800", "100.0%"}, {"app", "app / JSON", "400", "50.0%"},
			{"api", "API client", "0", "0.0%"}, {"challenged", "challenged", "12", "1.5%"}, {"refused", "refused", "22", "2.8%"}},
		Devices: []barText{{"phone", "phone", "700", "100.0%"}, {"tablet", "tablet", "50", "7.1%"},
			{"desktop", "desktop", "350", "50.0%"}, {"bot", "bot-like", "100", "14.3%"}, {"unknown", "unknown", "34", "4.9%"}},
		// The countries by count (none of 0), then unknown.
		Regions: []barText{{"KR", "KR", "300", "100.0%"}, {"JP", "JP", "100", "33.3%"}, {"other", "other", "5", "1.7%"},
			{"unknown", "unknown", "50", "16.7%"}}}
	if got.Hidden || got.Arrivals != want.Arrivals || got.Total != want.Total || got.Visitors != want.Visitors ||
		got.Pages != want.Pages || got.Challenge != want.Challenge || len(got.Access) != 5 || len(got.Devices) != 5 {
		t.Fatalf("the card's watch: %+v\nwant %+v", got, want)
	}
	for i := range want.Access {
		if got.Access[i] != want.Access[i] || got.Devices[i] != want.Devices[i] {
			t.Fatalf("bar %d: %+v and %+v, want %+v and %+v", i, got.Access[i], got.Devices[i], want.Access[i], want.Devices[i])
		}
	}
	if len(got.Regions) != len(want.Regions) {
		t.Fatalf("region bars: %+v, want %+v", got.Regions, want.Regions)
	}
	for i := range want.Regions {
		if got.Regions[i] != want.Regions[i] {
			t.Fatalf("region bar %d: %+v, want %+v", i, got.Regions[i], want.Regions[i])
		}
	}
	saveScreenshot(t, ctx, "../docs/dashboard-watch.png")
	problems.check(t)
}
