package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// wsSite is a site with a WebSocket echo on /events/ws (raw bytes after the
// handshake: a proxy copies bytes, framing is beside the point) and the
// ordinary pages of newUpstream elsewhere. It tells who opened each socket
// and when the upstream saw each one close.
type wsSite struct {
	*upstreamLog
	srv    *httptest.Server
	opened chan string // the Waitroom-Visitor of each socket
	closed chan string
}

func newWSSite(t *testing.T) *wsSite {
	up, pages := newUpstream(t)
	s := &wsSite{upstreamLog: up, opened: make(chan string, 16), closed: make(chan string, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/ws") {
			pages.Config.Handler.ServeHTTP(w, r)
			return
		}
		who := r.Header.Get(waitroom.VisitorHeader)
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			base64.StdEncoding.EncodeToString(sum[:]))
		brw.Flush()
		s.opened <- who
		io.Copy(conn, brw.Reader)
		s.closed <- who
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// socket is a visitor's open WebSocket through the gateway.
type socket struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// openSocket opens /events/ws with v's cookies; it returns the status of
// the handshake and, on 101, the socket.
func openSocket(t *testing.T, base string, v *visitor) (int, *socket) {
	t.Helper()
	return openSocketAt(t, base, v, "/events/ws")
}

// openSocketAt is openSocket at path (ending in /ws).
func openSocketAt(t *testing.T, base string, v *visitor, path string) (int, *socket) {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var cookies []string
	for _, c := range v.c.Jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nCookie: %s\r\n\r\n", path, u.Host, strings.Join(cookies, "; "))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		res.Body.Close()
		return res.StatusCode, nil
	}
	conn.SetDeadline(time.Time{})
	return res.StatusCode, &socket{t: t, conn: conn, br: br}
}

// echo proves the socket still relays.
func (s *socket) echo(msg string) {
	s.t.Helper()
	s.conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer s.conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(s.conn, msg); err != nil {
		s.t.Fatalf("writing to the socket: %v", err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(s.br, buf); err != nil || string(buf) != msg {
		s.t.Fatalf("echo %q, %v; want %q", buf, err, msg)
	}
}

// closedWithin waits for the gateway to close the socket and returns how
// long that took; it fails the test if it stays open past limit.
func (s *socket) closedWithin(limit time.Duration) time.Duration {
	s.t.Helper()
	start := time.Now()
	s.conn.SetReadDeadline(start.Add(limit))
	_, err := s.br.ReadByte()
	took := time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		s.t.Fatalf("the socket is still open after %v", limit)
	}
	if err == nil {
		s.t.Fatal("the socket relayed a byte nobody sent")
	}
	return took
}

// socketRoom: ticks of 250ms, sockets capped at 2 per session.
const (
	socketTick = 250 * time.Millisecond
	socketRoom = "    max_active: 5\n    tick: 250ms\n    max_sockets: 2"
)

// Every way a session ends closes its sockets within two ticks, and the
// upstream sees each close; pause keeps them open, as the people inside
// stay.
func TestSocket_ClosedWhenTheSessionEnds(t *testing.T) {
	events := []struct {
		name string
		end  func(t *testing.T, app *App, base string, v *visitor, id string)
	}{
		{"released by the site", func(t *testing.T, _ *App, _ string, v *visitor, _ string) {
			v.get("/events/done")
		}},
		{"released by the admin API", func(t *testing.T, app *App, _ string, _ *visitor, id string) {
			if code, _, body := newAdmin(t, app).do("POST", "/admin/api/rooms/concert/release", fmt.Sprintf(`{"visitor":%q}`, id)); code != 200 {
				t.Fatalf("admin release: %d %s", code, body)
			}
		}},
		{"left", func(t *testing.T, _ *App, _ string, v *visitor, _ string) {
			if r := v.do(http.MethodPost, "/.waitroom/leave?room=concert", "Sec-Fetch-Site", "same-origin"); r.status != http.StatusSeeOther {
				t.Fatalf("leave: %d", r.status)
			}
		}},
		{"mode reject", func(t *testing.T, app *App, _ string, _ *visitor, _ string) {
			if code, _, body := newAdmin(t, app).do("PATCH", "/admin/api/rooms/concert", `{"mode":"reject"}`); code != 200 {
				t.Fatalf("reject: %d %s", code, body)
			}
		}},
	}
	for _, ev := range events {
		t.Run(ev.name, func(t *testing.T) {
			site := newWSSite(t)
			app, base := startGateway(t, gwConfig(site.srv.URL, socketRoom))
			v := newVisitor(t, base)
			if r := v.get("/events/"); r.body != "site:/events/" {
				t.Fatalf("not admitted: %d %q", r.status, r.body)
			}
			code, s := openSocket(t, base, v)
			if code != http.StatusSwitchingProtocols {
				t.Fatalf("handshake: %d", code)
			}
			id := <-site.opened
			s.echo("before")
			ev.end(t, app, base, v, id)
			took := s.closedWithin(2*socketTick + time.Second)
			t.Logf("closed %v after the session ended (tick %v)", took, socketTick)
			select {
			case who := <-site.closed:
				if who != id {
					t.Fatalf("the upstream saw %q close, want %q", who, id)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream did not see the socket close")
			}
		})
	}
}

func TestSocket_PauseKeepsItOpen(t *testing.T) {
	site := newWSSite(t)
	app, base := startGateway(t, gwConfig(site.srv.URL, socketRoom))
	v := newVisitor(t, base)
	v.get("/events/")
	_, s := openSocket(t, base, v)
	<-site.opened
	if code, _, body := newAdmin(t, app).do("PATCH", "/admin/api/rooms/concert", `{"mode":"paused"}`); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	time.Sleep(4 * socketTick)
	s.echo("still inside")
}

// DELETE of an API room with a session inside keeps that session's
// socket open (the room closes to everyone else); when the session ends,
// the socket closes and the routes go.
func TestSocket_DeletedAPIRoomKeepsItOpen(t *testing.T) {
	site := newWSSite(t)
	app, base := startGateway(t, gwConfig(site.srv.URL, socketRoom))
	admin := newAdmin(t, app)
	if code, _, body := admin.do("POST", "/admin/api/rooms", `{"name":"live","max_active":5,"tick":"250ms","routes":[{"path":"/live/","upstream":"site"}]}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	v := newVisitor(t, base)
	if r := v.get("/live/"); r.body != "site:/live/" {
		t.Fatalf("the first visitor: %d %.200s", r.status, r.body)
	}
	_, s := openSocketAt(t, base, v, "/live/ws")
	<-site.opened
	if code, _, body := admin.do("DELETE", "/admin/api/rooms/live", ""); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	time.Sleep(4 * socketTick)
	s.echo("still inside")
	if r := v.do("POST", "/.waitroom/leave?room=live"); r.status >= 400 {
		t.Fatalf("leave: %d", r.status)
	}
	took := s.closedWithin(2*socketTick + 5*time.Second)
	t.Logf("closed %v after the visitor left the deleted room", took)
}

// A session that reaches session_max ends its socket; the socket kept it
// alive until then (no request came), so nothing but the cap ended it.
func TestSocket_SessionMaxEndsIt(t *testing.T) {
	site := newWSSite(t)
	_, base := startGateway(t, gwConfig(site.srv.URL, socketRoom+"\n    session_ttl: 1s\n    session_max: 3s"))
	v := newVisitor(t, base)
	v.get("/events/")
	_, s := openSocket(t, base, v)
	<-site.opened
	time.Sleep(1500 * time.Millisecond) // past session_ttl: the socket renews the session
	s.echo("past the ttl")
	took := s.closedWithin(3*time.Second + 2*socketTick + time.Second)
	t.Logf("closed %v after the echo, session_max 3s", took)
}

func TestSocket_RoomRemovedByReload(t *testing.T) {
	site := newWSSite(t)
	before := gwConfig(site.srv.URL, socketRoom)
	app, base, path, _ := fileGateway(t, before, false)
	v := newVisitor(t, base)
	v.get("/events/")
	_, s := openSocket(t, base, v)
	<-site.opened
	after := strings.Replace(before, "  - { path: /events/, upstream: site, room: concert }\n", "", 1)
	after = strings.Replace(after, "  concert:\n"+socketRoom+"\n", "", 1)
	rewrite(t, path, after)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	took := s.closedWithin(2*socketTick + time.Second)
	t.Logf("closed %v after the reload", took)
}

// max_sockets holds across two gateways sharing Redis: the third socket of
// one session is refused wherever it is opened, and a closed one frees its
// place.
func TestSocket_MaxSocketsAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	site := newWSSite(t)
	cfg := redisConfig(site.srv.URL, socketRoom, srv.Addr(), "closed", "")
	_, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	v := newVisitor(t, a)
	v.get("/events/")
	var mu sync.Mutex
	var open []*socket
	for _, base := range []string{a, b} {
		code, s := openSocket(t, base, v)
		if code != http.StatusSwitchingProtocols {
			t.Fatalf("socket through %s: %d", base, code)
		}
		<-site.opened
		mu.Lock()
		open = append(open, s)
		mu.Unlock()
	}
	for _, base := range []string{a, b} {
		if code, _ := openSocket(t, base, v); code != http.StatusTooManyRequests {
			t.Fatalf("a third socket through %s: %d, want 429", base, code)
		}
	}
	open[0].conn.Close()
	<-site.closed
	waitFor(t, 5*time.Second, func() bool {
		code, s := openSocket(t, b, v)
		if s != nil {
			s.echo("again")
		}
		return code == http.StatusSwitchingProtocols
	})
	open[1].echo("the other one")
}
