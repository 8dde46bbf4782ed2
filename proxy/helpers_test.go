package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// seen is what the echo upstream reports about the request it received.
type seen struct {
	URI    string      // the request-target exactly as it arrived
	Host   string      // the Host header
	Header http.Header // every request header
}

// newEcho starts an upstream that answers every request with a JSON seen.
func newEcho(tb testing.TB) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{URI: r.RequestURI, Host: r.Host, Header: r.Header})
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// newUpstream builds an Upstream to url with the default config.
func newUpstream(tb testing.TB, name, url string, opt Options) *Upstream {
	tb.Helper()
	cfg := DefaultUpstream()
	cfg.URL = url
	return newUpstreamCfg(tb, name, cfg, opt)
}

func newUpstreamCfg(tb testing.TB, name string, cfg UpstreamConfig, opt Options) *Upstream {
	tb.Helper()
	settings, err := cfg.Build()
	if err != nil {
		tb.Fatalf("UpstreamConfig.Build: %v", err)
	}
	u, err := NewUpstream(name, settings, opt)
	if err != nil {
		tb.Fatalf("NewUpstream: %v", err)
	}
	tb.Cleanup(func() { u.Close() })
	return u
}

// newFront starts what the application puts in front of this package: clean
// the path, route, play the gate (strip and set the Waitroom headers on
// routes with a room), proxy. The matched prefix comes back as X-Route.
func newFront(tb testing.TB, rt *Router, ups map[string]*Upstream) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clean, err := CleanPath(r.URL.Path)
		if err != nil {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		route, ok := rt.Match(r.Host, clean)
		if !ok {
			http.NotFound(w, r)
			return
		}
		r.Header.Del(VisitorHeader)
		r.Header.Del(RoomHeader)
		if route.Room != "" {
			r.Header.Set(VisitorHeader, "v-123")
			r.Header.Set(RoomHeader, route.Room)
		}
		w.Header().Set("X-Route", route.Path)
		ups[route.Upstream].ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// rawRequest sends a request written by hand, so the request-target reaches
// the server byte for byte (net/http's client would normalize some tricks),
// and returns the response with its body read.
func rawRequest(tb testing.TB, addr, method, target string, headers ...string) (*http.Response, []byte) {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, addr)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		tb.Fatalf("write: %v", err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	return res, body
}

// decodeSeen reads the echo upstream's report, failing if the request never
// got there.
func decodeSeen(tb testing.TB, res *http.Response, body []byte) seen {
	tb.Helper()
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("status %d, body %q", res.StatusCode, body)
	}
	var s seen
	if err := json.Unmarshal(body, &s); err != nil {
		tb.Fatalf("decoding %q: %v", body, err)
	}
	return s
}

// get sends a request through the normal client.
func get(tb testing.TB, url string, headers map[string]string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("reading body: %v", err)
	}
	return res, body
}
