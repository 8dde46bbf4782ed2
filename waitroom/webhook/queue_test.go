package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

// stuckReceiver answers nothing until the test ends or the request is
// cancelled: workers sending to it are stuck.
func stuckReceiver(t *testing.T) *receiver {
	t.Helper()
	release := make(chan struct{})
	r := newReceiver(t, func(_ int, w http.ResponseWriter) {
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	})
	// Registered after the server's Close, so it runs first.
	t.Cleanup(func() { close(release) })
	return r
}

// TestDispatcher_FullQueueDropsWithoutBlocking: with the only worker stuck
// and the queue full, Send returns at once, refuses, and counts the drop.
func TestDispatcher_FullQueueDropsWithoutBlocking(t *testing.T) {
	t.Parallel()
	r := stuckReceiver(t)
	obs := &counter{}
	cfg := fast()
	cfg.Workers, cfg.QueueSize = 1, 3
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
		Delivery:  cfg, Observer: obs,
	})
	for i := range 3 {
		if !d.Send(queueStarted(i)) {
			t.Fatalf("Send %d refused with room in the queue", i)
		}
	}
	waitFor(t, "the worker to be stuck on the first event", func() bool { return len(r.requests()) == 1 })
	// The worker stays stuck until the test ends, so a Send that waited on
	// it would never return; the bound is far above any scheduling delay
	// of a loaded machine, and the time taken is logged.
	const n = 1000
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		for i := range n {
			if d.Send(queueStarted(100 + i)) {
				t.Errorf("Send %d queued past the bound", i)
			}
		}
		done <- time.Since(start)
	}()
	select {
	case took := <-done:
		t.Logf("%d refused Sends took %v", n, took)
	case <-time.After(20 * time.Second):
		t.Fatal("Send blocked behind the stuck worker")
	}
	if got := obs.get(webhook.ResultDropped); got != n {
		t.Errorf("dropped counted %d, want %d", got, n)
	}
	if len(r.requests()) != 1 {
		t.Errorf("receiver got %d, want 1: the worker was not stuck", len(r.requests()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = d.Close(ctx)
}

// TestDispatcher_CloseGivesUpAtDeadline: a request in flight, one queued
// behind it and one waiting for its retry are abandoned when Close's
// deadline comes, and Close returns soon after.
func TestDispatcher_CloseGivesUpAtDeadline(t *testing.T) {
	t.Parallel()
	stuck := stuckReceiver(t)
	failing := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(503) })
	obs := &counter{}
	cfg := fast()
	cfg.Workers, cfg.Timeout, cfg.BackoffBase, cfg.BackoffMax = 2, time.Minute, time.Minute, time.Minute
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{
			endpoint(t, stuck.srv.URL, stuck.secret, webhook.QueueStarted),
			endpoint(t, failing.srv.URL, failing.secret, webhook.QueueDrained),
		},
		Delivery: cfg, Observer: obs,
	})
	d.Send(webhook.Event{Type: webhook.QueueDrained, ID: "d1", Data: webhook.QueueDrainedData{Room: "concert"}})
	waitFor(t, "the first 503", func() bool { return obs.get(webhook.ResultRetried) == 1 })
	d.Send(queueStarted(1))
	d.Send(queueStarted(2))
	waitFor(t, "a worker stuck", func() bool { return len(stuck.requests()) >= 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := d.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want the deadline's error", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v with a 100ms deadline", took)
	}
	if got := obs.get(webhook.ResultAbandoned); got != 3 {
		t.Errorf("abandoned counted %d, want 3 (%v)", got, obs)
	}
	if d.Send(queueStarted(3)) || obs.get(webhook.ResultDropped) != 1 {
		t.Errorf("Send after Close: counts %v, want refused and dropped", obs)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestDispatcher_CloseDrains: Close without a deadline returns once every
// queued event was delivered.
func TestDispatcher_CloseDrains(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, nil)
	cfg := fast()
	cfg.Workers = 3
	d := webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)}, Delivery: cfg})
	for i := range 50 {
		d.Send(queueStarted(i))
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(r.requests()); n != 50 {
		t.Errorf("receiver got %d before Close returned, want 50", n)
	}
}

// failingClaimer is a Claimer whose store is down.
type failingClaimer struct{}

func (failingClaimer) Claim(context.Context, string, time.Duration) (bool, error) {
	return false, errors.New("store down")
}

// TestDispatcher_ClaimErrorSendsAnyway: a duplicate beats a lost event.
func TestDispatcher_ClaimErrorSendsAnyway(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, nil)
	obs := &counter{}
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
		Delivery:  fast(), Observer: obs, Claimer: failingClaimer{},
	})
	d.Send(queueStarted(1))
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.requests()) != 1 || obs.get(webhook.ResultClaimError) != 1 || obs.get(webhook.ResultSent) != 1 {
		t.Errorf("%d requests, counts %v; want it sent and the claim error counted", len(r.requests()), obs)
	}
}

func TestMemoryClaimer_FirstWinsUntilTTL(t *testing.T) {
	t.Parallel()
	c := webhook.NewMemoryClaimer()
	ctx := context.Background()
	first, _ := c.Claim(ctx, "k", 50*time.Millisecond)
	second, _ := c.Claim(ctx, "k", 50*time.Millisecond)
	other, _ := c.Claim(ctx, "k2", time.Minute)
	if !first || second || !other {
		t.Fatalf("claims %v %v %v, want true false true", first, second, other)
	}
	time.Sleep(60 * time.Millisecond)
	if again, _ := c.Claim(ctx, "k", time.Minute); !again {
		t.Error("a claim past its ttl was not taken again")
	}
}
