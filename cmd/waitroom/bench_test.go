package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The benchmarks below put the gateway and a bare httputil.ReverseProxy,
// on the same upstream and the same transport settings, side by side in
// one run: BenchmarkPath/<path>/<store>/bare then .../gateway. With -count
// the pair alternates, and cmd/benchratio turns the output into ratios
// (make bench). Clients, proxies and upstream share this machine's cores,
// as they do alike for both.

// benchBody is a small page, the kind a site serves by the thousand.
var benchBody = strings.Repeat("x", 512)

// benchClients is how many requests are in flight at once, per GOMAXPROCS.
const benchClients = 8

func benchUpstream(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, benchBody)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// bareProxy is httputil.ReverseProxy on the transport a gateway upstream
// would get, and nothing else.
func bareProxy(b *testing.B, upstream string) string {
	target, err := url.Parse(upstream)
	if err != nil {
		b.Fatal(err)
	}
	cfg := proxy.DefaultUpstream()
	cfg.URL = upstream
	settings, err := cfg.Build()
	if err != nil {
		b.Fatal(err)
	}
	tr, err := settings.Transport()
	if err != nil {
		b.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target); r.SetXForwarded() }, Transport: tr}
	srv := httptest.NewUnstartedServer(rp)
	// The gateway's server settings, so the pair differs by the gate only.
	def := DefaultConfig().Server
	var p conf.Problems
	built, _ := def.build(&p)
	if p.Len() > 0 {
		b.Fatal(p.Err())
	}
	srv.Config.ReadHeaderTimeout = built.readHeader
	srv.Config.IdleTimeout = built.idle
	srv.Config.MaxHeaderBytes = def.MaxHeaderBytes
	srv.Start()
	b.Cleanup(srv.Close)
	return srv.URL
}

// benchRoom is the room the benchmarks use: everyone in at once for the
// admitted path, nobody for the waiting ones. Every request comes from
// 127.0.0.1, one client network, so the join quota is off: the join path
// is measured, not its refusal.
func benchRoom(maxActive int) string {
	return fmt.Sprintf("    max_active: %d\n    admit_rate: 1000000/s\n    admit_burst: 100000\n    session_ttl: 10m\n    abandon_after: 10m\n    tick: 1s\n    join_limit: unlimited", maxActive)
}

// benchGateway starts a gateway on the memory store or a fresh Redis;
// redisCmds counts the Redis work of what it serves.
func benchGateway(b *testing.B, store, upstream, room string) (string, *redisCmds) {
	cfg := gwConfig(upstream, room)
	var rc *redisCmds
	if store == "redis" {
		srv := redistest.Start(b)
		rc = &redisCmds{srv: srv}
		cfg = redisConfig(upstream, room, srv.Addr(), "closed", "")
		// The test config's short timeouts are for outage tests; a
		// benchmark that saturates two cores needs the defaults.
		cfg = strings.Replace(cfg, ", dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms", "", 1)
	}
	_, base := startGateway(b, cfg)
	return base, rc
}

// redisCmds reads a Redis server's INFO commandstats, so each gateway row
// reports the Redis work per request: scripts run (EVALSHA, EVAL, FCALL)
// and the commands they and everything else ran, the ticks included.
type redisCmds struct {
	srv *redistest.Server
}

// measure runs f and reports redis-cmds/op and redis-scripts/op over n
// requests; with rc nil (the memory store) it only runs f.
func (rc *redisCmds) measure(b *testing.B, f func()) {
	if rc == nil {
		f()
		return
	}
	c0, s0 := rc.read(b)
	f()
	c1, s1 := rc.read(b)
	b.ReportMetric(float64(c1-c0)/float64(b.N), "redis-cmds/op")
	b.ReportMetric(float64(s1-s0)/float64(b.N), "redis-scripts/op")
}

// read sums the calls of every command but the scripts themselves and
// this bookkeeping (INFO, PING), and the scripts apart.
func (rc *redisCmds) read(b testing.TB) (cmds, scripts int64) {
	info, err := rc.srv.Client().Info(b.Context(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
		switch name {
		case "evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro":
			scripts += n
		case "info", "ping", "client|setinfo", "client|setname", "hello", "select", "script|load", "config|get":
		default:
			cmds += n
		}
	}
	return cmds, scripts
}

// benchClient is one shared client with room for every in-flight request
// on a kept-alive connection.
func benchClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024
	tr.MaxIdleConns = 1024
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ticketCookies has n visitors take a ticket at base+path and returns
// their cookies; want is the state each must be in.
func ticketCookies(b *testing.B, c *http.Client, base, path string, n int, wantWaiting bool) []string {
	cookies := make([]string, n)
	for i := range cookies {
		res, err := c.Get(base + path)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if waiting := res.Header.Get("Waitroom-State") == "waiting"; waiting != wantWaiting || res.StatusCode != 200 {
			b.Fatalf("visitor %d: status %d, state %q, want waiting=%v", i, res.StatusCode, res.Header.Get("Waitroom-State"), wantWaiting)
		}
		for _, sc := range res.Cookies() {
			if strings.HasPrefix(sc.Name, "waitroom_") {
				cookies[i] = sc.Name + "=" + sc.Value
			}
		}
		if cookies[i] == "" {
			b.Fatalf("visitor %d got no ticket", i)
		}
	}
	return cookies
}

// placeCookies brings each waiting visitor's ticket back twice, as its
// page's polls would: the first takes its place, the second gets the
// anchor that later polls are answered from. It returns the cookies as
// they are then.
func placeCookies(b *testing.B, c *http.Client, base string, cookies []string) []string {
	out := slices.Clone(cookies)
	for i := range out {
		for range 2 {
			req, _ := http.NewRequest(http.MethodGet, base+"/.waitroom/status?room=concert", nil)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Cookie", out[i])
			res, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.Header.Get("Waitroom-State") != "waiting" {
				b.Fatalf("visitor %d: state %q, want waiting", i, res.Header.Get("Waitroom-State"))
			}
			for _, sc := range res.Cookies() {
				if strings.HasPrefix(sc.Name, "waitroom_") {
					out[i] = sc.Name + "=" + sc.Value
				}
			}
		}
	}
	return out
}

// load sends requests made by next from parallel clients until b.N are
// done, as fast as they are answered, checks each answer and reports
// latency percentiles and req/s. With rate > 0 it sends them at that pace
// instead (loadAtRate).
func load(b *testing.B, c *http.Client, rate int, next func(i int) *http.Request, check func(*http.Response) error) {
	if rate > 0 {
		loadAtRate(b, c, rate, next, check)
		return
	}
	var (
		mu     sync.Mutex
		lat    []time.Duration
		seq    atomic.Int64
		failed atomic.Value
	)
	b.ReportAllocs()
	b.SetParallelism(benchClients)
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	b.RunParallel(func(pb *testing.PB) {
		mine := make([]time.Duration, 0, 1024)
		for pb.Next() {
			req := next(int(seq.Add(1)))
			d, err := timed(c, req, check)
			mine = append(mine, d)
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	finish(b, lat, start, cpu0, &failed)
}

// timed sends one request, reads the whole answer, checks it, and says
// how long that took.
func timed(c *http.Client, req *http.Request, check func(*http.Response) error) (time.Duration, error) {
	t0 := time.Now()
	res, err := c.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil {
			err = check(res)
		}
	}
	return time.Since(t0), err
}

// finish stops the clock, fails on the first bad answer, and reports the
// latency percentiles, req/s and process CPU per request.
func finish(b *testing.B, lat []time.Duration, start time.Time, cpu0 time.Duration, failed *atomic.Value) {
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.90), "p90-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/op")
}

// loadAtRate sends b.N requests at rate per second, each on its own
// goroutine, whether or not earlier ones were answered (an open loop, as
// visitors arrive), and reports the same figures. Below saturation, the
// latencies are the path's own, not the queue's that a saturated machine
// builds in front of it.
func loadAtRate(b *testing.B, c *http.Client, rate int, next func(i int) *http.Request, check func(*http.Response) error) {
	lat := make([]time.Duration, b.N)
	var (
		wg     sync.WaitGroup
		failed atomic.Value
	)
	interval := time.Second / time.Duration(rate)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	for i := range b.N {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		req := next(i + 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := timed(c, req, check)
			lat[i] = d
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	finish(b, lat, start, cpu0, &failed)
}

func wantStatus(code int, state string) func(*http.Response) error {
	return func(res *http.Response) error {
		if res.StatusCode != code || res.Header.Get("Waitroom-State") != state {
			return fmt.Errorf("got %d state %q, want %d state %q", res.StatusCode, res.Header.Get("Waitroom-State"), code, state)
		}
		return nil
	}
}

// BenchmarkPath: each path at saturation, clients sending as fast as they
// are answered. Throughput ratios come from here.
func BenchmarkPath(b *testing.B) { benchPaths(b, 0) }

// BenchmarkLatency: each path at a steady latencyRate requests a second,
// well below what either side can serve. Latency ratios come from here: at
// saturation the p99 of both sides is the operating system's scheduling of
// a CPU-bound process, not the path.
func BenchmarkLatency(b *testing.B) { benchPaths(b, latencyRate) }

// latencyRate is about a fifth of what a bare proxy serves on the 2-core
// machine the figures in docs/performance.md come from.
const latencyRate = 4000

func benchPaths(b *testing.B, rate int) {
	for _, store := range []string{"memory", "redis"} {
		b.Run("admitted/"+store, func(b *testing.B) { benchAdmitted(b, store, rate) })
		b.Run("poll/"+store, func(b *testing.B) { benchPoll(b, store, rate, false) })
		b.Run("pollhtml/"+store, func(b *testing.B) { benchPoll(b, store, rate, true) })
		b.Run("join/"+store, func(b *testing.B) { benchJoin(b, store, rate) })
	}
	b.Run("admitted20k/redis", func(b *testing.B) { benchAdmittedMany(b, rate) })
}

// benchAdmittedMany: 20,000 visitors inside take turns, so a request
// seldom finds its session in the instance's cache and asks Redis.
func benchAdmittedMany(b *testing.B, rate int) {
	up := benchUpstream(b)
	bare := bareProxy(b, up.URL)
	gw, rc := benchGateway(b, "redis", up.URL, benchRoom(100000))
	c := benchClient()
	cookies := ticketCookies(b, c, gw, "/events/1", 20000, false)
	run := func(b *testing.B, base string) {
		load(b, c, rate, func(i int) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/events/1", nil)
			r.Header.Set("Cookie", cookies[i%len(cookies)])
			return r
		}, wantStatus(200, ""))
	}
	b.Run("bare", func(b *testing.B) { run(b, bare) })
	b.Run("gateway", func(b *testing.B) { rc.measure(b, func() { run(b, gw) }) })
}

// benchAdmitted: visitors inside ask the site for a page.
func benchAdmitted(b *testing.B, store string, rate int) {
	up := benchUpstream(b)
	bare := bareProxy(b, up.URL)
	gw, rc := benchGateway(b, store, up.URL, benchRoom(100000))
	c := benchClient()
	cookies := ticketCookies(b, c, gw, "/events/1", 64, false)
	run := func(b *testing.B, base string) {
		load(b, c, rate, func(i int) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/events/1", nil)
			r.Header.Set("Cookie", cookies[i%len(cookies)])
			return r
		}, wantStatus(200, ""))
	}
	b.Run("bare", func(b *testing.B) { run(b, bare) })
	b.Run("gateway", func(b *testing.B) { rc.measure(b, func() { run(b, gw) }) })
}

// browserAccept is what a browser sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// benchPoll: visitors in line ask their status, as the page's script does
// (JSON), or reload the guarded page, as a browser without JavaScript does
// (html), against the bare proxy serving a page of the site.
func benchPoll(b *testing.B, store string, rate int, html bool) {
	up := benchUpstream(b)
	bare := bareProxy(b, up.URL)
	gw, rc := benchGateway(b, store, up.URL, benchRoom(0))
	c := benchClient()
	// Visitors far back in line, as most of a spike's are: the first
	// places are always the store's own answer (waitroom.exactFront).
	cookies := placeCookies(b, c, gw, ticketCookies(b, c, gw, "/events/1", 200, true))[200-64:]
	accept, path := "application/json", "/.waitroom/status?room=concert&return_to=%2Fevents%2F1"
	if html {
		accept, path = browserAccept, "/events/1"
	}
	b.Run("bare", func(b *testing.B) {
		load(b, c, rate, func(i int) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, bare+"/events/1", nil)
			r.Header.Set("Accept", accept)
			return r
		}, wantStatus(200, ""))
	})
	b.Run("gateway", func(b *testing.B) {
		rc.measure(b, func() {
			load(b, c, rate, func(i int) *http.Request {
				r, _ := http.NewRequest(http.MethodGet, gw+path, nil)
				r.Header.Set("Accept", accept)
				r.Header.Set("Accept-Language", "ko-KR,ko;q=0.9,en-US;q=0.8")
				r.Header.Set("Cookie", cookies[i%len(cookies)])
				return r
			}, wantStatus(200, "waiting"))
		})
	})
}

// benchJoin: new visitors arrive and are handed a ticket and the waiting
// page, the first thing a spike asks for.
func benchJoin(b *testing.B, store string, rate int) {
	up := benchUpstream(b)
	bare := bareProxy(b, up.URL)
	gw, rc := benchGateway(b, store, up.URL, benchRoom(0))
	c := benchClient()
	page := func(b *testing.B, base, state string) {
		load(b, c, rate, func(int) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/events/1", nil)
			r.Header.Set("Accept", browserAccept)
			r.Header.Set("Accept-Language", "ko-KR,ko;q=0.9,en-US;q=0.8")
			return r
		}, wantStatus(200, state))
	}
	b.Run("bare", func(b *testing.B) { page(b, bare, "") })
	b.Run("gateway", func(b *testing.B) { rc.measure(b, func() { page(b, gw, "waiting") }) })
}

// processCPU is the user and system time this process has used: clients,
// proxies and upstream together, the same for both sides of a pair.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
