package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// timings collects what OnFirstByte reports.
type timings struct {
	mu  sync.Mutex
	got []Timing
}

func (ts *timings) add(_ *http.Request, t Timing) {
	ts.mu.Lock()
	ts.got = append(ts.got, t)
	ts.mu.Unlock()
}

// wait returns the reports once there are n, failing after a generous bound.
func (ts *timings) wait(t *testing.T, n int) []Timing {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ts.mu.Lock()
		got := append([]Timing(nil), ts.got...)
		ts.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("OnFirstByte: fewer than %d reports within 20s", n)
	return nil
}

// timedSite is an upstream with a fast page, a slow one (sleeps before its
// status line), one that reads the whole body before answering, and one
// that never answers until the request is gone.
func timedSite(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(400 * time.Millisecond)
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(site.Close)
	return site
}

// timedFront serves an Upstream to site behind the request deadlines d,
// reporting into a fresh timings.
func timedFront(t *testing.T, site string, cfg UpstreamConfig, d Deadlines) (*timings, string) {
	t.Helper()
	ts := &timings{}
	cfg.URL = site
	up := newUpstreamCfg(t, "site", cfg, Options{OnFirstByte: ts.add})
	front := httptest.NewServer(d.Handler(up))
	t.Cleanup(front.Close)
	return ts, front.URL
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// Answers the gateway writes itself say nothing of the site: a refused
// h2c upgrade or path (400) is not reported, or a client spraying them
// would have the site look instantly fast. The site's own 404 is its
// answer, timed.
func TestTiming_GatewaysOwnAnswersAreNotTheSites(t *testing.T) {
	t.Parallel()
	ts, base := timedFront(t, timedSite(t).URL, DefaultUpstream(), Deadlines{})
	addr := strings.TrimPrefix(base, "http://")
	for range 3 {
		res, _ := rawRequest(t, addr, "GET", "/page", "Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA")
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("h2c upgrade: %d, want the gateway's 400", res.StatusCode)
		}
		if res, _ := rawRequest(t, addr, "GET", "/a%00b"); res.StatusCode != http.StatusBadRequest {
			t.Fatalf("bad path: %d, want the gateway's 400", res.StatusCode)
		}
	}
	if code := getStatus(t, base+"/missing"); code != http.StatusNotFound {
		t.Fatalf("the site's 404: %d", code)
	}
	got := ts.wait(t, 1)
	time.Sleep(100 * time.Millisecond) // a late report would show now
	ts.mu.Lock()
	got = append(got[:0], ts.got...)
	ts.mu.Unlock()
	if len(got) != 1 || got[0].Status != http.StatusNotFound || !got[0].Timed {
		t.Fatalf("reports %+v, want only the site's 404, timed", got)
	}
}

// The site's time is from the request written whole to its first byte:
// a slow page is timed slow, and a client's slow upload is not the site's
// time.
func TestTiming_FromTheRequestWrittenToTheFirstByte(t *testing.T) {
	t.Parallel()
	ts, base := timedFront(t, timedSite(t).URL, DefaultUpstream(), Deadlines{})
	if code := getStatus(t, base+"/slow"); code != http.StatusOK {
		t.Fatalf("slow page: %d", code)
	}
	got := ts.wait(t, 1)
	if !got[0].Timed || got[0].FirstByte < 400*time.Millisecond || got[0].Status != http.StatusOK {
		t.Fatalf("slow page: %+v, want 200 timed at 400ms at least", got[0])
	}

	// A POST whose body comes in six pieces 200ms apart: 1.2s of upload,
	// then a site that answers at once.
	pr, pw := io.Pipe()
	go func() {
		for range 6 {
			time.Sleep(200 * time.Millisecond)
			if _, err := pw.Write([]byte(strings.Repeat("x", 100))); err != nil {
				return
			}
		}
		pw.Close()
	}()
	start := time.Now()
	res, err := http.Post(base+"/fast", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	upload := time.Since(start)
	got = ts.wait(t, 2)
	if upload < 1200*time.Millisecond || res.StatusCode != http.StatusOK {
		t.Fatalf("slow POST: %d after %s, want 200 after 1.2s at least", res.StatusCode, upload)
	}
	if !got[1].Timed || got[1].FirstByte >= upload/2 {
		t.Fatalf("slow POST (upload %s): %+v, want timed well under the upload", upload, got[1])
	}
}

// A client whose body breaks (a malformed chunk) fails the request,
// which the gateway answers as an upstream error; it is not the site's,
// and not reported: a client could otherwise spray them to make the site
// look failing. One whose body stalls past the read deadline is gone
// (499) before the site could answer, and not reported either.
func TestTiming_BrokenBodyIsNotTheSitesError(t *testing.T) {
	t.Parallel()
	ts, base := timedFront(t, timedSite(t).URL, DefaultUpstream(), Deadlines{Read: 300 * time.Millisecond})
	send := func(raw string) int {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0 // closed without an answer: nothing the site said either
		}
		res.Body.Close()
		return res.StatusCode
	}
	for range 3 {
		if code := send("POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"); code < 500 {
			t.Fatalf("broken body: %d, want the gateway's 502", code)
		}
		send("POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
	}
	if code := getStatus(t, base+"/fast"); code != http.StatusOK {
		t.Fatalf("after: %d", code)
	}
	got := ts.wait(t, 1)
	time.Sleep(100 * time.Millisecond)
	ts.mu.Lock()
	got = append(got[:0], ts.got...)
	ts.mu.Unlock()
	if len(got) != 1 || got[0].Status != http.StatusOK {
		t.Fatalf("reports %+v, want only the GET after the broken bodies", got)
	}
}

// The gateway's own 502 and 504 are the site's failures: a site that
// cannot be reached (no time to tell) and one that does not answer in
// time (the time waited). A client that gives up waiting is reported
// with the time it waited (499).
func TestTiming_SiteFailuresAndClientsGone(t *testing.T) {
	t.Parallel()
	site := timedSite(t)
	cfg := DefaultUpstream()
	cfg.Timeout = "300ms"
	ts, base := timedFront(t, site.URL, cfg, Deadlines{})
	if code := getStatus(t, base+"/hang"); code != http.StatusGatewayTimeout {
		t.Fatalf("hang: %d, want 504", code)
	}
	got := ts.wait(t, 1)
	if got[0].Status != http.StatusGatewayTimeout || !got[0].Timed || got[0].FirstByte < 300*time.Millisecond {
		t.Fatalf("504: %+v, want timed at 300ms at least", got[0])
	}

	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	ts2, base2 := timedFront(t, site.URL, DefaultUpstream(), Deadlines{})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base2+"/hang", nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("client gave up: %v", err)
	}
	got = ts2.wait(t, 1)
	if got[0].Status != StatusClientClosedRequest || !got[0].Timed || got[0].FirstByte < 300*time.Millisecond {
		t.Fatalf("499: %+v, want timed at about 400ms", got[0])
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its port refuses connections now
	ts3, base3 := timedFront(t, gone.URL, DefaultUpstream(), Deadlines{})
	if code := getStatus(t, base3+"/"); code != http.StatusBadGateway {
		t.Fatalf("unreachable: %d, want 502", code)
	}
	got = ts3.wait(t, 1)
	if got[0].Status != http.StatusBadGateway || got[0].Timed {
		t.Fatalf("502: %+v, want reported, not timed", got[0])
	}
}

// Options.Measures keeps requests nobody judges from being traced: no
// report for them, while the ones it measures are timed as before, and
// it is asked with the cleaned path.
func TestTiming_MeasuresSaysWhichAreTraced(t *testing.T) {
	t.Parallel()
	ts := &timings{}
	var asked sync.Map
	cfg := DefaultUpstream()
	cfg.URL = timedSite(t).URL
	up := newUpstreamCfg(t, "site", cfg, Options{OnFirstByte: ts.add, Measures: func(r *http.Request) bool {
		asked.Store(r.URL.Path, true)
		return r.URL.Path == "/slow"
	}})
	front := httptest.NewServer(up)
	t.Cleanup(front.Close)
	for range 3 {
		if code := getStatus(t, front.URL+"/static/../page"); code != http.StatusOK {
			t.Fatalf("page: %d", code)
		}
	}
	if code := getStatus(t, front.URL+"/slow"); code != http.StatusOK {
		t.Fatalf("slow: %d", code)
	}
	got := ts.wait(t, 1)
	time.Sleep(100 * time.Millisecond) // a late report would show now
	ts.mu.Lock()
	got = append(got[:0], ts.got...)
	ts.mu.Unlock()
	if len(got) != 1 || !got[0].Timed || got[0].FirstByte < 300*time.Millisecond {
		t.Fatalf("reports %+v, want only /slow's, timed at its 400ms", got)
	}
	if _, ok := asked.Load("/page"); !ok {
		t.Error("Measures was not asked with the cleaned path /page")
	}
}
