package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
)

// adminToken guards the test gateways' admin listeners.
const adminToken = "test-admin-token-0123456789"

// Both test keys are 32 bytes of "0123456789abcdef0123456789abcdef".
const testKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// gwConfig is a gateway in front of upstream with one room on /events/.
// The site answers at once, but its timeout is generous: on a busy
// machine a test's own crowd may hold a proxied request for seconds, and a
// 504 there would hold a room's slot and fail tests that test no timeout.
func gwConfig(upstream string, room string) string {
	return fmt.Sprintf(`
listen: "127.0.0.1:0"
admin: { listen: "127.0.0.1:0", token: %[4]q }
log: { level: error }
cookie: { secure: false, hash_keys: [%[3]q], block_keys: [%[3]q] }
upstreams:
  site: { url: %[1]q, timeout: 30s }
rooms:
  concert:
%[2]s
  festival:
    max_active: 5
routes:
  - { path: /events/, upstream: site, room: concert }
  - { path: /festival/, upstream: site, room: festival }
  - { path: /, upstream: site }
bypass:
  paths: [/static/]
`, upstream, room, testKey, adminToken)
}

// upstreamLog is a site that records who reached it.
type upstreamLog struct {
	mu       sync.Mutex
	visitors map[string]int // Waitroom-Visitor -> requests
	done     map[string]int // Waitroom-Visitor -> requests to /events/done (end of a session)
	paths    []string
	who      []string // Waitroom-Visitor of each request, "" for none
	total    int
}

func newUpstream(t testing.TB) (*upstreamLog, *httptest.Server) {
	u := &upstreamLog{visitors: map[string]int{}, done: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.total++
		u.paths = append(u.paths, r.URL.Path)
		u.who = append(u.who, r.Header.Get(waitroom.VisitorHeader))
		if v := r.Header.Get(waitroom.VisitorHeader); v != "" {
			u.visitors[v]++
		}
		if r.URL.Path == "/events/cached" {
			w.Header().Set("Cache-Control", "public, max-age=600")
		}
		if r.URL.Path == "/events/done" {
			u.done[r.Header.Get(waitroom.VisitorHeader)]++
			w.Header().Set("Waitroom-Command", "release")
		}
		u.mu.Unlock()
		fmt.Fprintf(w, "site:%s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return u, srv
}

func (u *upstreamLog) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.total
}

// startGateway runs an App on a loopback port until the test ends.
func startGateway(t testing.TB, yaml string) (*App, string) {
	t.Helper()
	cfg, err := parseConfig("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("app.Run: %v", err)
		}
		_ = app.Close()
	})
	return app, "http://" + app.Addr().String()
}

// visitor is one browser: its own cookie jar, no redirects followed.
type visitor struct {
	t    testing.TB
	c    *http.Client
	base string
}

func newVisitor(t testing.TB, base string) *visitor {
	jar, _ := cookiejar.New(nil)
	// A minute bounds a hung request; a busy machine may take seconds.
	return &visitor{t: t, base: base, c: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type reply struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

func (v *visitor) do(method, path string, hdr ...string) reply {
	v.t.Helper()
	req, err := http.NewRequest(method, v.base+path, nil)
	if err != nil {
		v.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &r.json)
	}
	return r
}

func (v *visitor) get(path string) reply { return v.do(http.MethodGet, path) }

func (v *visitor) getJSON(path string) reply {
	return v.do(http.MethodGet, path, "Accept", "application/json")
}

func (r reply) state() string { s, _ := r.json["state"].(string); return s }

func (r reply) position() int {
	p, _ := r.json["position"].(float64)
	return int(p)
}

// waitAdmitted polls the status endpoint until the visitor is in.
func (v *visitor) waitAdmitted(room string, within time.Duration) {
	v.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if v.getJSON("/.waitroom/status?room="+room).state() == "admitted" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	v.t.Fatalf("not admitted within %v", within)
}

// cookieValue returns the visitor's cookie for a room.
func (v *visitor) cookieValue(room string) string {
	req, _ := http.NewRequest(http.MethodGet, v.base, nil)
	for _, c := range v.c.Jar.Cookies(req.URL) {
		if c.Name == "waitroom_"+room {
			return c.Value
		}
	}
	return ""
}

func testTickets(t testing.TB) *waitroom.Tickets {
	k, _ := base64.StdEncoding.DecodeString(testKey)
	tk, err := waitroom.NewTickets(waitroom.Cookie{Name: "waitroom", MaxAge: time.Hour}, []waitroom.KeyPair{{Hash: k, Block: k}})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// since returns the distinct visitors the site served from request n on.
func (u *upstreamLog) since(n int) map[string]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := map[string]bool{}
	for _, id := range u.who[n:] {
		if id != "" {
			seen[id] = true
		}
	}
	return seen
}
