package proxy

import (
	"bufio"
	"context"
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
	statusCh := make(chan int, 1)
	opt := Options{
		OwnCookie: func(n string) bool { return n == "waitroom_concert" },
		OnDone:    func(_ *http.Request, status int, _ time.Duration) { statusCh <- status },
	}
	rt, err := NewRouter([]RouteConfig{{Path: "/events/", Upstream: "shop", Room: "concert"}})
	if err != nil {
		t.Fatal(err)
	}
	front := newFront(t, rt, map[string]*Upstream{"shop": newUpstream(t, "shop", newWSEcho(t, seen).URL, opt)})

	conn, br := dialWebSocket(t, front.Listener.Addr().String(), "Cookie: waitroom_concert=SECRET; a=1")
	if h := <-seen; h.Get("Cookie") != "a=1" || h.Get("Sec-WebSocket-Key") != wsKey {
		t.Errorf("upstream got headers %v", h)
	}
	echo(t, conn, br, "ping", "hello, world")
	conn.Close()
	select {
	case got := <-statusCh:
		if got != http.StatusSwitchingProtocols {
			t.Errorf("OnDone status %d, want 101", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnDone not called after the connection closed")
	}
}

// The gate ends a socket whose session is over by ending its request's
// context: both sides must then be closed, the upstream's first.
func TestUpstream_WebSocketEndsWithItsContext(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 1)
	upstreamDone := make(chan struct{})
	echoSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(upstreamDone)
		seen <- r.Header.Clone()
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: %s\r\n\r\n", wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		brw.Flush()
		io.Copy(conn, brw.Reader) // returns when the proxy closes its side
	}))
	t.Cleanup(echoSrv.Close)
	up := newUpstream(t, "shop", echoSrv.URL, Options{})
	end := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-end:
				cancel()
			case <-ctx.Done():
			}
		}()
		up.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	conn, br := dialWebSocket(t, srv.Listener.Addr().String())
	<-seen
	echo(t, conn, br, "still here")
	close(end)
	select {
	case <-upstreamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream did not see the socket close")
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the client's side is still open: read %d bytes", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the client's side was not closed")
	}
}

const wsKey = "dGhlIHNhbXBsZSBub25jZQ=="

// dialWebSocket opens a raw connection to addr and completes a WebSocket
// handshake for /events/live with the extra header lines given.
func dialWebSocket(t *testing.T, addr string, extra ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	head := "GET /events/live HTTP/1.1\r\nHost: tickets.example.com\r\nUpgrade: websocket\r\n" +
		"Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: " + wsKey + "\r\nSec-WebSocket-Version: 13\r\n"
	for _, h := range extra {
		head += h + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Sec-WebSocket-Accept") != wsAccept(wsKey) {
		t.Fatalf("handshake: %d %v", res.StatusCode, res.Header)
	}
	return conn, br
}

// echo sends each message and expects it back.
func echo(t *testing.T, conn net.Conn, br *bufio.Reader, msgs ...string) {
	t.Helper()
	for _, msg := range msgs {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != msg {
			t.Fatalf("echo %q, %v; want %q", buf, err, msg)
		}
	}
}

func TestUpstream_H2CUpgradeIs400(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(up.Close)
	srv := httptest.NewServer(newUpstream(t, "shop", up.URL, Options{}))
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
		if hits.Load() != 0 {
			t.Errorf("upstream hit %d times; want 0", hits.Load())
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
