package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

// TestDispatcher_RetriesWithGrowingGaps: a receiver that answers 503 twice
// and then 200 gets three attempts of one message, each signed afresh, the
// second gap about twice the first.
func TestDispatcher_RetriesWithGrowingGaps(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	obs := &counter{}
	cfg := fast()
	cfg.BackoffBase, cfg.BackoffMax, cfg.MaxAttempts = 100*time.Millisecond, time.Second, 5
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
		Delivery:  cfg, Observer: obs,
	})
	d.Send(queueStarted(1))
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d attempts, want 3", len(reqs))
	}
	for i, q := range reqs {
		checkRequest(t, q)
		if q.header.Get("webhook-id") != reqs[0].header.Get("webhook-id") || !bytes.Equal(q.body, reqs[0].body) {
			t.Errorf("attempt %d: another webhook-id or body than the first", i+1)
		}
	}
	gap1, gap2 := reqs[1].at.Sub(reqs[0].at), reqs[2].at.Sub(reqs[1].at)
	// Base 100ms ±20%, then 200ms ±20%: timers never fire early, so the
	// lower bounds hold however loaded the machine is.
	if gap1 < 80*time.Millisecond || gap2 < 160*time.Millisecond {
		t.Errorf("gaps %v and %v, want >= 80ms and >= 160ms", gap1, gap2)
	}
	if obs.get(webhook.ResultRetried) != 2 || obs.get(webhook.ResultSent) != 1 {
		t.Errorf("counts %v, want 2 retried and 1 sent", obs)
	}
}

// TestDispatcher_RetryAfter: a 429's Retry-After lengthens the wait, but
// never past BackoffMax.
func TestDispatcher_RetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header   string
		max      time.Duration
		min, top time.Duration // the gap wanted
	}{
		{"1", 5 * time.Second, time.Second, 4 * time.Second},
		{"3600", 300 * time.Millisecond, 0, 2 * time.Second},
		{"soon", 5 * time.Second, 0, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.header, func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t, func(n int, w http.ResponseWriter) {
				if n == 1 {
					w.Header().Set("Retry-After", tc.header)
					w.WriteHeader(http.StatusTooManyRequests)
				}
			})
			cfg := fast()
			cfg.BackoffMax = tc.max
			d := webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)}, Delivery: cfg})
			d.Send(queueStarted(1))
			if err := d.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			reqs := r.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d attempts, want 2", len(reqs))
			}
			if gap := reqs[1].at.Sub(reqs[0].at); gap < tc.min || gap > tc.top {
				t.Errorf("gap %v, want from %v to %v", gap, tc.min, tc.top)
			}
		})
	}
}

// TestDispatcher_DownReceiverRetriedThenFailed: nobody listens; every
// attempt is made and the failure counted, and the logs name the endpoint
// by its origin only, never its path, query, secret or signature.
func TestDispatcher_DownReceiverRetriedThenFailed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	secret := newSecret(t)
	core, logs := observer.New(zap.DebugLevel)
	obs := &counter{}
	cfg := fast()
	cfg.MaxAttempts = 4
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, "http://"+addr+"/hooks/tok-123?key=sek-456", secret, webhook.QueueStarted)},
		Delivery:  cfg, Observer: obs, Log: zap.New(core),
	})
	d.Send(queueStarted(1))
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if obs.get(webhook.ResultRetried) != 3 || obs.get(webhook.ResultFailedNetwork) != 1 {
		t.Errorf("counts %v, want 3 retried and 1 failed_network", obs)
	}
	failed := logs.FilterMessage("webhook delivery failed").All()
	if len(failed) != 1 || failed[0].ContextMap()["endpoint"] != "http://"+addr || failed[0].ContextMap()["attempt"] != int64(4) {
		t.Errorf("failure logs %v, want one naming the origin and attempt 4", failed)
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for _, leak := range []string{"tok-123", "sek-456", strings.TrimPrefix(secret, "whsec_"), "v1,"} {
			if strings.Contains(line, leak) {
				t.Errorf("log %q holds %q", line, leak)
			}
		}
	}
}

// TestDispatcher_FailuresEndTheDelivery: 5xx on every attempt and attempts
// that time out are counted when the last attempt fails.
func TestDispatcher_FailuresEndTheDelivery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer func(int, http.ResponseWriter)
		want   webhook.Result
	}{
		{"always 500", func(_ int, w http.ResponseWriter) { w.WriteHeader(500) }, webhook.ResultFailedStatus},
		{"always 429", func(_ int, w http.ResponseWriter) { w.WriteHeader(429) }, webhook.ResultFailedStatus},
		{"too slow", func(_ int, w http.ResponseWriter) { time.Sleep(300 * time.Millisecond) }, webhook.ResultFailedNetwork},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t, tc.answer)
			obs := &counter{}
			cfg := fast()
			cfg.Timeout = 100 * time.Millisecond
			d := webhook.New(webhook.Options{
				Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
				Delivery:  cfg, Observer: obs,
			})
			d.Send(queueStarted(1))
			if err := d.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(r.requests()); n != 3 || obs.get(tc.want) != 1 || obs.get(webhook.ResultRetried) != 2 {
				t.Errorf("%d attempts, counts %v; want 3, 2 retried, 1 %s", n, obs, tc.want)
			}
		})
	}
}
