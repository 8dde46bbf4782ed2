package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/web/browsertest"
)

// apCard is what a room card shows of its autopilot.
type apCard struct {
	Shown    bool   `json:"shown"`
	Line     string `json:"line"`
	Why      string `json:"why"`
	Measured string `json:"measured"`
	Pinned   bool   `json:"pinned"`
	Frozen   bool   `json:"frozen"`
}

const readAP = `(() => { const a = document.querySelector('article.room'), f = k => a.querySelector('[data-f="' + k + '"]');
	return {shown: !f('autopilot').hidden, line: f('ap-line').textContent, why: f('ap-why').textContent,
		measured: f('ap-measured').textContent, pinned: !f('ap-pinned').hidden, frozen: !f('ap-frozen').hidden}; })()`

// The room card shows the autopilot, in Korean and in English: its limit
// between the bounds and the rate with it, why, what the last step
// measured; pinned (the operator's max_active, through the card's own
// form) and frozen (the store gone) as badges.
func TestDashboard_Autopilot(t *testing.T) {
	chromium := browsertest.Chromium(t)
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	ap, err := waitroom.AutopilotConfig{Target: "800ms", MinActive: 2, Interval: "200ms"}.Build(8)
	if err != nil {
		t.Fatal(err)
	}
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{{Name: "concert", Tick: 100 * time.Millisecond, Mode: waitroom.ModeFIFO,
		Limits:    waitroom.Limits{MaxActive: 8, AdmitRate: waitroom.Rate{N: 80, Per: time.Minute}, SessionTTL: time.Hour, AbandonAfter: time.Hour},
		Autopilot: ap}}})
	ctxr, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rooms.Run(ctxr) }()
	defer func() { stop(); <-done }()
	srv := httptest.NewServer(NewAdmin(AdminOptions{Rooms: rooms, Pages: newPages(t)}))
	defer srv.Close()
	read := func(ctx context.Context) apCard {
		t.Helper()
		c, err := chromedp.Run(ctx, chromedp.Evaluate[apCard](readAP))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// Korean: no traffic, so a judged step holds at the floor.
	ko := headlessTab(t, chromium)
	_, problems := watchPage(ko)
	run(t, ko, acceptLanguage("ko-KR,ko;q=0.9"), chromedp.Navigate(srv.URL+"/admin/"))
	waitJS(t, ko, `document.querySelector('article.room [data-f="ap-why"]')?.textContent === '판단할 트래픽이 부족합니다: 유지'`, "the Korean autopilot")
	if c := read(ko); c != (apCard{true, "자동 조절: 한도 2 (2~8 사이) · 입장 속도 20/m", "판단할 트래픽이 부족합니다: 유지",
		"p90 0 ms · 오류 0% · 목표 800 ms", false, false}) {
		t.Fatalf("the Korean card: %+v", c)
	}
	problems.check(t)

	// English: the operator pins the limit with the card's max active.
	en := headlessTab(t, chromium)
	_, problems = watchPage(en)
	run(t, en, acceptLanguage("en-US,en;q=0.9"), chromedp.Navigate(srv.URL+"/admin/"))
	waitJS(t, en, `document.querySelector('article.room [data-f="ap-why"]')?.textContent === 'too little traffic to judge: holding'`, "the English autopilot")
	run(t, en, chromedp.SetValue(chromedp.CSS(`form[data-act="max_active"] input`), "5"),
		chromedp.Click(chromedp.CSS(`form[data-act="max_active"] button`)))
	waitJS(t, en, `!document.querySelector('article.room [data-f="ap-pinned"]').hidden`, "the pinned badge")
	if c := read(en); c.Line != "Autopilot: limit 5 (between 2 and 8) · rate 50/m" || c.Why != "pinned by an override: release with Reset to config" || c.Frozen {
		t.Fatalf("pinned: %+v", c)
	}
	if err := rooms.ClearOverride(context.Background(), "concert"); err != nil {
		t.Fatal(err)
	}
	waitJS(t, en, `document.querySelector('article.room [data-f="ap-pinned"]').hidden`, "the pin released")

	// The store goes: the limit freezes where it was (released, it went
	// on from the pin's 5: it holds with no traffic).
	info, _ := rooms.Info("concert")
	limit := info.Effective.Autopilot.Limit
	_ = store.Close()
	waitJS(t, en, `!document.querySelector('article.room [data-f="ap-frozen"]').hidden`, "the frozen badge")
	if c := read(en); c.Line != fmt.Sprintf("Autopilot: limit %d (between 2 and 8) · rate %d/m", limit, 10*limit) || c.Why != "store unreachable: limit frozen" {
		t.Fatalf("frozen: %+v", c)
	}
	problems.check(t)
}
