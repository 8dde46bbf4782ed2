package main

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

// TestStoreAbilities: wrapped for metrics as NewApp wraps it, the Redis
// store still offers every optional ability the gateway looks for with
// waitroom.As, and each works through it; the memory store offers none, so
// the gateway falls back to its own claimer, an ACME manager without a
// shared cache, and no eviction check.
func TestStoreAbilities(t *testing.T) {
	srv := redistest.Start(t)
	rs := metrics.Store(redisstore.New(srv.NewClient(), redisstore.WithKeyPrefix("abilities")), metrics.New())
	mem := metrics.Store(memstore.New(), metrics.New())
	t.Cleanup(func() { _, _ = rs.Close(), mem.Close() })
	ctx := t.Context()

	claimer, ok := waitroom.As[webhook.Claimer](rs)
	if !ok {
		t.Fatal("Redis store: no webhook.Claimer")
	}
	if won, err := claimer.Claim(ctx, "event-1", time.Minute); err != nil || !won {
		t.Errorf("Claim through the wrapper = %v, %v; want true", won, err)
	}
	certs, ok := waitroom.As[certCacher](rs)
	if !ok {
		t.Fatal("Redis store: no certCacher")
	}
	if err := certs.CertCache().Put(ctx, "example.com", []byte("pem")); err != nil {
		t.Errorf("CertCache().Put through the wrapper: %v", err)
	}
	ev, ok := waitroom.As[evictionPolicy](rs)
	if !ok {
		t.Fatal("Redis store: no evictionPolicy")
	}
	if policy, err := ev.EvictionPolicy(ctx); err != nil || policy == "" {
		t.Errorf("EvictionPolicy through the wrapper = %q, %v", policy, err)
	}

	if _, ok := waitroom.As[webhook.Claimer](mem); ok {
		t.Error("memory store offers a webhook.Claimer; want the gateway's own")
	}
	if _, ok := waitroom.As[certCacher](mem); ok {
		t.Error("memory store offers a certCacher")
	}
	if _, ok := waitroom.As[evictionPolicy](mem); ok {
		t.Error("memory store offers an evictionPolicy")
	}
}
