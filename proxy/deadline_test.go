package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// deadlineFront serves up through Deadlines d.
func deadlineFront(t *testing.T, d Deadlines, up http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(d.Handler(up))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// A stream that keeps sending outlives the write deadline: it is bounded
// per write, not as a whole.
func TestDeadlines_StreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			http.NewResponseController(w).Flush()
			time.Sleep(200 * time.Millisecond)
		}
	}))
	t.Cleanup(site.Close)
	addr := deadlineFront(t, Deadlines{Read: 500 * time.Millisecond, Write: 500 * time.Millisecond, Idle: time.Second},
		newUpstream(t, "site", site.URL, Options{}))
	res, err := http.Get("http://" + addr + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || strings.Count(string(body), "data: ") != 6 {
		t.Fatalf("a 1.2s stream under a 500ms write timeout: %q, %v", body, err)
	}
}

// A plain response (of a known length, which ReverseProxy does not flush
// as it goes) that takes longer than the write deadline is cut. One of an
// unknown length is flushed per write, so it is bounded per write, as a
// stream is.
func TestDeadlines_PlainResponseIsCut(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(6<<10))
		for range 6 {
			io.WriteString(w, strings.Repeat("x", 1<<10))
			time.Sleep(200 * time.Millisecond)
		}
	}))
	t.Cleanup(site.Close)
	addr := deadlineFront(t, Deadlines{Write: 500 * time.Millisecond}, newUpstream(t, "site", site.URL, Options{}))
	res, err := http.Get("http://" + addr + "/slow")
	if err != nil {
		return // cut before even the headers left the buffer
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err == nil && len(body) == 6<<10 {
		t.Fatalf("a 1.2s plain answer went through a 500ms write timeout whole")
	}
}

// A WebSocket lives past the read and write deadlines while bytes cross
// it, and is closed once silent for the idle time.
func TestDeadlines_SocketBoundedByIdle(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 1)
	addr := deadlineFront(t, Deadlines{Read: 300 * time.Millisecond, Write: 300 * time.Millisecond, Idle: 700 * time.Millisecond},
		newUpstream(t, "site", newWSEcho(t, seen).URL, Options{}))
	conn, br := dialWebSocket(t, addr)
	<-seen
	for i := range 5 {
		time.Sleep(200 * time.Millisecond)
		echo(t, conn, br, fmt.Sprint("tick ", i))
	}
	start := time.Now()
	conn.SetReadDeadline(start.Add(5 * time.Second))
	if _, err := bufio.NewReader(br).ReadByte(); err == nil {
		t.Fatal("read a byte nobody sent")
	}
	if took := time.Since(start); took < 500*time.Millisecond || took > 3*time.Second {
		t.Fatalf("a silent socket closed after %v, want about the idle 700ms", took)
	}
}
