package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"sync/atomic"
	"time"
)

// Timing is what the proxy learned of the site from one request, for
// Options.OnFirstByte: the latency a room's autopilot judges the site by.
// Only the site's own answers and the gateway's 502 and 504 for a site
// that failed it are reported; an answer the gateway wrote for its own
// reasons (a refused upgrade or path: 400) says nothing of the site, nor
// does a request whose body the client did not finish sending.
type Timing struct {
	// Status is the status sent: the site's; the gateway's 502 or 504; or
	// 499, the client went away before the site answered.
	Status int
	// FirstByte is the time from the request fully written to the site
	// (its body included: a client's slow upload is not the site's time)
	// to the first byte of the site's final answer; for a site that
	// answered before the body was all sent, from the body's last data
	// before the answer. A 1xx alone (an automatic 100 Continue) is no
	// answer. For a 504, a 502 after
	// the request was written, and a 499, it is the time waited since the
	// request was written, with no answer.
	FirstByte time.Duration
	// Timed says FirstByte was measured: false when the request never
	// reached the site whole (no connection, a failed write), so there is
	// no time to tell.
	Timed bool
}

// OnFirstByteFunc is the type of Options.OnFirstByte.
type OnFirstByteFunc = func(r *http.Request, t Timing)

// siteTrace follows one request to the site through net/http/httptrace:
// when the connection was had, the headers and the whole request written,
// and the first byte of the answer came. The transport calls it from its
// own goroutines, hence the lock.
type siteTrace struct {
	mu                  sync.Mutex
	conn                bool
	wroteHeaders, wrote time.Time
	writeFailed         bool
	firstByte           time.Time
	informational       bool
	// answered is when the site's final answer reached modifyResponse
	// (ReverseProxy calls it for the site's answers only, never for the
	// gateway's own): without it, a first byte was at most a 1xx (an
	// automatic 100 Continue) and the status is the gateway's.
	answered time.Time
	// lastRead is when the client's body last gave data, and readAtAnswer
	// its value when the site answered: a site that answered before the
	// body was all sent is timed from the body's last data before the
	// answer, not from the headers, so a client's trickle is not the
	// site's time.
	lastRead, readAtAnswer time.Time
	// bodyFailed: reading the client's body failed (it went away, or
	// stalled past the read deadline): not the site's doing.
	bodyFailed atomic.Bool
}

// traceKey finds a request's siteTrace in the outbound request's context,
// for modifyResponse.
type traceKey struct{}

// answer notes that the site sent its final answer; see siteTrace.answered.
func (s *siteTrace) answer() {
	s.mu.Lock()
	s.answered = time.Now()
	s.readAtAnswer = s.lastRead
	s.mu.Unlock()
}

// answered is called from modifyResponse with the site's response.
func answered(res *http.Response) {
	if res.Request == nil {
		return
	}
	if s, ok := res.Request.Context().Value(traceKey{}).(*siteTrace); ok {
		s.answer()
	}
}

func (s *siteTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			s.mu.Lock()
			s.conn = true
			s.mu.Unlock()
		},
		WroteHeaders: func() {
			s.mu.Lock()
			s.wroteHeaders = time.Now()
			s.mu.Unlock()
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			s.mu.Lock()
			if i.Err != nil {
				s.writeFailed = true
			} else {
				s.wrote = time.Now()
			}
			s.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			s.mu.Lock()
			s.firstByte = time.Now()
			s.mu.Unlock()
		},
		// A 100 Continue or 103 Early Hints is the first byte, but not the
		// answer: the final status line is timed (recorder.WriteHeader).
		Got1xxResponse: func(int, textproto.MIMEHeader) error {
			s.mu.Lock()
			s.informational = true
			s.mu.Unlock()
			return nil
		},
		Got100Continue: func() {
			s.mu.Lock()
			s.informational = true
			s.mu.Unlock()
		},
	}
}

// follow returns a copy of r (the caller's stays as it was) whose
// requests to the site s traces, and whose body, read through s, tells s
// when the client's body failed: the transport reports that as its own
// error, which must not be blamed on the site.
func (s *siteTrace) follow(r *http.Request) *http.Request {
	ctx := context.WithValue(r.Context(), traceKey{}, s)
	r2 := r.WithContext(httptrace.WithClientTrace(ctx, s.clientTrace()))
	if r.Body != nil && r.Body != http.NoBody {
		r2.Body = &watchedBody{ReadCloser: r.Body, s: s}
	}
	return r2
}

type watchedBody struct {
	io.ReadCloser
	s *siteTrace
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.mu.Lock()
		b.s.lastRead = time.Now()
		b.s.mu.Unlock()
	}
	if err != nil && err != io.EOF {
		b.s.bodyFailed.Store(true)
	}
	return n, err
}

// timing is what rec's request says of the site, and whether it says
// anything: see Timing.
func (s *siteTrace) timing(status int, hasBody bool, now time.Time) (Timing, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Timing{Status: status}
	switch {
	case !s.answered.IsZero() && !s.firstByte.IsZero():
		// The site answered. Time its final answer (past any 1xx) from the
		// request written whole; a site that answered before the body was
		// all sent (it did not wait for it) is timed from the later of the
		// headers written and the body's last data before the answer.
		end := s.firstByte
		if s.informational {
			end = s.answered
		}
		start := s.wroteHeaders
		if s.readAtAnswer.After(start) {
			start = s.readAtAnswer
		}
		if !s.wrote.IsZero() && !s.wrote.After(end) && s.wrote.After(start) {
			start = s.wrote
		}
		if status == http.StatusSwitchingProtocols || start.IsZero() {
			return t, false // an upgrade, or no request seen written: nothing to time
		}
		t.FirstByte, t.Timed = max(0, end.Sub(start)), true
		return t, true
	case s.bodyFailed.Load():
		return t, false // the client's body failed or stalled, not the site
	case status == StatusClientClosedRequest:
		// The client went away before any answer: the time it waited since
		// the request reached the site, if it did.
		if s.wrote.IsZero() {
			return t, false
		}
		t.FirstByte, t.Timed = now.Sub(s.wrote), true
		return t, true
	case status != http.StatusBadGateway && status != http.StatusGatewayTimeout:
		return t, false // the gateway's own answer (400), not the site's
	case !s.wrote.IsZero():
		// Written whole and no answer: the site timed out or hung up.
		t.FirstByte, t.Timed = now.Sub(s.wrote), true
		return t, true
	case s.conn && hasBody:
		// Connected but the upload did not finish: a client's slow or
		// broken body, or the site giving up on it; not the site's error.
		return t, false
	}
	// No connection (refused, the dial timed out), or the headers of a
	// request without a body could not be written: the site failed.
	return t, true
}

// timed reports a finished request to Options.OnFirstByte.
func (u *Upstream) timed(rec *recorder) {
	if u.opt.OnFirstByte == nil || rec.trace == nil {
		return
	}
	in := rec.in
	hasBody := in.Body != nil && in.Body != http.NoBody && in.ContentLength != 0
	if t, ok := rec.trace.timing(rec.code(), hasBody, time.Now()); ok {
		u.opt.OnFirstByte(in, t)
	}
}
