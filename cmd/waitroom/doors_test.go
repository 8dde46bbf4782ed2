package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// corsSite answers preflights as a site with a CORS policy does, and
// counts what reached it.
type corsSite struct {
	srv       *httptest.Server
	preflight atomic.Int64
	upgrades  atomic.Int64
	other     atomic.Int64
}

func newCORSSite(t *testing.T) *corsSite {
	s := &corsSite{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
			s.upgrades.Add(1)
		}
		if r.Method != http.MethodOptions {
			s.other.Add(1)
			fmt.Fprint(w, "site")
			return
		}
		s.preflight.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		w.Header().Set("Vary", "Origin")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func preflightReq(t *testing.T, base, path, origin string, extra ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodOptions, base+path, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// 300 preflights from one network to a full room, each asking something
// new and carrying an Upgrade, cost the site at most preflight_limit (60)
// requests, none with the upgrade; a page on another origin still gets the
// site's CORS answer, replayed once its network is over the limit.
func TestDoors_PreflightFlood(t *testing.T) {
	site := newCORSSite(t)
	app, base := startGateway(t, gwConfig(site.srv.URL, "    max_active: 0\n    tick: 50ms"))
	start := time.Now()
	first := preflightReq(t, base, "/events/checkout", "https://app.example.net")
	if first.StatusCode != http.StatusNoContent || first.Header.Get("Access-Control-Allow-Origin") != "https://app.example.net" {
		t.Fatalf("a real cross-origin preflight: %d %v", first.StatusCode, first.Header)
	}
	refused := 0
	for i := range 300 {
		res := preflightReq(t, base, fmt.Sprintf("/events/%d", i), "https://evil.example", "Upgrade", "websocket", "Connection", "Upgrade")
		if res.StatusCode == http.StatusTooManyRequests {
			refused++
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("a 429 without Retry-After")
			}
		}
	}
	reached := site.preflight.Load()
	// preflight_limit 60/m: a burst of 60 and the first, and one more for
	// every second the flood took (a busy machine takes several).
	most := 61 + int64(time.Since(start)/time.Second)
	t.Logf("300 preflights: %d reached the site, %d refused, in %v", reached, refused, time.Since(start).Round(time.Millisecond))
	if reached > most || site.upgrades.Load() != 0 || site.other.Load() != 0 {
		t.Fatalf("reached the site %d times (%d with an upgrade, %d not preflights); want at most %d and none",
			reached, site.upgrades.Load(), site.other.Load(), most)
	}
	// Over the limit, the question asked first is answered from the cache.
	again := preflightReq(t, base, "/events/checkout", "https://app.example.net")
	if again.StatusCode != http.StatusNoContent || again.Header.Get("Access-Control-Allow-Origin") != "https://app.example.net" {
		t.Fatalf("a replayed preflight: %d %v", again.StatusCode, again.Header)
	}
	if site.preflight.Load() != reached {
		t.Fatal("the replayed preflight reached the site")
	}
	if st := stats(t, app, "concert"); st["waiting"].(float64) != 0 {
		t.Fatalf("preflights took places: %v", st)
	}
	body := metricsText(t, app)
	if !strings.Contains(body, `waitroom_requests_total{decision="preflight",room="concert"} 302`) {
		t.Fatalf("preflights not counted:\n%s", grepLines(body, "preflight"))
	}
}

// stats reads a room from the admin API.
func stats(t *testing.T, app *App, room string) map[string]any {
	t.Helper()
	code, v, body := newAdmin(t, app).do("GET", "/admin/api/rooms/"+room, "")
	if code != 200 {
		t.Fatalf("admin room: %d %s", code, body)
	}
	return v
}

func metricsText(t *testing.T, app *App) string {
	t.Helper()
	_, _, body := newAdmin(t, app).do("GET", "/metrics", "")
	return body
}

// rawExchange writes head on a fresh connection and returns what came
// back before the connection closed or within limit, and how long that
// took.
func rawExchange(t *testing.T, base, head string, limit time.Duration) (string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetDeadline(start.Add(limit))
	io.WriteString(conn, head)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", time.Since(start)
	}
	defer res.Body.Close()
	return res.Status, time.Since(start)
}

// A body declared and never sent holds nothing: the gate's own answer
// comes at once and takes no place, and a proxied request is cut at
// read_timeout.
func TestDoors_MissingBody(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms")+
		"server: { read_timeout: 2s, write_timeout: 2s }\n")
	status, took := rawExchange(t, base, "POST /events/buy HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n", 10*time.Second)
	t.Logf("the gate's answer over a missing body: %q after %v", status, took)
	if status == "" || took > time.Second {
		t.Fatalf("the gate's answer over a missing body: %q after %v", status, took)
	}
	if st := stats(t, app, "concert"); st["waiting"].(float64) != 0 {
		t.Fatalf("a missing body took a place: %v", st)
	}
	status, took = rawExchange(t, base, "POST /static/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", 10*time.Second)
	t.Logf("a proxied request whose body never comes: %q after %v", status, took)
	if took < 1500*time.Millisecond || took > 4*time.Second {
		t.Fatalf("a proxied request whose body never comes ended after %v (%q), want about read_timeout 2s", took, status)
	}
}

// A client that does not read is cut off at write_timeout.
func TestDoors_SlowReader(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 64<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(big) }))
	t.Cleanup(srv.Close)
	_, base := startGateway(t, gwConfig(srv.URL, "    max_active: 5")+"server: { read_timeout: 2s, write_timeout: 2s }\n")
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /static/big HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(3 * time.Second) // read nothing meanwhile
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	t.Logf("read %d of %d bytes after stalling 3s: %v", n, len(big), err)
	if n >= int64(len(big)) {
		t.Fatalf("a reader that stalled past write_timeout got all %d bytes", n)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was not closed")
	}
}

// server.max_conns_per_client: the connections past the cap are closed.
func TestDoors_MaxConnsPerClient(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 5")+"server: { max_conns_per_client: 3 }\n")
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /static/a HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("a connection within the cap: %v %v", res, err)
		}
		conns = append(conns, c)
	}
	if status, _ := rawExchange(t, base, "GET /static/a HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second); status != "" {
		t.Fatalf("a fourth connection was served: %q", status)
	}
	conns[0].Close()
	waitFor(t, 5*time.Second, func() bool {
		status, _ := rawExchange(t, base, "GET /static/a HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second)
		return status == "200 OK"
	})
	if m := grepLines(metricsText(t, app), "waitroom_conns_refused_total "); m == "" || strings.HasSuffix(m, " 0") {
		t.Errorf("the refused connection was not counted: %q", m)
	}
}

// `check` refuses a room that a second upstream name for the same site
// walks around, and never prints a Redis password.
func TestCheck_DoorsInTheConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	twoNames := write("two.yaml", `
upstreams:
  shop: { url: "http://10.0.0.5:8080" }
  shop-static: { url: "HTTP://10.0.0.5:8080/" }
rooms:
  concert: {}
routes:
  - { host: tickets.example.com, path: /events/, upstream: shop, room: concert }
  - { path: /, upstream: shop-static }
`)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", twoNames}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), `the same site (http://10.0.0.5:8080) as upstream "shop" under the name "shop-static"`) {
		t.Fatalf("check of one site under two names: exit %d\n%s", code, errb.String())
	}
	for _, addr := range []string{"redis://:hunter2secret@redis.internal:6379/0", "redis://hunter2secret@:6379", "rediss://u:hunter2secret@[::1"} {
		out.Reset()
		errb.Reset()
		p := write("redis.yaml", fmt.Sprintf(`
store: { kind: redis, redis: { addrs: [%q] } }
cookie: { hash_keys: [%[2]q], block_keys: [%[2]q] }
upstreams: { site: { url: "http://127.0.0.1:3000" } }
rooms: { concert: {} }
routes: [ { path: /, upstream: site, room: concert } ]
`, addr, testKey))
		code := run(context.Background(), []string{"check", "--config", p}, &out, &errb)
		if strings.Contains(out.String()+errb.String(), "hunter2secret") {
			t.Fatalf("check printed the password of %q (exit %d):\n%s%s", addr, code, out.String(), errb.String())
		}
		if valid := strings.HasPrefix(addr, "redis://:"); valid != (code == 0) || (valid && !strings.Contains(out.String(), "redis://:xxxxx@redis.internal:6379/0")) {
			t.Fatalf("check of %q: exit %d\n%s%s", addr, code, out.String(), errb.String())
		}
	}
}

// on_error: open opens only after open_after of failing calls: Redis
// frozen for less holds the waiting visitors; longer lets them in; back,
// they are held again.
func TestDoors_OpenOnlyAfterOpenAfter(t *testing.T) {
	srv := redistest.Start(t)
	up, site := newUpstream(t)
	_, base := startGateway(t, redisConfig(site.URL, "    max_active: 0\n    tick: 100ms", srv.Addr(), "open\n  open_after: 2s", ""))
	v := newVisitor(t, base)
	if r := v.getJSON("/events/a"); r.state() != "waiting" {
		t.Fatalf("before: %v", r.json)
	}
	reached := func() int {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.visitors[""] + len(up.paths)
	}
	var mu sync.Mutex
	pause := func() {
		mu.Lock()
		defer mu.Unlock()
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	pause()
	t.Cleanup(func() { _ = srv.Resume() })
	before := reached()
	r := v.getJSON("/events/b") // one slow call: held
	if r.state() != "hold" || reached() != before {
		t.Fatalf("a first failed call under open: %d %v", r.status, r.json)
	}
	time.Sleep(2200 * time.Millisecond)
	if r := v.get("/events/c"); r.body != "site:/events/c" {
		t.Fatalf("after open_after of failures: %d %q", r.status, r.body)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { return v.getJSON("/events/d").state() == "waiting" })
	if r := v.getJSON("/events/e"); r.state() != "waiting" {
		t.Fatalf("after Redis came back: %v", r.json)
	}
}

// A Redis that may evict keys is a loud warning at start and in /readyz,
// or a refusal to start with require_noeviction.
func TestDoors_EvictingRedis(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client().ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 1", srv.Addr(), "closed", "")
	app, _ := startGateway(t, cfg)
	code, _, body := (&adminClient{t: t, base: "http://" + app.AdminAddr().String()}).do("GET", "/readyz", "")
	if code != 200 || !strings.Contains(body, "store: up\nwarning: Redis's maxmemory-policy is allkeys-lru") {
		t.Fatalf("/readyz on an evicting Redis: %d %q", code, body)
	}
	strict := strings.Replace(cfg, "key_prefix:", "require_noeviction: true, key_prefix:", 1)
	if _, err := NewApp(mustParse(t, strict), zap.NewNop()); err == nil || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("require_noeviction on an evicting Redis: %v", err)
	}
	if err := srv.Client().ConfigSet(context.Background(), "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	code, _, body = (&adminClient{t: t, base: "http://" + app.AdminAddr().String()}).do("GET", "/readyz", "")
	if code != 200 || strings.TrimSpace(body) != "ready\nstore: up" {
		t.Fatalf("/readyz on a noeviction Redis: %d %q", code, body)
	}
}
