package proxy

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// wsAccept is the Sec-WebSocket-Accept answer to key (RFC 6455, 4.2.2).
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// newWSEcho starts an upstream that completes a WebSocket handshake and then
// echoes raw bytes until the connection closes. Framing is irrelevant to a
// proxy that only copies bytes, so none is done. The request headers it got
// are sent on seen.
func newWSEcho(t *testing.T, seen chan<- http.Header) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		if !isUpgrade(r.Header) || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "want a websocket upgrade", http.StatusUpgradeRequired)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: %s\r\n\r\n", wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		if err := brw.Flush(); err != nil {
			return
		}
		io.Copy(conn, brw.Reader)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUpstream_WebSocketRoundTrip(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 1)
	var opened, closed atomic.Int32
	doneCh := make(chan struct{})
	statusCh := make(chan int, 1)
	opt := Options{
		OwnCookie: func(n string) bool { return n == "waitroom_concert" },
		OnUpgrade: func(r *http.Request) func() {
			if r.Header.Get(RoomHeader) != "concert" {
				t.Errorf("OnUpgrade without the room header: %v", r.Header)
			}
			opened.Add(1)
			return func() { closed.Add(1); close(doneCh) }
		},
		OnDone: func(_ *http.Request, status int, _ time.Duration) { statusCh <- status },
	}
	rt, err := NewRouter([]RouteConfig{{Path: "/events/", Upstream: "shop", Room: "concert"}})
	if err != nil {
		t.Fatal(err)
	}
	front := newFront(t, rt, map[string]*Upstream{"shop": newUpstream(t, "shop", newWSEcho(t, seen).URL, opt)})

	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	const key = "dGhlIHNhbXBsZSBub25jZQ=="
	fmt.Fprintf(conn, "GET /events/live HTTP/1.1\r\nHost: tickets.example.com\r\nUpgrade: websocket\r\n"+
		"Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"+
		"Cookie: waitroom_concert=SECRET; a=1\r\n\r\n", key)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) {
		t.Fatalf("handshake: %d %v", res.StatusCode, res.Header)
	}
	if h := <-seen; h.Get("Cookie") != "a=1" || h.Get("Sec-WebSocket-Key") != key {
		t.Errorf("upstream got headers %v", h)
	}

	for _, msg := range []string{"ping", "hello, world"} {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != msg {
			t.Fatalf("echo %q, %v; want %q", buf, err, msg)
		}
	}
	if opened.Load() != 1 || closed.Load() != 0 {
		t.Fatalf("while open: opened %d, closed %d; want 1, 0", opened.Load(), closed.Load())
	}

	conn.Close()
	select {
	case <-doneCh:
	case <-time.After(5 * time.Second):
		t.Fatal("OnUpgrade's done func not called after the connection closed")
	}
	if got := <-statusCh; got != http.StatusSwitchingProtocols {
		t.Errorf("OnDone status %d, want 101", got)
	}
}

func TestUpstream_H2CUpgradeIs400(t *testing.T) {
	t.Parallel()
	var hits, upgrades atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(up.Close)
	opt := Options{OnUpgrade: func(*http.Request) func() { upgrades.Add(1); return nil }}
	srv := httptest.NewServer(newUpstream(t, "shop", up.URL, opt))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tests := [][]string{
		{"Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"},
		{"Upgrade: H2C"},
		{"Upgrade: websocket, h2c", "Connection: upgrade"},
		{"Upgrade: h2c/1.0", "Connection: upgrade"},
	}
	for _, hs := range tests {
		t.Run(strings.Join(hs, "|"), func(t *testing.T) {
			t.Parallel()
			if res, body := rawRequest(t, addr, "GET", "/", hs...); res.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d %q, want 400", res.StatusCode, body)
			}
		})
	}
	t.Cleanup(func() {
		if hits.Load() != 0 || upgrades.Load() != 0 {
			t.Errorf("upstream hit %d times, OnUpgrade %d times; want 0", hits.Load(), upgrades.Load())
		}
	})
}

func TestHeaderTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		h          http.Header
		upgrade    bool
		badUpgrade bool
	}{
		{"plain", http.Header{}, false, false},
		{"websocket", http.Header{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"websocket"}}, true, false},
		{"upgrade without connection", http.Header{"Upgrade": {"websocket"}}, false, false},
		{"connection without upgrade", http.Header{"Connection": {"upgrade"}}, false, false},
		{"h2c second line", http.Header{"Upgrade": {"websocket", "h2c"}}, false, true},
		{"non-printable", http.Header{"Connection": {"upgrade"}, "Upgrade": {"web\x80socket"}}, true, true},
		{"h2c lookalike", http.Header{"Connection": {"upgrade"}, "Upgrade": {"h2cx"}}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := isUpgrade(tt.h); got != tt.upgrade {
				t.Errorf("isUpgrade = %v, want %v", got, tt.upgrade)
			}
			if got := badUpgrade(tt.h); got != tt.badUpgrade {
				t.Errorf("badUpgrade = %v, want %v", got, tt.badUpgrade)
			}
		})
	}
}
