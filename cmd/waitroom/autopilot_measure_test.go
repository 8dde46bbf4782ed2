package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// What the autopilot measures, through a gateway in front of a real site:
// only the site's answers, timed from the request written whole, at most
// waitroom.AutopilotSessionCap of a session's per interval, and a client
// that gave up on a slow site (docs/autopilot.md, "What is measured").

// measureConfig is a gateway with one room, shop, whose autopilot judges
// every second at percentile p against target.
func measureConfig(site string, p, target string, minActive, maxActive int) string {
	return fmt.Sprintf(`
listen: "127.0.0.1:0"
admin: { listen: "127.0.0.1:0", token: %[3]q }
log: { level: error }
cookie: { secure: false, hash_keys: [%[2]q], block_keys: [%[2]q] }
upstreams:
  site: { url: %[1]q, timeout: 30s }
rooms:
  shop:
    max_active: %[6]d
    session_ttl: 120s
    tick: 250ms
    join_limit: unlimited
    session_clients: 0
    autopilot: { target: %[5]s, percentile: %[4]s, interval: 1s, min_active: %[7]d }
routes:
  - { path: /shop/, upstream: site, room: shop }
`, site, testKey, adminToken, p, target, maxActive, minActive)
}

// apView reads the room's autopilot from the admin API.
func apView(t *testing.T, c *adminClient) map[string]any {
	t.Helper()
	code, body, raw := c.do(http.MethodGet, "/admin/api/rooms/shop", "")
	if code != http.StatusOK {
		t.Fatalf("GET room: %d %s", code, raw)
	}
	ap, ok := body["autopilot"].(map[string]any)
	if !ok {
		t.Fatalf("room view has no autopilot: %s", raw)
	}
	return ap
}

// pager is one session (its own cookies) asking do in a loop until ctx
// ends; do's errors are the site's business.
func pager(ctx context.Context, wg *sync.WaitGroup, timeout time.Duration, do func(c *http.Client) (*http.Request, error)) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: timeout}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			req, err := do(c)
			if err != nil {
				return
			}
			if resp, err := c.Do(req.WithContext(ctx)); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
}

// judged watches the autopilot for span once its sessions are past their
// warm-up, and returns every step judged meanwhile (reason starting with
// the percentile) as latency in seconds and reason.
func judged(t *testing.T, c *adminClient, p string, span time.Duration) (lat []float64, reasons []string) {
	t.Helper()
	time.Sleep(waitroom.AutopilotWarmup + 2*time.Second) // warm-up, then a step past it
	seen := map[int]bool{}
	for end := time.Now().Add(span); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ap := apView(t, c)
		r, _ := ap["reason"].(string)
		step := num(ap, "steps")
		if seen[step] || !strings.HasPrefix(r, p+" ") {
			continue
		}
		seen[step] = true
		l, _ := ap["latency_seconds"].(float64)
		lat, reasons = append(lat, l), append(reasons, r)
	}
	if len(lat) < 2 {
		t.Fatalf("fewer than 2 steps judged in %s: %v", span, reasons)
	}
	return lat, reasons
}

// One admitted visitor spraying the site's instant 404s and h2c upgrades
// (the gateway's own 400) from several connections does not make a slow
// site look fast: the 400s are not measured, and the session's 404s are
// at most AutopilotSessionCap of the step's sample, while ten visitors
// see the site's 300 ms. Judged at p50, where a sprayer that was most of
// the sample would win outright.
func TestAutopilot_SprayIsNotTheSample(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/shop/missing" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(site.Close)
	app, base := startGateway(t, measureConfig(site.URL, "p50", "100ms", 20, 40))
	c := newAdmin(t, app)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	page := func(*http.Client) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, base+"/shop/page", nil)
	}
	for range 10 {
		pager(ctx, &wg, 10*time.Second, page)
	}
	// The sprayer: one session, admitted by its first page, then four
	// loops on its cookies.
	jar, _ := cookiejar.New(nil)
	sprayer := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	if resp, err := sprayer.Get(base + "/shop/page"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("sprayer admitted: %v %v", resp, err)
	}
	var sprayed, refused sync.Map
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/shop/missing", nil)
				if n%2 == 1 {
					req.Header.Set("Upgrade", "h2c")
					req.Header.Set("Connection", "Upgrade, HTTP2-Settings")
					req.Header.Set("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")
				}
				resp, err := sprayer.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusNotFound:
					sprayed.Store(i, n)
				case http.StatusBadRequest:
					refused.Store(i, n)
				}
			}
		}()
	}
	lat, reasons := judged(t, c, "p50", 5*time.Second)
	var n404, n400 int
	sprayed.Range(func(_, v any) bool { n404 += v.(int); return true })
	refused.Range(func(_, v any) bool { n400 += v.(int); return true })
	t.Logf("sprayer: about %d 404s and %d 400s; steps judged: %v", n404, n400, reasons)
	if n404 < 200 || n400 < 200 {
		t.Fatalf("the spray was too thin to tell (%d 404s, %d 400s)", n404, n400)
	}
	for i, l := range lat {
		if l < 0.2 {
			t.Fatalf("a step judged at p50 %.3fs (%q): the spray's fast answers were the sample, not the site's 300ms", l, reasons[i])
		}
	}
}

// Visitors whose POST bodies take a second to upload do not make a quick
// site look slow against a 500 ms target: the site's time starts once the
// request is written whole. Six such sessions, two uploads at a time each, beside three that
// ask a page.
func TestAutopilot_SlowUploadsAreNotTheSites(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(site.Close)
	app, base := startGateway(t, measureConfig(site.URL, "p90", "500ms", 20, 40))
	c := newAdmin(t, app)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 3 {
		pager(ctx, &wg, 10*time.Second, func(*http.Client) (*http.Request, error) {
			time.Sleep(50 * time.Millisecond)
			return http.NewRequest(http.MethodGet, base+"/shop/page", nil)
		})
	}
	upload := func(*http.Client) (*http.Request, error) {
		pr, pw := io.Pipe()
		go func() {
			for range 5 {
				time.Sleep(200 * time.Millisecond)
				if _, err := pw.Write([]byte(strings.Repeat("x", 64))); err != nil {
					return
				}
			}
			pw.Close()
		}()
		return http.NewRequest(http.MethodPost, base+"/shop/form", pr)
	}
	for range 6 {
		jar, _ := cookiejar.New(nil)
		cl := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		if resp, err := cl.Get(base + "/shop/page"); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("uploader admitted: %v %v", resp, err)
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					req, _ := upload(cl)
					if resp, err := cl.Do(req.WithContext(ctx)); err == nil {
						resp.Body.Close()
					}
				}
			}()
		}
	}
	lat, reasons := judged(t, c, "p90", 5*time.Second)
	t.Logf("steps judged: %v", reasons)
	for i, l := range lat {
		if l > 0.5 {
			t.Fatalf("a step judged at p90 %.3fs (%q): the uploads' second was taken for the site's", l, reasons[i])
		}
	}
}

// Visitors who give up on a site that takes 3 s, after 700 ms each, leave
// no answer to time, only 499s; the autopilot counts each as a sample at
// the time waited (it is over the target), so it sees a slow site rather
// than too little traffic.
func TestAutopilot_ClientsGivingUpShowASlowSite(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/shop/quick" {
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		fmt.Fprint(w, "late")
	}))
	t.Cleanup(site.Close)
	app, base := startGateway(t, measureConfig(site.URL, "p90", "300ms", 5, 20))
	c := newAdmin(t, app)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	// Each is admitted by a quick page first (the cookie comes with its
	// answer), then asks the slow one and gives up after 700ms.
	for range 5 {
		jar, _ := cookiejar.New(nil)
		cl := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		if resp, err := cl.Get(base + "/shop/quick"); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("visitor admitted: %v %v", resp, err)
		}
		cl.Timeout = 700 * time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/shop/page", nil)
				if resp, err := cl.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	time.Sleep(waitroom.AutopilotWarmup)
	var last map[string]any
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		last = apView(t, c)
		r, _ := last["reason"].(string)
		if l, _ := last["latency_seconds"].(float64); strings.HasPrefix(r, "p90 ") && l >= 0.5 {
			return
		}
	}
	t.Fatalf("the clients gave up after 700ms on a 3s site, but the autopilot says %v", last)
}
