package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// Redis restarted empty with max_active 1: a returning admitted visitor
// and a newcomer are never both served, whichever comes first, on one
// gateway or on two (the returning one through the gateway that served
// it, whose session cache may still vouch for it; the newcomer through
// the other). Before the fix both were: the newcomer went in at once on
// the empty store (nothing told it the data was lost, so the recovery
// grace started only at the first restore), and the session cache served
// the admitted visitor without asking the store, which then never knew
// the slot was taken.
func TestRedis_FullLossKeepsMaxActive(t *testing.T) {
	for _, order := range []string{"returning first", "newcomer first"} {
		for _, gateways := range []int{1, 2} {
			for _, cache := range []string{"1s", "0s"} {
				t.Run(fmt.Sprintf("%s/%d gateways/session_cache %s", order, gateways, cache), func(t *testing.T) {
					srv := redistest.Start(t)
					up, site := newUpstream(t)
					cfg := redisConfig(site.URL, "    max_active: 1\n    tick: 50ms", srv.Addr(), "closed", "")
					cfg = strings.Replace(cfg, "kind: redis", "kind: redis\n  session_cache: "+cache, 1)
					var bases []string
					var admins []*adminClient
					for range gateways {
						app, b := startGateway(t, cfg)
						bases = append(bases, b)
						admins = append(admins, newAdmin(t, app))
					}
					in := newVisitor(t, bases[0])
					if r := in.get("/events/1"); r.body != "site:/events/1" {
						t.Fatalf("first visitor: %d", r.status)
					}
					// Every gateway's tick saw the room with its visitor
					// inside: each knows the room had tickets.
					for _, a := range admins {
						waitFor(t, 10*time.Second, func() bool {
							_, m, _ := a.do("GET", "/admin/api/rooms/concert", "")
							return num(m, "active") == 1
						})
					}
					if err := srv.Restart(); err != nil {
						t.Fatal(err)
					}
					nc := newVisitor(t, bases[len(bases)-1])
					var rin, rnc reply
					if order == "returning first" {
						rin = in.get("/events/2")
						rnc = nc.get("/events/3")
					} else {
						rnc = nc.get("/events/3")
						rin = in.get("/events/2")
					}
					if rin.body == "site:/events/2" && rnc.body == "site:/events/3" {
						t.Fatalf("both served after the loss (max_active 1); site saw %v", up.visitors)
					}
					if rnc.body == "site:/events/3" || rnc.status >= 500 {
						t.Errorf("newcomer: %d %.40q, want held (the recovery grace)", rnc.status, rnc.body)
					}
					// Asked again (past any cache), the returning visitor is
					// inside: its slot was kept for it.
					waitFor(t, 10*time.Second, func() bool { return in.get("/events/4").body == "site:/events/4" })
					if r := nc.get("/events/5"); r.body == "site:/events/5" {
						t.Errorf("newcomer served beside the returning visitor")
					}
				})
			}
		}
	}
}
