package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

// hookReceiver checks every message's signature and keeps the verified
// ones; it can be made to fail.
type hookReceiver struct {
	mu       sync.Mutex
	secret   webhook.Secret
	got      []map[string]any
	ids      []string
	bad      int
	failFor  atomic.Int32 // answer 503 to this many requests first
	attempts atomic.Int32
}

func newHookReceiver(t *testing.T, secret string) (*hookReceiver, string) {
	t.Helper()
	s, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := &hookReceiver{secret: s}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.attempts.Add(1)
		if h.failFor.Load() > 0 {
			h.failFor.Add(-1)
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := webhook.Verify(h.secret, r.Header, body, webhook.DefaultTolerance); err != nil {
			h.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		h.got = append(h.got, m)
		h.ids = append(h.ids, r.Header.Get(webhook.HeaderID))
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func (h *hookReceiver) count(typ string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.got {
		if m["type"] == typ {
			n++
		}
	}
	return n
}

func (h *hookReceiver) find(typ string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.got {
		if m["type"] == typ {
			return m
		}
	}
	return nil
}

var hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// Three instances on one Redis see a line start, a mode change and an
// identified visitor go in: the receiver gets each once, signed; a
// receiver that is down at first gets it on a retry.
func TestWebhooks_OnceAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	rcv, url := newHookReceiver(t, hookSecret)
	rcv.failFor.Store(1) // the first delivery fails and is retried
	_, site := newUpstream(t)
	identity := "0123456789abcdef0123456789abcdef-identity"
	room := fmt.Sprintf("    max_active: 1\n    tick: 100ms\n    identity: { cookie: acct, secret: %q }", identity)
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "") + fmt.Sprintf(`webhooks:
  - url: %q
    events: [queue.started, room.mode_changed, room.closed, visitor.admitted]
    secret: %q
`, url, hookSecret)
	var apps []*App
	var bases []string
	for range 3 {
		app, base := startGateway(t, cfg)
		apps, bases = append(apps, app), append(bases, base)
	}
	id, err := waitroom.IdentityConfig{Cookie: "acct", Secret: identity}.Build()
	if err != nil {
		t.Fatal(err)
	}
	alice := newVisitor(t, bases[0])
	if r := alice.do(http.MethodGet, "/events/1", "Waitroom-Identity", id.Sign("alice@example.com", time.Now().Add(time.Hour))); r.body != "site:/events/1" {
		t.Fatalf("alice: %d %q", r.status, r.body)
	}
	waiting := newVisitor(t, bases[1])
	waiting.getJSON("/events/1")
	waiting.getJSON("/events/1") // placed: the line has started
	waitFor(t, 10*time.Second, func() bool { return rcv.count("queue.started") >= 1 && rcv.count("visitor.admitted") >= 1 })
	if code, _, body := newAdmin(t, apps[2]).do("PATCH", "/admin/api/rooms/concert", `{"mode":"reject"}`); code != 200 {
		t.Fatalf("reject: %d %s", code, body)
	}
	waitFor(t, 10*time.Second, func() bool { return rcv.count("room.mode_changed") >= 1 && rcv.count("room.closed") >= 1 })
	time.Sleep(2 * time.Second) // every instance ticked past each change
	for typ, want := range map[string]int{"queue.started": 1, "visitor.admitted": 1, "room.mode_changed": 1, "room.closed": 1} {
		if n := rcv.count(typ); n != want {
			t.Errorf("%s sent %d times, want %d", typ, n, want)
		}
	}
	if rcv.bad != 0 || rcv.attempts.Load() < 5 {
		t.Fatalf("%d badly signed, %d attempts (one retried)", rcv.bad, rcv.attempts.Load())
	}
	admitted := rcv.find("visitor.admitted")["data"].(map[string]any)
	closed := rcv.find("room.mode_changed")["data"].(map[string]any)
	if admitted["account"] != "alice@example.com" || admitted["room"] != "concert" || closed["to"] != "reject" || closed["by"] != "admin" {
		t.Fatalf("data: %v %v", admitted, closed)
	}
	if !strings.Contains(metricsText(t, apps[0])+metricsText(t, apps[1])+metricsText(t, apps[2]), `waitroom_webhooks_total{event="queue.started",result="sent"} 1`) {
		t.Error("the sent event is not counted")
	}
}
