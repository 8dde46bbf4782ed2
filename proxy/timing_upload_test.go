package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A client that asks Expect: 100-continue and never sends its body: the
// site's automatic 100 Continue is the first byte, and the gateway's own
// answer at the read deadline is no answer of the site. Timed from the
// headers, each such request would be a sample of the whole read deadline
// (60s by default) blamed on the site.
func TestTiming_ExpectContinueStallIsNotTheSites(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(site.Close)
	ts, base := timedFront(t, site.URL, DefaultUpstream(), Deadlines{Read: time.Second})
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, "POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// Read until the final status line or the gateway hangs up.
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil || (strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.1 1")) {
			break
		}
	}
	// A fast GET after it is the one report expected; the stalled POST
	// must add none (it is finished once the GET's report is in: the POST
	// ended first, and its report would come from the same handler exit).
	if code := getStatus(t, base+"/"); code != http.StatusOK {
		t.Fatalf("after: %d", code)
	}
	got := ts.wait(t, 1)
	time.Sleep(200 * time.Millisecond)
	ts.mu.Lock()
	got = append(got[:0], ts.got...)
	ts.mu.Unlock()
	for _, g := range got {
		if g.Status != http.StatusOK {
			t.Fatalf("reports %+v: a client that never sent its body was reported as the site", got)
		}
	}
}

// trickle sends 8 KB, waits gap, sends 300 KB (past the 256 KB a Go site
// reads before answering a handler that ignored the body) and keeps the
// body open for another gap before closing it.
func trickle(gap time.Duration) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"a":"` + strings.Repeat("x", 8000)))
		time.Sleep(gap)
		_, _ = pw.Write([]byte(`"}` + strings.Repeat(" ", 300000)))
		time.Sleep(gap)
		_ = pw.Close()
	}()
	return pr
}

// A site that answers before the body is finished (it stops reading
// after a JSON value, or refuses an upload outright like nginx's
// client_max_body_size) is timed from the body's last data before its
// answer: the client's trickle before it is not the site's time.
func TestTiming_EarlyAnswerIsNotTimedWithTheUpload(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			var v any
			_ = json.NewDecoder(r.Body).Decode(&v)
			_, _ = io.WriteString(w, "ok")
			return
		}
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	t.Cleanup(site.Close)
	const gap = 1500 * time.Millisecond
	for i, path := range []string{"/json", "/upload"} {
		ts, base := timedFront(t, site.URL, DefaultUpstream(), Deadlines{})
		req, err := http.NewRequest(http.MethodPost, base+path, trickle(gap))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		got := ts.wait(t, 1)[0]
		// The site answered within moments of the body's second part; the
		// bug timed it from the headers, at least gap.
		if !got.Timed || got.Status != res.StatusCode || got.FirstByte >= gap*2/3 {
			t.Fatalf("%d %s: %+v, want the site's %d timed well under %v", i, path, got, res.StatusCode, gap)
		}
	}
}
