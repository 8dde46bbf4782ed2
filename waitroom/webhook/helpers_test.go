package webhook_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

// newSecret is a fresh "whsec_" secret of 32 random bytes.
func newSecret(tb testing.TB) string {
	tb.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		tb.Fatal(err)
	}
	return webhook.SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// specVerify checks a message as the Standard Webhooks spec describes it,
// written apart from the package's Verify so the two cannot share a
// mistake: HMAC-SHA256, keyed with the base64-decoded part of the secret
// after "whsec_", over "<webhook-id>.<webhook-timestamp>.<body>", matched
// against any "v1,<base64>" entry of the space-separated list.
func specVerify(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", h.Get("webhook-id"), h.Get("webhook-timestamp"), body)
	want := mac.Sum(nil)
	for _, entry := range strings.Split(h.Get("webhook-signature"), " ") {
		version, sig, _ := strings.Cut(entry, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no v1 signature matches")
}

// request is one request a receiver got.
type request struct {
	at     time.Time
	header http.Header
	body   []byte
	err    error // from specVerify
}

// receiver is a webhook endpoint on an httptest server that records every
// request, checks its signature with specVerify, and answers what answer
// says for the n-th request (from 1); nil answers 204.
type receiver struct {
	secret string
	srv    *httptest.Server
	answer func(n int, w http.ResponseWriter)

	mu   sync.Mutex
	reqs []request
}

func newReceiver(tb testing.TB, answer func(n int, w http.ResponseWriter)) *receiver {
	tb.Helper()
	r := &receiver{secret: newSecret(tb), answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err == nil {
		err = specVerify(r.secret, req.Header, body)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, request{at: time.Now(), header: req.Header.Clone(), body: body, err: err})
	n := len(r.reqs)
	r.mu.Unlock()
	if r.answer == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r.answer(n, w)
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

// endpoint builds an endpoint for url, secret and events.
func endpoint(tb testing.TB, url, secret string, events ...webhook.EventType) webhook.Endpoint {
	tb.Helper()
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = string(e)
	}
	ep, err := webhook.Config{URL: url, Events: names, Secret: secret}.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

// counter is an Observer that counts by event and result.
type counter struct {
	mu sync.Mutex
	n  map[webhook.Result]int
}

func (c *counter) Webhook(_ webhook.EventType, r webhook.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[webhook.Result]int)
	}
	c.n[r]++
}

func (c *counter) get(r webhook.Result) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[r]
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.n)
}

// fast is a Delivery for tests: short waits, few attempts.
func fast() webhook.Delivery {
	return webhook.Delivery{
		QueueSize: 100, Workers: 2, MaxAttempts: 3,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Timeout: 5 * time.Second, ClaimTTL: time.Minute,
	}
}

// waitFor polls cond until it holds, or fails the test after 10 seconds.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(end) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// queueStarted is the event the tests send unless they need another.
func queueStarted(epoch int) webhook.Event {
	return webhook.Event{
		Type: webhook.QueueStarted,
		ID:   webhook.Key(webhook.QueueStarted, "concert", fmt.Sprint(epoch)),
		Time: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC),
		Data: webhook.QueueStartedData{Room: "concert", Waiting: 42},
	}
}
