package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// brandedPage stands in for web's error page; it names the host it was asked
// for, which must be the visitor's, not the upstream's.
func brandedPage(w http.ResponseWriter, r *http.Request, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<h1>branded %d for %s%s</h1>", status, r.Host, r.URL.Path)
}

// deadAddr is an address nobody listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// doneLog collects OnDone calls.
type doneLog struct {
	mu       sync.Mutex
	statuses []int
}

func (d *doneLog) onDone(_ *http.Request, status int, _ time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.statuses = append(d.statuses, status)
}

func (d *doneLog) get() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.statuses...)
}

func TestUpstream_UnreachableIs502Page(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	done := &doneLog{}
	opt := Options{Log: zap.New(core), ErrorPage: brandedPage, OnDone: done.onDone}
	srv := httptest.NewServer(newUpstream(t, "shop", "http://"+deadAddr(t), opt))
	t.Cleanup(srv.Close)

	res, body := get(t, srv.URL+"/events/1", map[string]string{
		"Host": "tickets.example.com", "Cookie": "waitroom_concert=SECRET1", TokenHeader: "SECRET2",
	})
	if res.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", res.StatusCode)
	}
	if want := "<h1>branded 502 for tickets.example.com/events/1</h1>"; string(body) != want {
		t.Errorf("body %q, want %q", body, want)
	}
	warn := logs.FilterMessage("upstream failed").All()
	if len(warn) != 1 || warn[0].Level != zapcore.WarnLevel {
		t.Fatalf("want one warn entry, got %v", logs.All())
	}
	fields := warn[0].ContextMap()
	if fields["upstream"] != "shop" || fields["status"] != int64(502) || fields["error"] == "" {
		t.Errorf("fields %v", fields)
	}
	for _, e := range logs.All() {
		if s := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(s, "SECRET") {
			t.Errorf("secret logged: %s", s)
		}
	}
	if got := done.get(); len(got) != 1 || got[0] != 502 {
		t.Errorf("OnDone statuses %v, want [502]", got)
	}
}

func TestUpstream_FallbackErrorBodyNamesNoInternals(t *testing.T) {
	t.Parallel()
	addr := deadAddr(t)
	srv := httptest.NewServer(newUpstream(t, "shop", "http://"+addr, Options{}))
	t.Cleanup(srv.Close)
	res, body := get(t, srv.URL+"/", nil)
	if res.StatusCode != http.StatusBadGateway || string(body) != "502 Bad Gateway\n" {
		t.Errorf("got %d %q", res.StatusCode, body)
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
	}
}

func TestUpstream_SlowIs504(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the proxy gave up and closed the connection
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	cfg := DefaultUpstream()
	cfg.URL = slow.URL
	cfg.Timeout = "100ms"
	srv := httptest.NewServer(newUpstreamCfg(t, "shop", cfg, Options{ErrorPage: brandedPage}))
	t.Cleanup(srv.Close)

	start := time.Now()
	res, body := get(t, srv.URL+"/slow", nil)
	if res.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "branded 504") {
		t.Errorf("got %d %q, want the 504 page", res.StatusCode, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v; the timeout was 100ms", d)
	}
}

func TestUpstream_ClientGoneIs499AtDebug(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	done := &doneLog{}
	page := func(http.ResponseWriter, *http.Request, int) { t.Error("error page written for a client that is gone") }
	u := newUpstream(t, "shop", newEcho(t).URL, Options{Log: zap.New(core), ErrorPage: page, OnDone: done.onDone})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/events/1", nil).WithContext(ctx))

	if rec.Code != StatusClientClosedRequest || rec.Body.Len() != 0 {
		t.Errorf("got %d %q, want 499 and no body", rec.Code, rec.Body)
	}
	if n := logs.FilterLevelExact(zapcore.DebugLevel).Len(); n != 1 || logs.Len() != 1 {
		t.Errorf("want one debug entry and nothing else, got %v", logs.All())
	}
	if got := done.get(); len(got) != 1 || got[0] != 499 {
		t.Errorf("OnDone statuses %v, want [499]", got)
	}
}

func TestStatusOf(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	bg := context.Background()
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"client canceled", canceled, context.Canceled, 499},
		{"client canceled, dial error", canceled, errors.New("dial tcp: operation was canceled"), 499},
		{"deadline", bg, context.DeadlineExceeded, 504},
		{"wrapped deadline", bg, fmt.Errorf("round trip: %w", context.DeadlineExceeded), 504},
		{"net timeout", bg, timeout, 504},
		{"request deadline passed", expired, errors.New("eof"), 504},
		{"refused", bg, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, 502},
		{"canceled but client still there", bg, context.Canceled, 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := statusOf(tt.ctx, tt.err); got != tt.want {
				t.Errorf("StatusOf = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestUpstream_OnDoneSeesEveryStatus(t *testing.T) {
	t.Parallel()
	done := &doneLog{}
	srv := httptest.NewServer(newUpstream(t, "shop", newEcho(t).URL, Options{OnDone: done.onDone}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	rawRequest(t, addr, "GET", "/ok")
	rawRequest(t, addr, "GET", "/bad%00")
	if got := done.get(); len(got) != 2 || got[0] != 200 || got[1] != 400 {
		t.Errorf("OnDone statuses %v, want [200 400]", got)
	}
}
