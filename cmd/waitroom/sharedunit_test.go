package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sharedCarrier lists 100.64.0.0/10 (a carrier's NAT) in cfg's
// server.shared_networks.
func sharedCarrier(cfg string) string {
	return strings.Replace(cfg, "server: { trusted_proxies: [127.0.0.1/32] }",
		"server: { trusted_proxies: [127.0.0.1/32], shared_networks: [100.64.0.0/10] }", 1)
}

// shared_networks widens join_limit only, which the block's ceiling caps:
// preflight_limit and create_limit have no other ceiling, so inside a
// shared range they stay keyed on the /24, and a client rotating through
// the addresses of one /24 of the carrier meets them as one network.
func TestGuard_SharedNetworksKeepPreflightAndCreateLimits(t *testing.T) {
	site := newCORSSite(t)
	_, base := startGateway(t, sharedCarrier(trustedConfig(site.srv.URL, "    max_active: 0\n    preflight_limit: 5/m", "")))
	refused := 0
	for i := range 30 {
		res := preflightReq(t, base, fmt.Sprintf("/events/%d", i), "https://evil.example", "X-Forwarded-For", fmt.Sprintf("100.64.1.%d", 10+i))
		if res.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	t.Logf("30 preflights from 30 addresses of one shared /24 at 5/m: %d refused", refused)
	if refused < 30-5-2 { // 5 at once, one more per 12 s the loop might take
		t.Errorf("preflights from rotating addresses of one shared /24: %d of 30 refused, want at least 23", refused)
	}

	_, up := newUpstream(t)
	cfg, _ := junkConfig(up.URL, "    max_active: 0\n    create_limit: 2/m", "")
	_, tbase := startGateway(t, sharedCarrier(cfg))
	plain := &http.Client{Timeout: 10 * time.Second}
	limited := 0
	for i := range 12 {
		code, _ := junkGet(t, plain, fmt.Sprintf("%s/events/rot%d/", tbase, i), fmt.Sprintf("100.64.1.%d", 10+i))
		if code == http.StatusTooManyRequests {
			limited++
		}
	}
	t.Logf("12 new events from 12 addresses of one shared /24 at create_limit 2/m: %d refused", limited)
	if limited < 12-2-1 {
		t.Errorf("new events from rotating addresses of one shared /24: %d of 12 refused, want at least 9", limited)
	}
}
