package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// startNginx runs Debian's nginx with docs/integrations/nginx/waitroom.conf,
// its placeholders filled, until the test ends; its base URL.
func startNginx(t *testing.T, site, gateway string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "nginx not found; make deps installs Debian's package"
		if os.Getenv("CI") != "" || os.Getenv("WAITROOM_REQUIRE_REDIS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "integrations", "nginx", "waitroom.conf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	listen := freeAddr(t)
	conf := strings.NewReplacer("LISTEN", listen, "SITE", strings.TrimPrefix(site, "http://"),
		"WAITROOM", strings.TrimPrefix(gateway, "http://")).Replace(string(src))
	if err := os.WriteFile(filepath.Join(dir, "waitroom.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	main := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  include %[1]s/waitroom.conf;
}
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx:\n%s%s", out.String(), logs)
		}
	})
	waitFor(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + listen
}

// trustLoopback lists the tests' own address in server.trusted_proxies, as
// an operator lists the proxy that makes auth requests: the auth endpoint
// answers nobody else.
func trustLoopback(cfg string) string {
	out := strings.Replace(cfg, "listen: \"127.0.0.1:0\"\n", "listen: \"127.0.0.1:0\"\nserver: { trusted_proxies: [127.0.0.1/32] }\n", 1)
	if out == cfg {
		panic("trustLoopback: no listen line to put server: after")
	}
	return out
}

// The 200-visitor FIFO scenario through nginx and the auth endpoint: every
// visitor gets in once, in ticket order, and the room never holds more
// than max_active. The site releases each visitor through the admin API,
// as a site behind nginx must (its answers do not pass through waitroom).
func TestNginx_AuthRequestFIFO(t *testing.T) {
	const n, maxActive = 200, 10
	var admin *adminClient
	var mu sync.Mutex
	inside, most := map[string]bool{}, 0
	var served atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(waitroom.VisitorHeader)
		if id == "" || r.Header.Get("Waitroom-Pass") == "" {
			http.Error(w, "not through the line", http.StatusForbidden) // the back door is shut
			return
		}
		served.Add(1)
		mu.Lock()
		inside[id] = true
		most = max(most, len(inside))
		mu.Unlock()
		if r.URL.Path == "/events/done" {
			mu.Lock()
			delete(inside, id)
			mu.Unlock()
			if code, _, body := admin.do("POST", "/admin/api/rooms/concert/release", fmt.Sprintf(`{"visitor":%q}`, id)); code != 200 {
				t.Errorf("release through the admin API: %d %s", code, body)
			}
		}
		fmt.Fprint(w, "site:"+r.URL.Path)
	}))
	t.Cleanup(site.Close)
	dir := t.TempDir()
	key := filepath.Join(dir, "pass.pem")
	writeEd25519(t, key)
	// The room opens (max_active by override) once every ticket came back
	// once: a ticket takes its place when it comes back, and one that came
	// back first may rightly go in before an earlier one returns.
	// join_limit off: its visitors all come from one network, whose tickets past
	// PendingPerNetwork would otherwise be placed in the order they come back.
	cfg := gwConfig(site.URL, "    max_active: 0\n    tick: 50ms\n    join_limit: unlimited\n    page: { refresh: 1s }") +
		fmt.Sprintf("server: { trusted_proxies: [127.0.0.1/32] }\npass: { key_files: [%q] }\n", key)
	app, gateway := startGateway(t, cfg)
	admin = newAdmin(t, app)
	base := startNginx(t, site.URL, gateway)
	codec := testTickets(t)

	visitors := make([]*visitor, n)
	ids := make([]string, n)
	tickets := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			visitors[i] = newVisitor(t, base)
			visitors[i].getJSON("/events/")
			tk, err := codec.Decode("concert", visitors[i].cookieValue("concert"))
			if err != nil {
				t.Errorf("visitor %d has no ticket through nginx: %v", i, err)
				return
			}
			ids[i], tickets[i] = tk.Visitor, tk.Number
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := range n {
		wg.Go(func() {
			if r := visitors[i].get("/events/in"); r.body == "site:/events/in" {
				t.Errorf("visitor %d let in by a closed room", i)
			}
		})
	}
	wg.Wait()
	open := maxActive
	if err := app.store.SetOverride(context.Background(), "concert", waitroom.Override{MaxActive: &open}); err != nil {
		t.Fatal(err)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return tickets[order[a]] < tickets[order[b]] })
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r
	}
	lim := mustRoom(t, app.current().cfg.Rooms["concert"]).Limits
	// In ticket order, checked against the store and not a clock: once a
	// visitor is let in, nobody with an earlier ticket may still wait.
	// The deadline is generous: 200 visitors through 10 slots, each
	// request through nginx, the auth endpoint and the admin API, take
	// long on a busy machine; polls every 100ms keep the crowd's own load
	// down.
	var inversions atomic.Int64
	deadline := time.Now().Add(3 * time.Minute)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := visitors[i]
			for ; ; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("visitor %d (ticket rank %d) never admitted", i, rank[i])
					return
				}
				if r := v.get("/events/in"); r.body == "site:/events/in" {
					break
				}
			}
			for _, j := range order[:rank[i]] {
				d, err := app.store.Decide(context.Background(), "concert", lim, waitroom.Visitor{ID: ids[j], Ticket: tickets[j]}, waitroom.JoinNone)
				if err == nil && d.State == waitroom.StateWaiting {
					t.Errorf("visitor of rank %d let in while rank %d still waits", rank[i], rank[j])
					inversions.Add(1)
					break
				}
			}
			if r := v.get("/events/done"); r.body != "site:/events/done" {
				t.Errorf("visitor %d inside: %d %q", i, r.status, r.body)
			}
		}()
	}
	wg.Wait()
	st, err := app.store.Stats(context.Background(), "concert")
	t.Logf("through nginx: %d served, at most %d inside at once, %d inversions, stats %+v", served.Load(), most, inversions.Load(), st)
	if err != nil || st.AdmittedTotal != n || most > maxActive || inversions.Load() > 0 {
		t.Fatalf("admitted %d of %d, %d inside at most (max %d), %d inversions: %v", st.AdmittedTotal, n, most, maxActive, inversions.Load(), err)
	}
	// The back door: the site straight, without the line.
	if res, err := http.Get(site.URL + "/events/in"); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("the site without the line: %v %v", res, err)
	}
}

// The auth endpoint's answers to Traefik and Envoy (X-Forwarded-*): a
// visitor inside gets 200 with the headers to copy, a waiting one the
// waiting answer itself at 429 (both proxies let any 2xx through to the
// site), a bypass or a route without a room 200
// (not waitroom's), a refused template value 404; waitroom's own paths are
// never allowed, a client's own Waitroom-Pass never comes back, and a
// client's X-Original-URI beside its proxy's X-Forwarded-Uri is refused.
func TestAuth_ForwardAuthAnswers(t *testing.T) {
	_, site := newUpstream(t)
	_, base := startGateway(t, trustLoopback(gwConfig(site.URL, "    max_active: 1\n    tick: 50ms")))
	ask := func(v *visitor, uri string, hdr ...string) reply {
		return v.do(http.MethodGet, "/.waitroom/auth", append([]string{"X-Forwarded-Uri", uri, "X-Forwarded-Method", "GET", "X-Forwarded-Host", "shop.example"}, hdr...)...)
	}
	in := newVisitor(t, base)
	r := ask(in, "/events/1")
	if r.status != 200 || r.header.Get("Waitroom-Visitor") == "" || r.header.Get("Waitroom-Room") != "concert" || len(r.header.Values("Set-Cookie")) == 0 {
		t.Fatalf("the first visitor: %d %v", r.status, r.header)
	}
	if r := ask(in, "/events/2"); r.status != 200 {
		t.Fatalf("the visitor inside again: %d", r.status)
	}
	out := newVisitor(t, base)
	r = ask(out, "/events/1", "Accept", "application/json")
	if r.status != http.StatusTooManyRequests || r.state() != "waiting" || r.header.Get("Waitroom-State") != "waiting" || r.header.Get("Retry-After") == "" {
		t.Fatalf("a waiting visitor: %d %v %v", r.status, r.json, r.header)
	}
	if r := ask(out, "/events/1"); r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "<html") {
		t.Fatalf("a waiting visitor's page: %d", r.status)
	}
	for _, uri := range []string{"/.waitroom/x", "/.WAITROOM/x", "/.waitroom;a/x", "/.waitroom"} {
		if r := ask(newVisitor(t, base), uri); r.status/100 == 2 {
			t.Errorf("waitroom's own path %s allowed: %d", uri, r.status)
		}
	}
	if r := ask(newVisitor(t, base), "/about", "Waitroom-Pass", "forged.by.client"); r.status != 200 || r.header.Get("Waitroom-Pass") != "" {
		t.Errorf("a client's own pass came back: %d %q", r.status, r.header.Get("Waitroom-Pass"))
	}
	if r := ask(out, "/events/1", "X-Original-URI", "/about"); r.status != http.StatusBadRequest {
		t.Errorf("a client's X-Original-URI beside X-Forwarded-Uri: %d", r.status)
	}
	for uri, want := range map[string]int{"/static/a.css": 200, "/about": 200} {
		if r := ask(newVisitor(t, base), uri); r.status != want || r.header.Get("Waitroom-Visitor") != "" {
			t.Errorf("%s: %d %v", uri, r.status, r.header)
		}
	}
	// Envoy's ext_authz: the original path after the endpoint's, any method.
	if r := in.do(http.MethodPost, "/.waitroom/auth/events/3"); r.status != 200 || r.header.Get("Waitroom-Room") != "concert" {
		t.Errorf("Envoy style, the visitor inside: %d %v", r.status, r.header)
	}
	if r := newVisitor(t, base).do(http.MethodGet, "/.waitroom/auth"); r.status != http.StatusBadRequest {
		t.Errorf("an auth request naming nothing: %d", r.status)
	}
	// nginx's headers: a waiting visitor is a bare 401.
	if r := out.do(http.MethodGet, "/.waitroom/auth", "X-Original-URI", "/events/1", "X-Original-Method", "GET"); r.status != http.StatusUnauthorized {
		t.Errorf("nginx, a waiting visitor: %d", r.status)
	}
}

// BenchmarkAuthDecision puts an admitted visitor's auth decision (what
// nginx asks for every request) beside the same request proxied, on the
// memory store.
func BenchmarkAuthDecision(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "site") }))
	b.Cleanup(up.Close)
	_, base := startGateway(b, trustLoopback(gwConfig(up.URL, "    max_active: 1000")))
	v := newVisitor(b, base)
	v.get("/events/1")
	for _, bc := range []struct {
		name string
		path string
		hdr  []string
	}{
		{"proxied", "/events/1", nil},
		{"auth", "/.waitroom/auth", []string{"X-Original-URI", "/events/1", "X-Original-Method", "GET"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if r := v.do(http.MethodGet, bc.path, bc.hdr...); r.status != 200 {
					b.Fatalf("%d", r.status)
				}
			}
		})
	}
}

// A CORS preflight through the auth endpoint is counted against its
// network's preflight_limit like one at the front door, allowed within it
// and refused past it (429 to forwardAuth and ext_authz, 403 to nginx,
// which passes 403 on); the auth endpoint's empty 200 is never kept as the
// site's answer for the front door to replay.
func TestAuth_PreflightsBounded(t *testing.T) {
	_, site := newUpstream(t)
	_, base := startGateway(t, trustLoopback(gwConfig(site.URL, "    max_active: 0\n    preflight_limit: 2/m")))
	v := newVisitor(t, base)
	pre := []string{"Origin", "https://app.example", "Access-Control-Request-Method", "POST"}
	forward := func() int {
		return v.do(http.MethodOptions, "/.waitroom/auth", append([]string{"X-Forwarded-Uri", "/events/1", "X-Forwarded-Method", "OPTIONS"}, pre...)...).status
	}
	nginx := func() int {
		return v.do(http.MethodOptions, "/.waitroom/auth", append([]string{"X-Original-URI", "/events/1", "X-Original-Method", "OPTIONS"}, pre...)...).status
	}
	got := []int{forward(), nginx(), forward(), nginx()}
	if fmt.Sprint(got) != "[200 200 429 403]" {
		t.Fatalf("preflights through the auth endpoint answered %v, want [200 200 429 403]", got)
	}
	if r := v.do(http.MethodOptions, "/events/1", pre...); r.status != http.StatusTooManyRequests {
		t.Fatalf("the front door past the limit replayed %d (an auth answer is no site answer)", r.status)
	}
}

// A request for a host no route has is refused by the auth endpoint as by
// the front door (404), never allowed: with host-scoped routes, a client
// naming another Host must not walk around the room.
func TestAuth_NoRouteIsRefused(t *testing.T) {
	_, site := newUpstream(t)
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 0"), "  - { path: /, upstream: site }\n", "", 1)
	cfg = strings.Replace(cfg, "  - { path: /events/, upstream: site, room: concert }", "  - { host: hosted.example, path: /events/, upstream: site, room: concert }", 1)
	_, base := startGateway(t, trustLoopback(cfg))
	ask := func(host string) int {
		return newVisitor(t, base).do(http.MethodGet, "/.waitroom/auth", "X-Forwarded-Uri", "/events/1", "X-Forwarded-Method", "GET", "X-Forwarded-Host", host).status
	}
	if got := ask("hosted.example"); got != http.StatusTooManyRequests {
		t.Fatalf("the room's own host: %d, want 429 (waiting)", got)
	}
	if got := ask("evil.example"); got != http.StatusNotFound {
		t.Fatalf("a host no route has: %d, want 404", got)
	}
	// nginx names the host in Host itself: here the gateway's own address,
	// which no route has either.
	if got := newVisitor(t, base).do(http.MethodGet, "/.waitroom/auth", "X-Original-URI", "/events/1").status; got != http.StatusUnauthorized {
		t.Fatalf("nginx, a host no route has: %d, want 401", got)
	}
}
