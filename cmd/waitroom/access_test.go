package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// readAccess reads the access log's JSON lines.
func readAccess(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// One JSON line per request with the documented fields, the decision the
// gate took, and never a cookie or token value.
func TestAccessLog_OneLinePerRequest(t *testing.T) {
	_, site := newUpstream(t)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 1\n    tick: 50ms"), "log: { level: error }",
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q } }", path), 1)
	_, base := startGateway(t, cfg)
	a, b := newVisitor(t, base), newVisitor(t, base)
	a.get("/events/1?secret=query")
	r := b.getJSON("/events/2")
	token := r.header.Get("Waitroom-Token")
	b.getJSON("/.waitroom/status?room=concert")
	newVisitor(t, base).get("/static/logo.png")
	newVisitor(t, base).get("/about")
	lines := readAccess(t, path)
	if len(lines) != 5 {
		t.Fatalf("%d lines for 5 requests", len(lines))
	}
	want := []struct{ path, room, decision string }{
		{"/events/1", "concert", "admitted"}, {"/events/2", "concert", "joined"},
		{"/.waitroom/status", "concert", "poll"}, {"/static/logo.png", "", "proxied"}, {"/about", "", "proxied"},
	}
	for i, w := range want {
		l := lines[i]
		for _, k := range []string{"time", "client", "method", "host", "path", "decision", "status", "bytes", "duration_ms"} {
			if _, ok := l[k]; !ok {
				t.Fatalf("line %d lacks %q: %v", i, k, l)
			}
		}
		if l["path"] != w.path || (l["room"] != nil && l["room"] != w.room) || (w.room != "" && l["room"] != w.room) || l["decision"] != w.decision || l["client"] != "127.0.0.1" {
			t.Errorf("line %d: %v, want %+v", i, l, w)
		}
	}
	if lines[0]["visitor"] == nil || lines[0]["upstream"] != "site" {
		t.Errorf("an admitted request's line: %v", lines[0])
	}
	raw, _ := os.ReadFile(path)
	for _, c := range a.c.Jar.Cookies(mustURL(t, base)) {
		if strings.Contains(string(raw), c.Value) {
			t.Fatal("a cookie value is in the access log")
		}
	}
	if token == "" || strings.Contains(string(raw), token) || strings.Contains(string(raw), "secret=query") {
		t.Fatalf("a token or a query string is in the access log:\n%s", raw)
	}
}

// PROXY protocol v1 and v2 from a trusted balancer set the client
// address, as the access log and bypass.cidrs see it; from anyone else the
// header is refused.
func TestProxyProtocol_ClientAddressEverywhere(t *testing.T) {
	_, site := newUpstream(t)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 0"), "bypass:\n  paths: [/static/]", "bypass:\n  paths: [/static/]\n  cidrs: [203.0.113.0/24]", 1) +
		"server: { proxy_protocol: true, trusted_proxies: [127.0.0.1/32] }\n" +
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q } }\n", path)
	cfg = strings.Replace(cfg, "log: { level: error }\n", "", 1)
	app, _ := startGateway(t, cfg)
	addr := app.Addr().String()
	send := func(header []byte) (int, string) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write(append(header, "GET /events/x HTTP/1.1\r\nHost: shop\r\nConnection: close\r\n\r\n"...))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// The bypass network goes straight through a full room.
	if code, body := send([]byte("PROXY TCP4 203.0.113.7 10.0.0.1 51000 443\r\n")); body != "site:/events/x" {
		t.Fatalf("v1 from the bypass network: %d %q", code, body)
	}
	src, dst := netip.MustParseAddrPort("198.51.100.9:52000"), netip.MustParseAddrPort("10.0.0.1:443")
	if code, body := send(proxyV2(src, dst)); code != 200 || body == "site:/events/x" {
		t.Fatalf("v2 from another network: %d %q (must wait)", code, body)
	}
	lines := readAccess(t, path)
	if len(lines) != 2 || lines[0]["client"] != "203.0.113.7" || lines[0]["decision"] != "bypass" || lines[1]["client"] != "198.51.100.9" {
		t.Fatalf("access log: %v", lines)
	}
}

// A PROXY header from a peer that is not a trusted balancer is refused:
// nobody names their own address.
func TestProxyProtocol_RefusedFromUntrusted(t *testing.T) {
	_, site := newUpstream(t)
	app, _ := startGateway(t, gwConfig(site.URL, "    max_active: 5")+"server: { proxy_protocol: true, trusted_proxies: [10.0.0.0/8] }\n")
	conn, err := net.Dial("tcp", app.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write([]byte("PROXY TCP4 203.0.113.7 10.0.0.1 51000 443\r\nGET /static/a HTTP/1.1\r\nHost: shop\r\n\r\n"))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil && res.StatusCode < 400 {
		t.Fatalf("a PROXY header from an untrusted peer was served: %d", res.StatusCode)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// proxyV2 is a PROXY v2 header for TCP over IPv4.
func proxyV2(src, dst netip.AddrPort) []byte {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11")
	addrs := append(src.Addr().AsSlice(), dst.Addr().AsSlice()...)
	addrs = binary.BigEndian.AppendUint16(addrs, src.Port())
	addrs = binary.BigEndian.AppendUint16(addrs, dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(len(addrs)))
	return append(b, addrs...)
}

// The combined format: Apache's line, then the room, the decision and the
// visitor's hash.
func TestAccessLog_Combined(t *testing.T) {
	_, site := newUpstream(t)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 1"), "log: { level: error }",
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q, format: combined } }", path), 1)
	_, base := startGateway(t, cfg)
	newVisitor(t, base).get("/events/1?x=1")
	b, _ := os.ReadFile(path)
	line := strings.TrimSpace(string(b))
	re := regexp.MustCompile(`^127\.0\.0\.1 - - \[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET /events/1 HTTP/1\.1" 200 \d+ "" "Go-http-client/1\.1" concert admitted [0-9a-f]{16}$`)
	if !re.MatchString(line) {
		t.Fatalf("combined line: %q", line)
	}
}

// The access log names what happened in the words the metrics use: a
// bypass rule's request is "bypass" (whichever door it came by), a route
// without a room "proxied".
func TestAccessLog_BypassAndProxied(t *testing.T) {
	_, site := newUpstream(t)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 1"), "log: { level: error }",
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q } }", path), 1)
	cfg = strings.Replace(cfg, "paths: [/static/]", "paths: [/static/, /events/public/]", 1)
	_, base := startGateway(t, trustLoopback(cfg))
	newVisitor(t, base).get("/events/public/a")
	newVisitor(t, base).get("/about")
	newVisitor(t, base).do(http.MethodGet, "/.waitroom/auth", "X-Original-URI", "/events/public/a")
	lines := readAccess(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines for 3 requests", len(lines))
	}
	for i, want := range []string{"bypass", "proxied", "bypass"} {
		if lines[i]["decision"] != want {
			t.Errorf("line %d: %v, want decision %q", i, lines[i], want)
		}
	}
}

// The JSON line names the client's user agent and referer (the referer
// without its query, both cut to maxLogField), and a SIGHUP after
// logrotate moved the file away starts a new file at the path.
func TestAccessLog_AgentRefererAndReopen(t *testing.T) {
	_, site := newUpstream(t)
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 5"), "log: { level: error }",
		fmt.Sprintf("log: { level: error, access: { enabled: true, path: %q } }", path), 1)
	app, base := startGateway(t, cfg)
	v := newVisitor(t, base)
	v.do(http.MethodGet, "/about", "User-Agent", "Mozilla/5.0 test", "Referer", "https://user:pw@shop.example/events/?token=secret")
	v.do(http.MethodGet, "/about", "User-Agent", strings.Repeat("x", 4000))
	v.do(http.MethodGet, "/about", "User-Agent", strings.Repeat("가", 400))
	lines := readAccess(t, path)
	if ua, _ := lines[2]["user_agent"].(string); len(ua) > maxLogField || !utf8.ValidString(ua) || strings.ContainsRune(ua, utf8.RuneError) {
		t.Fatalf("a long Korean user agent logged as %d bytes, valid %v", len(ua), utf8.ValidString(ua))
	}
	lines = lines[:2]
	if len(lines) != 2 || lines[0]["user_agent"] != "Mozilla/5.0 test" || lines[0]["referer"] != "https://shop.example/events/" {
		t.Fatalf("agent and referer: %v", lines)
	}
	if ua, _ := lines[1]["user_agent"].(string); len(ua) != maxLogField {
		t.Fatalf("a long user agent logged at %d bytes", len(ua))
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := app.access.reopen(); err != nil {
		t.Fatal(err)
	}
	v.get("/about")
	if lines := readAccess(t, path); len(lines) != 1 || lines[0]["path"] != "/about" {
		t.Fatalf("after reopening, the new file has %v", lines)
	}
	if old := readAccess(t, path+".1"); len(old) != 3 {
		t.Fatalf("the rotated file has %d lines, want 3", len(old))
	}
}
