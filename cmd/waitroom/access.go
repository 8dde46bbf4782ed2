package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
)

// AccessConfig is log.access: one line per visitor request, apart from
// the application log.
type AccessConfig struct {
	// Enabled turns the access log on. Default false.
	Enabled bool `mapstructure:"enabled" yaml:"enabled" json:"enabled"`
	// Path is the file to append to; "" (default) is standard output (the
	// application log goes to standard error).
	Path string `mapstructure:"path" yaml:"path" json:"path"`
	// Format is "json" (default) or "combined" (Apache's, with the room,
	// decision and visitor hash after it).
	Format string `mapstructure:"format" yaml:"format" json:"format"`
	// PollSample is the share of waiting polls (the status endpoint, and
	// the waiting page asked again) that are logged, 0 to 1. Default 1.
	PollSample float64 `mapstructure:"poll_sample" yaml:"poll_sample" json:"poll_sample"`
}

func (c AccessConfig) check(p *conf.Problems) {
	if c.Format != "json" && c.Format != "combined" {
		p.Add("log.access.format", `must be "json" or "combined", got %q`, c.Format)
	}
	if c.PollSample < 0 || c.PollSample > 1 {
		p.Add("log.access.poll_sample", "must be from 0 to 1, got %v", c.PollSample)
	}
}

// accessLog writes the access lines. Each line is written whole under a
// lock, buffered, and flushed at once: a crash loses no line written.
type accessLog struct {
	mu     sync.Mutex
	w      *bufio.Writer
	closer io.Closer
	c      AccessConfig
}

func openAccessLog(c AccessConfig) (*accessLog, error) {
	if !c.Enabled {
		return nil, nil
	}
	var out io.Writer = os.Stdout
	var closer io.Closer
	if c.Path != "" {
		f, err := os.OpenFile(c.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return nil, fmt.Errorf("log.access.path: %w", err)
		}
		out, closer = f, f
	}
	return &accessLog{w: bufio.NewWriter(out), closer: closer, c: c}, nil
}

func (l *accessLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// reopen opens log.access.path again, for logrotate: after it moved the
// file away (and sent SIGHUP), new lines go to a new file at the path.
// Standard output and a file that cannot be opened stay as they are.
func (l *accessLog) reopen() error {
	if l == nil || l.c.Path == "" {
		return nil
	}
	f, err := os.OpenFile(l.c.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("reopening log.access.path: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.w.Flush()
	old := l.closer
	l.w, l.closer = bufio.NewWriter(f), f
	if old != nil {
		_ = old.Close()
	}
	return nil
}

// accessEntry is one line: no query string (it may carry anything), no
// cookie and no token, a hash for the visitor.
type accessEntry struct {
	Time     string  `json:"time"`
	Client   string  `json:"client"`
	Method   string  `json:"method"`
	Host     string  `json:"host"`
	Path     string  `json:"path"`
	Room     string  `json:"room,omitempty"`
	Decision string  `json:"decision"`
	Status   int     `json:"status"`
	Bytes    int64   `json:"bytes"`
	Duration float64 `json:"duration_ms"`
	Upstream string  `json:"upstream,omitempty"`
	Visitor  string  `json:"visitor,omitempty"`
	// UserAgent and Referer as the client sent them, cut to maxLogField;
	// the Referer without its query, which may carry anything.
	UserAgent string `json:"user_agent,omitempty"`
	Referer   string `json:"referer,omitempty"`
}

// maxLogField bounds a client-chosen text in a line: a 64 KiB header must
// not become a 64 KiB log line.
const maxLogField = 512

// clip is s cut to at most maxLogField bytes, at a character's start so
// the JSON line shows no broken character.
func clip(s string) string {
	if len(s) <= maxLogField {
		return s
	}
	cut := maxLogField
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// refererOf is r's Referer without credentials, query or fragment.
func refererOf(r *http.Request) string {
	ref := r.Referer()
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	if u, err := url.Parse(ref); err == nil && u.User != nil {
		u.User = nil
		ref = u.String()
	}
	return clip(ref)
}

// wrap logs each request next serves, from its waitroom.Scope: the
// client and upstream the front door put there, the room, outcome and
// visitor the gate or the front door recorded (waitroom.Record).
func (l *accessLog) wrap(next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r, sc := waitroom.Scoped(r)
		cw := &countingWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		o := sc.Outcome
		if o == "" {
			o = waitroom.OutcomeNone // refused before routing, or no route
		}
		if (o == waitroom.OutcomePoll || o == waitroom.OutcomeQueued) && l.c.PollSample < 1 && rand.Float64() >= l.c.PollSample {
			return
		}
		client := ""
		if sc.Client.IsValid() {
			client = sc.Client.String()
		}
		room := sc.Room
		if sc.Outcome == "" {
			room = "" // nothing was decided in the route's room
		}
		l.write(accessEntry{
			Time: start.UTC().Format(time.RFC3339Nano), Client: client, Method: r.Method, Host: r.Host,
			Path: r.URL.Path, Room: room, Decision: string(o), Status: cw.code(), Bytes: cw.n,
			Duration: float64(time.Since(start).Microseconds()) / 1000, Upstream: sc.Upstream, Visitor: sc.Visitor,
			UserAgent: clip(r.UserAgent()), Referer: refererOf(r),
		}, r)
	})
}

func (l *accessLog) write(e accessEntry, r *http.Request) {
	var line []byte
	if l.c.Format == "combined" {
		t, _ := time.Parse(time.RFC3339Nano, e.Time)
		line = fmt.Appendf(nil, "%s - - [%s] %s %d %d %s %s %s %s %s\n", e.Client, t.Format("02/Jan/2006:15:04:05 -0700"),
			strconv.Quote(e.Method+" "+e.Path+" "+r.Proto), e.Status, e.Bytes,
			strconv.Quote(e.Referer), strconv.Quote(e.UserAgent), dash(e.Room), e.Decision, dash(e.Visitor))
	} else {
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		line = append(b, '\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(line)
	_ = l.w.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// countingWriter counts what a response sent, for the access log.
type countingWriter struct {
	http.ResponseWriter
	status   int
	n        int64
	hijacked bool
}

// Hijack hands the connection over (an upgrade) and remembers it did.
func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, brw, err
}

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush, deadlines and Hijack.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *countingWriter) code() int {
	switch {
	case w.status != 0:
		return w.status
	case w.hijacked:
		return http.StatusSwitchingProtocols
	}
	return http.StatusOK // nothing written: net/http sent 200
}
