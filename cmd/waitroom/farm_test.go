package main

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A bot farm that does all the work, played through real gateways: what
// the work may buy is bounded by a count, never by a price alone.

// farmRoom asks for little work (8 to 12 bits, so the run's time goes to
// requests, as a GPU's would) under joinLimit, with nobody let in.
func farmRoom(joinLimit string) string {
	return "    max_active: 0\n    tick: 50ms\n    challenge: pow\n    challenge_bits: 8\n    challenge_max_bits: 12\n" +
		"    join_limit: " + joinLimit + "\n    page: { refresh: 1s }"
}

// farmRun is what a farm took: places per client, and refusals.
type farmRun struct {
	placed  map[string]int
	total   int
	limited int
	held    int // answers "hold": the store did not answer in time
	elapsed time.Duration
}

// farm plays a farm for d, and on until it has taken ceiling places and
// met a refusal (a busy machine solves and asks slower; two minutes at
// most): from each client in turn, through each gateway
// in turn, a fresh browser asks for a place, solves its challenge as docs/challenge.md says
// (challenge.Solve) and comes back with the answer. A refusal must be 429
// with Retry-After and no ticket; the farm does not wait for it.
func farm(t *testing.T, bases, clients []string, d time.Duration, ceiling int) farmRun {
	t.Helper()
	run := farmRun{placed: map[string]int{}}
	start := time.Now()
	going := func() bool {
		met := run.total >= ceiling && run.limited > 0
		return time.Since(start) < d || !met && time.Since(start) < 2*time.Minute
	}
	for i := 0; going(); i++ {
		ip := clients[i%len(clients)]
		v := newVisitor(t, bases[i%len(bases)])
		r := v.from(ip, http.MethodGet, "/events/1")
		if r.status == http.StatusTooManyRequests {
			if retry, _ := strconv.Atoi(r.header.Get("Retry-After")); retry < 1 || r.state() != "limited" || r.header.Get("Set-Cookie") != "" {
				t.Fatalf("a refusal: Retry-After %q, Set-Cookie %q, %v", r.header.Get("Retry-After"), r.header.Get("Set-Cookie"), r.json)
			}
			run.limited++
			time.Sleep(time.Millisecond)
			continue
		}
		if r.state() == "hold" { // a store call outlived its timeout on a busy machine: ask again
			run.held++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		prefix, bits := challengeOf(t, r)
		r = v.from(ip, http.MethodGet, "/events/1", waitroom.ChallengeHeader, prefix+":"+challenge.Solve(prefix, bits))
		if r.state() == "waiting" {
			run.placed[ip]++
			run.total++
		}
	}
	run.elapsed = time.Since(start)
	return run
}

// allowance is the most a GCRA of burst at once, then n per minute, lets
// through in elapsed (one more for the interval that starts inside it).
func allowance(burst, n int, elapsed time.Duration) int {
	return burst + int(math.Ceil(float64(n)*elapsed.Minutes())) + 1
}

// A farm that solves every challenge from one /24 (through three gateways
// on one Redis, or one on the memory store) takes no more places
// than its join_limit pace plus the challenge's bounded burst
// (ChallengeJoinFactor times join_limit at once), whatever work it does;
// past that it gets 429 with Retry-After and no number.
func TestFarm_WorkNeverLiftsTheJoinCap(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		cfg := trustedConfig(site.URL, farmRoom("60/m"), addr)
		app, base := startGateway(t, cfg)
		bases := []string{base}
		if addr != "" { // three instances share the ceiling
			_, b := startGateway(t, cfg)
			_, c := startGateway(t, cfg)
			bases = append(bases, b, c)
		}
		burst := waitroom.ChallengeJoinFactor * 60
		run := farm(t, bases, []string{"203.0.113.7", "203.0.113.8", "203.0.113.200"}, 5*time.Second, burst)
		most := allowance(burst, 60, run.elapsed)
		t.Logf("a farm from one /24: %d places and %d refusals in %v (%.0f places a minute); allowance %d",
			run.total, run.limited, run.elapsed.Round(time.Millisecond), float64(run.total)/run.elapsed.Minutes(), most)
		if run.total > most {
			t.Errorf("the farm took %d places in %v, more than the ceiling allows (%d)", run.total, run.elapsed, most)
		}
		if run.total < burst || run.limited == 0 {
			t.Errorf("the farm took %d places with %d refusals: it never met the ceiling (%d at once)", run.total, run.limited, burst)
		}
		waitFor(t, 2*time.Second, func() bool {
			_, m, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", "")
			return num(m, "waiting") == run.total
		})
	})
}

// The same farm spread over 24 /56s of one /48 meets the block's ceiling,
// BlockFactor times a network's: fewer places than its /56s would take
// one by one. A join_limit of 6/m keeps the run short: 12 at once per
// /56, 192 per /48.
func TestFarm_BlockCeilingHolds(t *testing.T) {
	stores(t, func(t *testing.T, _ *redistest.Server, addr string) {
		_, site := newUpstream(t)
		cfg := trustedConfig(site.URL, farmRoom("6/m"), addr)
		_, base := startGateway(t, cfg)
		bases := []string{base}
		if addr != "" { // two instances share the ceilings
			_, b := startGateway(t, cfg)
			bases = append(bases, b)
		}
		var clients []string
		for i := range 24 {
			clients = append(clients, fmt.Sprintf("2001:db8:7:%02x00::1", i))
		}
		burst := waitroom.ChallengeJoinFactor * 6
		run := farm(t, bases, clients, 5*time.Second, burst*waitroom.BlockFactor)
		most := allowance(burst*waitroom.BlockFactor, 6*waitroom.BlockFactor, run.elapsed)
		t.Logf("a farm over 24 /56s of one /48: %d places and %d refusals in %v; block allowance %d",
			run.total, run.limited, run.elapsed.Round(time.Millisecond), most)
		if run.total > most {
			t.Errorf("the farm took %d places, more than its /48's ceiling allows (%d)", run.total, most)
		}
		if run.total < burst*waitroom.BlockFactor {
			t.Errorf("the farm took %d places: it never met the block's ceiling (%d at once)", run.total, burst*waitroom.BlockFactor)
		}
		for ip, n := range run.placed {
			if n > allowance(burst, 6, run.elapsed) {
				t.Errorf("%s took %d places, more than one /56's ceiling", ip, n)
			}
		}
	})
}
