package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// With proxy_protocol the PROXY header names the client and no forwarding
// header is believed: not after a v1 UNKNOWN or a v2 LOCAL header (the
// balancer's own address), nor when the header's source is itself a
// trusted proxy. A forged X-Forwarded-For in the bypass network would
// otherwise walk through a full room, and the site would hear it too.
func TestProxyProtocol_ForwardingHeadersNeverCount(t *testing.T) {
	var mu sync.Mutex
	var heard []string // X-Forwarded-For as the site heard it
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.Header.Get("X-Forwarded-For"))
		mu.Unlock()
		fmt.Fprintf(w, "site:%s", r.URL.Path)
	}))
	t.Cleanup(site.Close)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 0"), "bypass:\n  paths: [/static/]", "bypass:\n  paths: [/static/]\n  cidrs: [203.0.113.0/24]", 1) +
		"server: { proxy_protocol: true, trusted_proxies: [127.0.0.1/32] }\n" +
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q } }\n", path)
	cfg = strings.Replace(cfg, "log: { level: error }\n", "", 1)
	app, _ := startGateway(t, cfg)
	cases := []struct {
		name   string
		header string
		client string
	}{
		{"v1 UNKNOWN", "PROXY UNKNOWN\r\n", "127.0.0.1"},
		{"v2 LOCAL", "\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00", "127.0.0.1"},
		{"a trusted source", "PROXY TCP4 127.0.0.1 10.0.0.1 51000 443\r\n", "127.0.0.1"},
		{"a client", "PROXY TCP4 198.51.100.9 10.0.0.1 51000 443\r\n", "198.51.100.9"},
	}
	forged := "X-Forwarded-For: 203.0.113.7\r\nForwarded: for=203.0.113.7\r\nX-Real-IP: 203.0.113.7\r\n"
	for _, c := range cases {
		if body := sendProxied(t, app.Addr().String(), c.header, "/events/x", forged); body == "site:/events/x" {
			t.Errorf("%s: a forged X-Forwarded-For in the bypass network went through a full room", c.name)
		}
		if body := sendProxied(t, app.Addr().String(), c.header, "/static/a", forged); body != "site:/static/a" {
			t.Errorf("%s: /static/a: %q", c.name, body)
		}
	}
	lines := readAccess(t, path)
	if len(lines) != 2*len(cases) {
		t.Fatalf("access log: %d lines, want %d: %v", len(lines), 2*len(cases), lines)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range cases {
		if lines[2*i]["client"] != c.client || lines[2*i+1]["client"] != c.client {
			t.Errorf("%s: access log clients %v and %v, want %s", c.name, lines[2*i]["client"], lines[2*i+1]["client"], c.client)
		}
		if heard[i] != c.client {
			t.Errorf("%s: the site heard X-Forwarded-For %q, want %q", c.name, heard[i], c.client)
		}
	}
}

// sendProxied sends one request after a PROXY header, with extra header
// lines, and returns the answer's body ("" when there is none).
func sendProxied(t *testing.T, addr, proxyHeader, path, extra string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "%sGET %s HTTP/1.1\r\nHost: shop\r\n%sConnection: close\r\n\r\n", proxyHeader, path, extra)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
