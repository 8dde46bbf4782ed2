package main

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// A cookieless flood spread over 256 /56s of one /48, five never-returning
// requests each: a newcomer of another network is shown a position no
// more than twice the block's pending allowance (BlockFactor times
// PendingPerNetwork) behind where it would be without the flood, a few
// percent of the flood's 1,280, where a per-network allowance alone let
// every one of them count.
func TestFlood_BlockShownPositionBound(t *testing.T) {
	t.Parallel()
	parallelStores(t, func(t *testing.T, addr string) {
		_, site := newUpstream(t)
		bases := gateways(t, trustedConfig(site.URL, "    max_active: 0", addr), addr)
		c := &http.Client{Timeout: 10 * time.Second}
		const networks = 256
		flood := 0
		for n := range networks {
			for range waitroom.PendingPerNetwork {
				req, _ := http.NewRequest(http.MethodGet, bases[flood%len(bases)]+"/events/1", nil)
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("2001:db8:7:%x00::1", n))
				req.Header.Set("Accept", "application/json")
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				flood++
			}
		}
		v := newVisitor(t, bases[0])
		shown := v.from("198.51.100.1", http.MethodGet, "/events/1").position()
		most := 2 + 2*waitroom.PendingPerNetwork*waitroom.BlockFactor
		t.Logf("after %d never-returning requests from %d /56s of one /48, a newcomer is shown position %d (bound %d)", flood, networks, shown, most)
		if shown < 1 || shown > most {
			t.Errorf("a newcomer after a flood of %d from one /48: position %d, want 1 to %d", flood, shown, most)
		}
		if r := v.from("198.51.100.1", http.MethodGet, "/events/1"); r.state() != "waiting" || r.position() > shown {
			t.Errorf("the newcomer's ticket brought back: %d %v, want a place at %d or better", r.status, r.json, shown)
		}
	})
}
