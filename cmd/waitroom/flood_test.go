package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The attacks of a whole minute, played through real gateways: a farm
// that solves every challenge, and a flooder that never comes back, each
// against the neighbours it shares a network with. They run for 60 s, in
// parallel, so the package's run stays short.

// attackFor is how long each attack runs.
const attackFor = time.Minute

// gateways starts the gateways of one run: one on the memory store, three
// on one Redis, sharing the line and every quota.
func gateways(t *testing.T, cfg, addr string) []string {
	t.Helper()
	_, a := startGateway(t, cfg)
	if addr == "" {
		return []string{a}
	}
	_, b := startGateway(t, cfg)
	_, c := startGateway(t, cfg)
	return []string{a, b, c}
}

// parallelStores is stores with each store's run in parallel.
func parallelStores(t *testing.T, fn func(t *testing.T, addr string)) {
	t.Run("memory", func(t *testing.T) { t.Parallel(); fn(t, "") })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		fn(t, srv.Addr())
	})
}

// A farm that solves every challenge for a minute, against join_limit
// 60/m with challenge: pow, takes no more places at the front than the
// ceiling (ChallengeJoinFactor times join_limit at once, then its pace)
// from one /24, and no more than seven /56s' worth from seven /56s of one
// /48 (their /48's ceiling, BlockFactor times, stands above that); past
// it, 429 with Retry-After and no number.
func TestFarm_AMinuteAgainstTheCeiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		clients []string
	}{
		{"one /24", []string{"203.0.113.7", "203.0.113.8", "203.0.113.200"}},
		{"seven /56s of one /48", func() []string {
			var c []string
			for i := range 7 {
				c = append(c, fmt.Sprintf("2001:db8:7:%02x00::1", i))
			}
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parallelStores(t, func(t *testing.T, addr string) {
				_, site := newUpstream(t)
				bases := gateways(t, trustedConfig(site.URL, farmRoom("60/m"), addr), addr)
				run := farm(t, bases, tc.clients, attackFor, 0)
				burst := waitroom.ChallengeJoinFactor * 60
				networks := len(tc.clients)
				if networks == 3 { // one /24
					networks = 1
				}
				most := allowance(burst*networks, 60*networks, run.elapsed)
				t.Logf("a farm from %s through %d gateways: %d places and %d refusals in %v (%.0f places a minute); ceiling %d",
					tc.name, len(bases), run.total, run.limited, run.elapsed.Round(time.Millisecond),
					float64(run.total)/run.elapsed.Minutes(), most)
				if run.total > most {
					t.Errorf("the farm took %d places in %v, more than the ceiling allows (%d)", run.total, run.elapsed, most)
				}
				if networks > 1 {
					for ip, n := range run.placed {
						if n > allowance(burst, 60, run.elapsed) {
							t.Errorf("%s took %d places, more than one /56's ceiling", ip, n)
						}
					}
				}
				if run.limited == 0 {
					t.Errorf("the farm took %d places and was never refused: it never met the ceiling", run.total)
				}
			})
		})
	}
}

// floodRoom lets nobody in, so every honest visitor's place is one in
// line, at the defaults (tick 1s, page refresh 5s) but for join_limit
// 60/m; with pow, newcomers solve a little work first.
func floodRoom(pow bool) string {
	room := "    max_active: 0\n    join_limit: 60/m"
	if pow {
		room += "\n    challenge: pow\n    challenge_bits: 8\n    challenge_max_bits: 12"
	}
	return room
}

// flooder sends ten cookieless requests a second from client, round the
// gateways, until ctx ends, never coming back; it counts what it got.
func flooder(ctx context.Context, bases []string, client string) (stop func() (sent, limited int64)) {
	var sent, limited atomic.Int64
	c := &http.Client{Timeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, bases[i%len(bases)]+"/events/1", nil)
			req.Header.Set("X-Forwarded-For", client)
			req.Header.Set("Accept", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sent.Add(1)
			if resp.StatusCode == http.StatusTooManyRequests {
				limited.Add(1)
			}
		}
	}()
	return func() (int64, int64) { <-done; return sent.Load(), limited.Load() }
}

// honest is a browser-like client without a test's Fatal, for use from
// goroutines: it keeps its cookies and comes back when told.
type honest struct {
	c      *http.Client
	client string
}

func newHonest(client string) *honest {
	jar, _ := cookiejar.New(nil)
	return &honest{client: client, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (h *honest) get(url string, hdr ...string) (int, map[string]any, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Forwarded-For", h.client)
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

// join is an honest visitor's way to a place, as the waiting page takes
// it: the first request, the work if asked (docs/challenge.md), then back
// after the refresh it is told, through whichever gateway, until it holds
// a place (the store says so: "waiting" with a position once its ticket
// came back). It returns how long that took.
func (h *honest) join(bases []string, within time.Duration) (time.Duration, error) {
	start := time.Now()
	path := "/events/1"
	ticket := false // a first answer handed out a ticket
	for i := 0; time.Since(start) < within; i++ {
		base := bases[i%len(bases)]
		status, m, err := h.get(base + path)
		if err != nil {
			return 0, err
		}
		state, _ := m["state"].(string)
		switch {
		case state == "challenge":
			c, _ := m["challenge"].(map[string]any)
			prefix, _ := c["prefix"].(string)
			bits, _ := c["bits"].(float64)
			status, m, err = h.get(base+path, waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, int(bits)))
			if err != nil {
				return 0, err
			}
			if s, _ := m["state"].(string); s == "waiting" && status == http.StatusOK {
				return time.Since(start), nil // a solved challenge places at once
			}
		case state == "waiting" && ticket:
			return time.Since(start), nil // the ticket came back and took its place
		case state == "waiting":
			ticket = true
		case state == "hold":
			// A store call outlived its timeout on a busy machine: the
			// page asks again after its refresh, as here.
		case state != "waiting":
			return 0, fmt.Errorf("request %d: %d %v", i+1, status, m)
		}
		wait := 5 * time.Second
		if r, _ := m["refresh_after"].(float64); r > 0 {
			wait = time.Duration(r) * time.Second
		}
		time.Sleep(wait)
	}
	return 0, fmt.Errorf("no place within %v", within)
}

// A cookieless flood of ten requests a second from one address for a
// minute, and an honest neighbour of the same /24 joining every ten
// seconds: each honest visitor gets its place (after the work, with pow)
// within 30 s, since the quota counts the places a network takes, not the
// first requests that never come back; the line holds the honest ones
// only, and nobody the flood sent.
func TestFlood_NeighbourGetsAPlace(t *testing.T) {
	t.Parallel()
	for _, pow := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "pow"}[pow], func(t *testing.T) {
			t.Parallel()
			parallelStores(t, func(t *testing.T, addr string) {
				_, site := newUpstream(t)
				cfg := trustedConfig(site.URL, floodRoom(pow), addr)
				app, base := startGateway(t, cfg)
				bases := []string{base}
				if addr != "" {
					_, b := startGateway(t, cfg)
					_, c := startGateway(t, cfg)
					bases = append(bases, b, c)
				}
				ctx, cancel := context.WithTimeout(context.Background(), attackFor)
				defer cancel()
				stop := flooder(ctx, bases, "203.0.113.7")
				var wg sync.WaitGroup
				took := make([]time.Duration, 6)
				errs := make([]error, 6)
				for i := range took {
					time.Sleep(5 * time.Second) // the flood runs first, then one every 10 s
					wg.Go(func() {
						took[i], errs[i] = newHonest(fmt.Sprintf("203.0.113.%d", 20+i)).join(bases, 30*time.Second)
					})
					time.Sleep(5 * time.Second)
				}
				wg.Wait()
				<-ctx.Done()
				sent, limited := stop()
				t.Logf("flood: %d requests, %d refused; honest neighbours' time to a place: %v", sent, limited, took)
				for i, err := range errs {
					if err != nil {
						t.Errorf("honest neighbour %d: %v", i+1, err)
					}
				}
				if sent < 300 {
					t.Errorf("the flood sent only %d requests in a minute, want about 600", sent)
				}
				waitFor(t, 5*time.Second, func() bool {
					_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
					return num(m, "waiting") == len(took)
				})
			})
		})
	}
}

// A real headless Chromium behind the flooder's /24 (the gateway sees
// the browser at 127.0.0.1, the flood at 127.0.0.9) gets its place
// within 30 s: on a plain room by bringing its ticket back, on a room with
// pow after the page has done the work.
func TestBrowser_FloodedNeighbourGetsAPlace(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	for _, pow := range []bool{false, true} {
		_, site := newUpstream(t)
		app, base := startGateway(t, trustedConfig(site.URL, floodRoom(pow), ""))
		ctx, cancel := context.WithCancel(context.Background())
		stop := flooder(ctx, []string{base}, "127.0.0.9")
		time.Sleep(8 * time.Second) // the flood runs first, past join_limit's 60 at once
		start := time.Now()
		tab := newBrowserVisitor(t, browser)
		brDo(t, tab, "open the room", chromedp.Navigate(base+"/events/show"))
		brWaitJS(t, tab, "a position on the page", `document.getElementById('wr-main') !== null &&
			document.getElementById('wr-main').dataset.state === 'waiting' && /^[0-9]+$/.test(document.getElementById('wr-pos').textContent)`)
		// Placed: the line holds the browser (and nobody the flood sent).
		for num(adminRoom(t, app), "waiting") != 1 && time.Since(start) < time.Minute {
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(start)
		cancel()
		sent, limited := stop()
		t.Logf("pow %t: Chromium held its place %v after it opened the room, beside a flood of %d requests (%d refused)", pow, took.Round(time.Millisecond), sent, limited)
		if took > 30*time.Second {
			t.Errorf("pow %t: Chromium's place took %v, want at most 30 s", pow, took)
		}
	}
}

// adminRoom reads the concert room from the admin API.
func adminRoom(t *testing.T, app *App) map[string]any {
	t.Helper()
	_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
	return m
}

// server.shared_networks: a bad entry is refused by key in words; inside a
// listed range (a carrier's NAT) join_limit counts each address, so one
// subscriber's places leave its neighbours' alone, while outside it the
// /24 is still one unit, and the range's /16 keeps its ceiling.
func TestGuard_SharedNetworks(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{`"100.64.0.0"`, `server.shared_networks[0]: want a CIDR such as "100.64.0.0/10"`},
		{`"100.64.0.1/10"`, `server.shared_networks[0]: has host bits set: want "100.64.0.0/10"`},
		{`"0.0.0.0/0"`, `server.shared_networks[0]: must be /8 or narrower`},
		{`"2001:db8::/12"`, `server.shared_networks[0]: must be /16 or narrower`},
	} {
		src := strings.Replace(goodConfig, "listen: ", "server: { shared_networks: ["+c.entry+"] }\nlisten: ", 1)
		_, err := parseConfig("bad.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shared_networks [%s]: %v, want %q", c.entry, err, c.want)
		}
	}
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		cfg := trustedConfig(site.URL, "    max_active: 0\n    tick: 50ms\n    join_limit: 2/m", addr)
		cfg = strings.Replace(cfg, "server: { trusted_proxies: [127.0.0.1/32] }",
			"server: { trusted_proxies: [127.0.0.1/32], shared_networks: [100.64.0.0/10] }", 1)
		_, base := startGateway(t, cfg)
		place := func(client string) reply {
			v := newVisitor(t, base)
			v.from(client, http.MethodGet, "/events/1")
			return v.from(client, http.MethodGet, "/events/1")
		}
		for i := range 2 { // one subscriber of the carrier takes its two places
			if r := place("100.64.1.7"); r.state() != "waiting" {
				t.Fatalf("subscriber's place %d: %d %v", i+1, r.status, r.json)
			}
		}
		if r := place("100.64.1.7"); r.status != http.StatusTooManyRequests {
			t.Fatalf("subscriber's third place: %d %v, want 429", r.status, r.json)
		}
		if r := place("100.64.1.8"); r.state() != "waiting" {
			t.Fatalf("another subscriber of the same /24 of the carrier: %d %v, want its place", r.status, r.json)
		}
		for i := range 2 { // outside the range the /24 is one unit
			if r := place(fmt.Sprintf("198.51.100.%d", 10+i)); r.state() != "waiting" {
				t.Fatalf("place %d of an ordinary /24: %d %v", i+1, r.status, r.json)
			}
		}
		if r := place("198.51.100.99"); r.status != http.StatusTooManyRequests {
			t.Fatalf("a third place of an ordinary /24: %d %v, want 429", r.status, r.json)
		}
	})
}

// A cookieless flood of ten requests a second for ten seconds, at the
// default join_limit: two ticks later a newcomer of another network is
// shown a position no more than twice PendingPerNetwork behind where it
// would be without the flood (a few percent of the flood's 100), and the
// position does not grow when its ticket comes back.
func TestFlood_ShownPositionBound(t *testing.T) {
	t.Parallel()
	parallelStores(t, func(t *testing.T, addr string) {
		_, site := newUpstream(t)
		bases := gateways(t, trustedConfig(site.URL, "    max_active: 0", addr), addr)
		const flood = 100
		c := &http.Client{Timeout: 10 * time.Second}
		for i := range flood {
			req, _ := http.NewRequest(http.MethodGet, bases[i%len(bases)]+"/events/1", nil)
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			req.Header.Set("Accept", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // two ticks
		v := newVisitor(t, bases[0])
		shown := v.from("198.51.100.1", http.MethodGet, "/events/1").position()
		// Ten of the flood's at most (5 at once, 5 more per placement
		// window), one more as the window's edge moves by eighths.
		most := 2 + 2*waitroom.PendingPerNetwork
		t.Logf("after a flood of %d never-returning requests, a newcomer is shown position %d (bound %d)", flood, shown, most)
		if shown < 1 || shown > most {
			t.Errorf("a newcomer after a flood of %d: position %d, want 1 to %d", flood, shown, most)
		}
		v.base = bases[len(bases)-1]
		if r := v.from("198.51.100.1", http.MethodGet, "/events/1"); r.state() != "waiting" || r.position() > shown {
			t.Errorf("the newcomer's ticket brought back: %d %v, want a place at %d or better", r.status, r.json, shown)
		}
	})
}
