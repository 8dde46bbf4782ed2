package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// Preflights through the proxy's own door, from one network, spread over
// three gateways on one Redis: the site sees at most preflight_limit (10/m)
// plus what the pace refilled meanwhile. With Redis stopped none reaches
// the site: a question asked lately is replayed, any other is refused with
// 503 and Retry-After.
func TestDoors_PreflightsBoundedAndNoneWhileTheStoreFails(t *testing.T) {
	srv := redistest.Start(t)
	site := newCORSSite(t)
	cfg := redisConfig(site.srv.URL, "    max_active: 0\n    tick: 50ms\n    preflight_limit: 10/m", srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	start := time.Now()
	first := preflightReq(t, bases[0], "/events/checkout", "https://app.example.net")
	if first.StatusCode != http.StatusNoContent {
		t.Fatalf("a real preflight: %d", first.StatusCode)
	}
	for i := range 100 {
		preflightReq(t, bases[i%3], fmt.Sprintf("/events/%d", i), "https://evil.example")
	}
	// GCRA: 10 at once, then one every 6 s.
	bound := int64(10 + time.Since(start)/(6*time.Second) + 1)
	if reached := site.preflight.Load(); reached > bound {
		t.Fatalf("101 preflights through 3 gateways: %d reached the site, want at most %d (preflight_limit 10/m)", reached, bound)
	}
	t.Logf("101 preflights through 3 gateways in %v: %d reached the site", time.Since(start), site.preflight.Load())

	// The question asked first goes to the site again once the pace allows
	// (within 6 s), so the cache holds a fresh answer when Redis stops.
	waitFor(t, 20*time.Second, func() bool {
		n := site.preflight.Load()
		preflightReq(t, bases[0], "/events/checkout", "https://app.example.net")
		return site.preflight.Load() > n
	})
	srv.Stop()
	before := site.preflight.Load()
	for i := range 30 {
		res := preflightReq(t, bases[i%3], fmt.Sprintf("/events/down/%d", i), "https://other.example")
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("a new preflight with the store down: %d (Retry-After %q), want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	if again := preflightReq(t, bases[0], "/events/checkout", "https://app.example.net"); again.StatusCode != http.StatusNoContent ||
		again.Header.Get("Access-Control-Allow-Origin") != "https://app.example.net" {
		t.Fatalf("a question asked lately, with the store down: %d %v, want the site's answer replayed", again.StatusCode, again.Header)
	}
	if n := site.preflight.Load() - before; n != 0 {
		t.Fatalf("%d preflights reached the site while the store was down, want none", n)
	}
}
