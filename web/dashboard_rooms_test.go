package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/web/browsertest"
)

// fakeDefiner is the gateway's side of the room API for the dashboard
// test: it records what the dashboard sent and puts rooms in service.
type fakeDefiner struct {
	mu      sync.Mutex
	rooms   *waitroom.Rooms
	list    []waitroom.Room
	bodies  []string
	deleted []string
}

func (f *fakeDefiner) DefineRoom(_ context.Context, name string, body []byte, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, name+" "+string(body))
	var b struct {
		MaxActive int `json:"max_active"`
	}
	_ = json.Unmarshal(body, &b)
	if strings.HasPrefix(name, "bad") {
		return &RoomProblems{Problems: []string{"routes[0].upstream: unknown upstream \"shop\""}}
	}
	f.list = append(f.list, waitroom.Room{Name: name, Tick: time.Second, Mode: waitroom.ModeFIFO, Source: waitroom.SourceAPI,
		Limits: waitroom.Limits{MaxActive: b.MaxActive, SessionTTL: time.Hour, AbandonAfter: time.Hour}})
	f.rooms.Apply(waitroom.RoomsConfig{Rooms: f.list})
	return nil
}

func (f *fakeDefiner) DeleteRoom(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, name)
	var keep []waitroom.Room
	for _, r := range f.list {
		if r.Name != name {
			keep = append(keep, r)
		}
	}
	f.list = keep
	f.rooms.Apply(waitroom.RoomsConfig{Rooms: f.list})
	return nil
}

// The dashboard creates a room through the form (showing the API's
// problem for a bad one) and deletes a room made through the API; a room
// of the file has no delete button.
func TestDashboard_CreateAndDeleteRooms(t *testing.T) {
	chromium := browsertest.Chromium(t)
	const token = "rooms-admin-token-0123456789"
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	fileRoom := waitroom.Room{Name: "concert", Tick: time.Second, Mode: waitroom.ModeFIFO, Source: waitroom.SourceFile,
		Limits: waitroom.Limits{MaxActive: 3, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
	def := &fakeDefiner{rooms: rooms, list: []waitroom.Room{fileRoom}}
	rooms.Apply(waitroom.RoomsConfig{Rooms: def.list})
	srv := httptest.NewServer(NewAdmin(AdminOptions{Token: token, Rooms: rooms, Pages: newPages(t), Definer: def}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ctx, cancel = chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()))
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()
	run(t, ctx, chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `document.querySelector('article.room[data-room="concert"]') !== null`, "the file's room")
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('article.room[data-room="concert"] [data-act="delete"]').hidden`)); err != nil || !hidden {
		t.Fatalf("a room of the file offers delete: hidden %v, %v", hidden, err)
	}
	fill := func(name, maxActive string) {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { document.getElementById('newroom').open = true;
			const f = document.getElementById('create').elements;
			f.name.value = '`+name+`'; f.path.value = '/presale/'; f.upstream.value = 'shop';
			f.max_active.value = '`+maxActive+`'; f.title.value = 'Presale';
			document.querySelector('#create button').click(); })()`))
	}
	fill("bad-room", "5")
	waitJS(t, ctx, `document.getElementById('create-err').textContent.includes('routes[0].upstream: unknown upstream')`, "the API's problem")
	fill("presale", "25")
	waitJS(t, ctx, `document.querySelector('article.room[data-room="presale"] [data-f="source"]')?.textContent === 'API'`, "the new room")
	def.mu.Lock()
	body := def.bodies[len(def.bodies)-1]
	def.mu.Unlock()
	if !strings.HasPrefix(body, "presale ") || !strings.Contains(body, `"max_active":25`) || !strings.Contains(body, `"path":"/presale/"`) ||
		!strings.Contains(body, `"upstream":"shop"`) || !strings.Contains(body, `"title":"Presale"`) {
		t.Fatalf("the API got %s", body)
	}
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('article.room[data-room="presale"] [data-act="delete"]').click()`))
	waitJS(t, ctx, `document.querySelector('article.room[data-room="presale"] [data-act="delete"]').textContent === 'Really delete?'`, "the armed button")
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('article.room[data-room="presale"] [data-act="delete"]').click()`))
	waitJS(t, ctx, `document.querySelector('article.room[data-room="presale"]') === null`, "the room gone")
	def.mu.Lock()
	defer def.mu.Unlock()
	if len(def.deleted) != 1 || def.deleted[0] != "presale" {
		t.Fatalf("deleted %v", def.deleted)
	}
}
