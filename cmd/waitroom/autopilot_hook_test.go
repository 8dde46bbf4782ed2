package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// browse has n visitors ask base+path every 30ms until ctx ends, each
// with its own cookies; errors are the site's business, not the test's.
func browse(ctx context.Context, base, path string, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				req.Header.Set("Accept", "application/json")
				if resp, err := c.Do(req); err == nil {
					resp.Body.Close()
				}
				sleepCtx(ctx, 30*time.Millisecond)
			}
		}()
	}
	return &wg
}

// The autopilot's moves reach the site's on-call as
// room.autopilot_changed: a rise (five visitors fill the limit of five, the
// site is quick), then a cut when the site fails; a second rise within the
// minute is held back (at most one rise and one fall a minute per room),
// and sent once the minute has passed, as the limit then, from the cut's.
func TestAutopilot_Webhook(t *testing.T) {
	srv := redistest.Start(t)
	var failing atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(site.Close)
	rcv, url := newHookReceiver(t, hookSecret)
	cfg := replaceOnce(t, autopilotConfig(site.URL, 20, true, fmt.Sprintf(
		"store: { kind: redis, redis: { addrs: [%q], key_prefix: hook } }", srv.Addr())),
		"interval: 2s, min_active: 10, warmup: 700ms", "interval: 500ms, min_active: 5") + fmt.Sprintf(`webhooks:
  - url: %q
    events: [room.autopilot_changed]
    secret: %q
`, url, hookSecret)
	app, base := startGateway(t, cfg)
	c := newAdmin(t, app)
	ctx, cancel := context.WithCancel(context.Background())
	wg := browse(ctx, base, "/shop/page", 5)
	defer func() { cancel(); wg.Wait() }()

	waitAutopilot(t, c, "a rise", func(l int, _ string, _ bool) bool { return l > 5 })
	waitFor(t, 10*time.Second, func() bool { return rcv.count("room.autopilot_changed") == 1 })
	up := rcv.find("room.autopilot_changed")["data"].(map[string]any)
	if up["room"] != "shop" || num(up, "from") != 5 || num(up, "to") <= 5 || !strings.Contains(up["reason"].(string), "rising") {
		t.Fatalf("the rise: %v", up)
	}

	failing.Store(true)
	waitAutopilot(t, c, "a cut", func(l int, r string, _ bool) bool { return l == 5 && strings.Contains(r, "errors") })
	waitFor(t, 10*time.Second, func() bool { return rcv.count("room.autopilot_changed") == 2 })
	rcv.mu.Lock()
	down := rcv.got[1]["data"].(map[string]any)
	rcv.mu.Unlock()
	// The step that cut may straddle the moment the site began failing,
	// so its share is under the failing site's 100%; 0.1 is five times
	// the default 2% bound, which only errors pass.
	if num(down, "to") != 5 || num(down, "from") <= 5 || down["error_share"].(float64) < 0.1 || !strings.Contains(down["reason"].(string), "errors") {
		t.Fatalf("the cut: %v", down)
	}

	failing.Store(false)
	waitAutopilot(t, c, "a second rise", func(l int, _ string, _ bool) bool { return l > 5 })
	time.Sleep(2 * time.Second) // steps pass: the rise would have been sent by now
	if n := rcv.count("room.autopilot_changed"); n != 2 {
		t.Fatalf("%d room.autopilot_changed within the minute, want 2 (one rise, one cut)", n)
	}

	// The rise held back is not dropped: once the minute since the first
	// rise has passed, the limit in effect goes out, from the cut's 5
	// (the limit last sent). With the visitors gone the limit holds, so
	// the last event is the room's state now.
	cancel()
	wg.Wait()
	waitFor(t, 90*time.Second, func() bool { return rcv.count("room.autopilot_changed") == 3 })
	rcv.mu.Lock()
	late := rcv.got[2]["data"].(map[string]any)
	rcv.mu.Unlock()
	if now, _, _, _ := autopilotOf(t, c); num(late, "from") != 5 || num(late, "to") != now || now <= 5 {
		t.Fatalf("the rise held back, sent late: %v; want from 5 to the limit now, %d", late, now)
	}
	if rcv.bad != 0 {
		t.Fatalf("%d badly signed", rcv.bad)
	}
}
