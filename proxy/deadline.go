package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Deadlines bound how long one request may hold a connection once its
// headers are in (server.read_header_timeout covers those): a body that is
// declared and never sent, a reader that takes a response a byte at a time.
// A zero field leaves that bound off.
type Deadlines struct {
	// Read bounds the request body, from the end of the headers. It is
	// lifted once the body is read, so a long response is not cut by it.
	Read time.Duration
	// Write bounds the response, from the end of the headers. A streaming
	// response (text/event-stream, or one the handler flushes) is bounded
	// per write instead: no single write may wait longer than Write for a
	// client that does not read.
	Write time.Duration
	// Idle bounds the silence on an upgraded connection (a WebSocket):
	// nothing crossing it either way for Idle closes it. Read and Write do
	// not apply to it.
	Idle time.Duration
}

// Handler applies the deadlines to every request next serves. A response
// written while the request body is still unread closes the connection
// after it, so an answer never waits for a body nobody will read (net/http
// would otherwise try to drain it first).
func (d Deadlines) Handler(next http.Handler) http.Handler {
	if d == (Deadlines{}) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		rc := http.NewResponseController(w)
		dw := &deadlineWriter{ResponseWriter: w, rc: rc, d: d, req: r}
		upgrade := isUpgrade(r.Header)
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			db := &deadlineBody{ReadCloser: r.Body}
			if d.Read > 0 {
				_ = rc.SetReadDeadline(now.Add(d.Read))
				db.lift = func() { _ = rc.SetReadDeadline(time.Time{}) }
			}
			r.Body, dw.body = db, db
		}
		if d.Write > 0 && !upgrade {
			_ = rc.SetWriteDeadline(now.Add(d.Write))
		}
		next.ServeHTTP(dw, r)
	})
}

// deadlineBody lifts the read deadline once the body is read to its end:
// past it, net/http's own background read watches for the client going
// away, and a deadline there would cancel a long request's context.
type deadlineBody struct {
	io.ReadCloser
	mu   sync.Mutex
	done bool
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

func (b *deadlineBody) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.done = true
		if b.lift != nil {
			b.lift()
		}
	}
}

func (b *deadlineBody) read() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done
}

// deadlineWriter turns the write deadline into a per-write one for
// streams, hands upgraded connections an idle bound, and closes the
// connection after a response sent over an unread body.
type deadlineWriter struct {
	http.ResponseWriter
	rc        *http.ResponseController
	d         Deadlines
	req       *http.Request
	body      *deadlineBody
	wrote     bool
	streaming bool
}

func (w *deadlineWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.wrote = true
		h := w.Header()
		if isEventStream(h.Get("Content-Type")) {
			w.streaming = true
		}
		if w.body != nil && !w.body.read() && w.req.ProtoMajor == 1 && code != http.StatusSwitchingProtocols {
			h.Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	w.extend()
	return w.ResponseWriter.Write(p)
}

// Flush marks the response a stream: a handler that flushes is sending it
// as it comes.
func (w *deadlineWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	w.streaming = true
	w.extend()
	_ = w.rc.Flush()
}

func (w *deadlineWriter) extend() {
	if w.streaming && w.d.Write > 0 {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.d.Write))
	}
}

// Hijack hands over the connection with no deadline left but the idle one.
func (w *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := w.rc.Hijack()
	if err != nil {
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	if w.d.Idle > 0 {
		conn = &idleConn{Conn: conn, idle: w.d.Idle}
	}
	return conn, brw, nil
}

// Unwrap lets http.ResponseController reach what lies beneath.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func isEventStream(contentType string) bool {
	return len(contentType) >= 17 && equalFoldASCII(contentType[:17], "text/event-stream")
}

func equalFoldASCII(a, b string) bool {
	return len(a) == len(b) && lowerASCII(a) == lowerASCII(b)
}

// idleConn moves both deadlines forward whenever something crosses it, so
// an upgraded connection lives until it is silent both ways for idle (a
// pending read's deadline moves too: a server that only pushes keeps the
// connection).
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(p)
	if n > 0 {
		_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
	return c.Conn.Write(p)
}
