package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// joinAnswer is what a visitor's request was told.
type joinAnswer struct {
	State    string `json:"state"`
	Position int64  `json:"position"`
	Ticket   int64  `json:"ticket"`
	at       time.Time
}

// TestJoins_BatchedThroughThreeGateways: in a room with `join: batched`,
// full, N newcomers join through three gateways on one Redis, then poll
// twice (the first return queues the place, the tick writes it, the next
// poll picks it up) and once more elsewhere. No first request runs
// decide.lua (Redis runs no ZSCORE, which every Decide of a newcomer
// does; place.lua looks visitors up with ZMSCORE), the joins cost Redis
// at most 0.2 commands each beyond the ticks' own (a script's own
// commands counted, as INFO commandstats does), numbers follow arrival
// across gateways to within a tick, no visitor's position ever grows,
// the line ends in ticket order with exact positions, and max_active
// holds. The page asks again every 5 s, so a ticket may take 30 s to
// come back (waitroom.PlaceWithin): a busy machine under -race takes
// seconds for each round of requests.
func TestJoins_BatchedThroughThreeGateways(t *testing.T) {
	srv := redistest.Start(t) // its own server: the count is this test's
	_, site := newUpstream(t)
	// A tick of 3 s: a gateway's batch costs Redis about 20 commands a
	// tick whatever it holds (a block reserved, the places written, the
	// tail released), so the share of each join is that over the joins a
	// tick brings, a hundred or two a gateway here (under -race on two
	// shared cores), thousands in a spike (docs/scale.md).
	const tick = 3 * time.Second
	const maxActive = 3
	room := fmt.Sprintf("    max_active: %d\n    session_ttl: 10m\n    tick: %s\n    abandon_after: 10m\n"+
		"    join_limit: unlimited\n    join: batched\n    page: { refresh: 5s }", maxActive, tick)
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	cfg = strings.Replace(cfg, ", dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms", "", 1)
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	c := benchClient()
	var mu sync.Mutex
	ask := func(url, cookie string) (joinAnswer, string, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := c.Do(req)
		if err != nil {
			return joinAnswer{}, cookie, err
		}
		defer res.Body.Close()
		for _, ck := range res.Cookies() {
			if strings.HasPrefix(ck.Name, "waitroom_") {
				cookie = ck.Name + "=" + ck.Value
			}
		}
		var a joinAnswer
		if res.Header.Get("Waitroom-State") == "" && res.StatusCode == http.StatusOK {
			a.State = "admitted" // the site's page, not the gate's answer
			return a, cookie, nil
		}
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			return a, cookie, fmt.Errorf("%s: %d, %v", url, res.StatusCode, err)
		}
		a.at = time.Now()
		return a, cookie, nil
	}
	// The room fills through the store (nobody waits: Decide lets them in
	// at once), then every gateway's tick sees it full.
	for i := range maxActive {
		if a, _, err := ask(bases[0]+"/events/x", ""); err != nil || a.State != "admitted" {
			t.Fatalf("visitor %d filling the room: %+v, %v", i, a, err)
		}
	}
	time.Sleep(tick + tick/2)

	const n = 3000
	cookies := make([]string, n)
	told := make([][]joinAnswer, n)
	// run has each visitor make a request through gateway gw(i), 16 at a
	// time, and checks and records the answer.
	run := func(path string, gw func(i int) int, check func(i int, a joinAnswer) error) {
		var failed atomic.Value
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for failed.Load() == nil {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					mu.Lock()
					ck := cookies[i]
					mu.Unlock()
					a, ck, err := ask(bases[gw(i)%3]+path, ck)
					if err == nil {
						err = check(i, a)
					}
					if err == nil && len(told[i]) > 0 {
						if last := told[i][len(told[i])-1]; a.Position > last.Position {
							err = fmt.Errorf("visitor %d: position %d after %d", i, a.Position, last.Position)
						}
					}
					if err != nil {
						failed.CompareAndSwap(nil, err)
						return
					}
					mu.Lock()
					cookies[i], told[i] = ck, append(told[i], a)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if err := failed.Load(); err != nil {
			t.Fatal(err)
		}
	}
	waiting := func(i int, a joinAnswer) error {
		if a.State != "waiting" || a.Position < 1 {
			return fmt.Errorf("visitor %d: %+v, want waiting", i, a)
		}
		return nil
	}
	rc := &redisCmds{srv: srv}
	count := func() int64 {
		c, s := rc.read(t)
		return c + s
	}
	// The ticks' own cost, measured over as many ticks as the joins run.
	i0, icpu0, idleStart := count(), redisCPU(t, srv), time.Now()
	time.Sleep(3 * tick)
	idleFor := time.Since(idleStart).Seconds()
	idle, idleCPU := float64(count()-i0)/idleFor, float64(redisCPU(t, srv)-icpu0)/idleFor

	c0, z0, cpu0, start := count(), redisCalls(t, srv, "zscore"), redisCPU(t, srv), time.Now()
	run("/events/x", func(i int) int { return i }, func(i int, a joinAnswer) error {
		if err := waiting(i, a); err != nil || a.Ticket <= 0 {
			return fmt.Errorf("newcomer %d: %+v, want waiting with a number", i, a)
		}
		return nil
	})
	if got := redisCalls(t, srv, "zscore") - z0; got != 0 {
		t.Errorf("%d newcomers' first requests made Redis run ZSCORE %d times (a Decide each), want none", n, got)
	}
	joined := time.Now()
	// Each comes back through the next gateway (queued there), then again
	// after that gateway's tick, which picks its place up.
	run("/.waitroom/status?room=concert", func(i int) int { return i + 1 }, waiting)
	time.Sleep(tick + tick/2)
	run("/.waitroom/status?room=concert", func(i int) int { return i + 1 }, waiting)
	total, el := count()-c0, time.Since(start)
	cpu := redisCPU(t, srv) - cpu0
	if got := redisCalls(t, srv, "zscore") - z0; got != 0 {
		t.Errorf("joins and their places made Redis run ZSCORE %d times (a Decide each), want none", got)
	}
	per := (float64(total) - idle*el.Seconds()) / n
	cpuPer := time.Duration((float64(cpu) - idleCPU*el.Seconds()) / n)
	t.Logf("%d joins placed in %v: %d Redis commands and scripts (%.4f a join), the ticks alone %.0f a second; %.4f a join beyond the ticks'; Redis CPU %v (%v a join), %v a join beyond the ticks'",
		n, el.Round(time.Millisecond), total, float64(total)/n, idle, per, cpu.Round(time.Millisecond), (cpu / n).Round(10*time.Nanosecond),
		cpuPer.Round(10*time.Nanosecond))
	if per > 0.2 {
		t.Errorf("%.4f Redis commands a join beyond the ticks', want at most 0.2", per)
	}

	// Numbers follow arrival across gateways to within a tick (and a
	// little for a busy machine's answers).
	first := make([]joinAnswer, n)
	for i := range n {
		first[i] = told[i][0]
	}
	order := slices.Clone(first)
	slices.SortFunc(order, func(a, b joinAnswer) int { return a.at.Compare(b.at) })
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if order[j].at.Sub(order[i].at) > tick+time.Second && order[j].Ticket < order[i].Ticket {
				t.Fatalf("ticket %d answered %v after ticket %d: out of arrival order by more than a tick",
					order[j].Ticket, order[j].at.Sub(order[i].at), order[i].Ticket)
			}
		}
	}
	_ = joined
	// Placed: the line is the tickets in order, each position exact, and
	// again through a third gateway, from its view or the store.
	byTicket := slices.Clone(first)
	slices.SortFunc(byTicket, func(a, b joinAnswer) int { return int(a.Ticket - b.Ticket) })
	rank := make(map[int64]int64, n)
	for k, a := range byTicket {
		rank[a.Ticket] = int64(k + 1)
	}
	exact := func(i int, a joinAnswer) error {
		if err := waiting(i, a); err != nil {
			return err
		}
		if want := rank[first[i].Ticket]; a.Ticket != first[i].Ticket || a.Position != want {
			return fmt.Errorf("visitor %d (ticket %d): %+v, want position %d", i, first[i].Ticket, a, want)
		}
		return nil
	}
	// A tick that ran late on a busy machine (or ran out of its time and
	// kept its places for the next) leaves some places unpicked: their
	// visitors are told the bound again, never more, until the place is
	// picked up.
	deadline := time.Now().Add(time.Minute)
	for {
		late := 0
		for i := range n {
			if exact(i, told[i][len(told[i])-1]) != nil {
				late++
			}
		}
		if late == 0 {
			break
		}
		if time.Now().After(deadline) {
			for i := range n {
				if err := exact(i, told[i][len(told[i])-1]); err != nil {
					t.Fatalf("%d places not picked up within a minute: %v", late, err)
				}
			}
		}
		t.Logf("%d places not picked up yet: polling again", late)
		time.Sleep(tick)
		run("/.waitroom/status?room=concert", func(i int) int { return i + 1 }, waiting)
	}
	time.Sleep(tick + tick/2)
	run("/.waitroom/status?room=concert", func(i int) int { return i + 2 }, exact)
	if active, err := srv.Client().Eval(t.Context(), "return #redis.call('KEYS', '*:active')", nil).Int(); err != nil || active != 1 {
		t.Fatalf("active keys: %d, %v", active, err)
	}
	keys, _ := srv.Client().Keys(t.Context(), "*:active").Result()
	if in, err := srv.Client().ZCard(t.Context(), keys[0]).Result(); err != nil || in != maxActive {
		t.Fatalf("sessions inside: %d, %v; want max_active %d", in, err, maxActive)
	}
}

// TestJoins_BatchedFloodTakesNothing: a flood of first requests from one
// network that never come back, through three gateways of a batched room
// with a join_limit, takes numbers (which the places behind count as
// pending) for at most each gateway's pending allowance per network, the
// rest loose; it writes no place, runs no Decide, and spends none of the
// network's quota: a visitor of that network who comes back is placed.
func TestJoins_BatchedFloodTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	const tick = 300 * time.Millisecond
	room := fmt.Sprintf("    max_active: 0\n    tick: %s\n    abandon_after: 10m\n    join_limit: 3/m\n    join: batched\n    page: { refresh: 1s }", tick)
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "")
	var bases []string
	for range 3 {
		_, base := startGateway(t, cfg)
		bases = append(bases, base)
	}
	c := benchClient()
	ask := func(url, cookie string) (joinAnswer, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		for _, ck := range res.Cookies() {
			if strings.HasPrefix(ck.Name, "waitroom_") {
				cookie = ck.Name + "=" + ck.Value
			}
		}
		var a joinAnswer
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			t.Fatalf("%s: %d, %v", url, res.StatusCode, err)
		}
		return a, cookie
	}
	// The room's counter is made by a first join through the store; then
	// every gateway's tick has seen the room.
	if a, _ := ask(bases[0]+"/events/x", ""); a.State != "waiting" {
		t.Fatalf("first visitor: %+v, want waiting", a)
	}
	time.Sleep(3 * tick)
	z0 := redisCalls(t, srv, "zscore")
	const flood = 300
	numbered := 0
	for i := range flood {
		a, _ := ask(bases[i%3]+"/events/x", "")
		if a.State != "waiting" {
			t.Fatalf("flood request %d: %+v, want a ticket", i, a)
		}
		if a.Ticket > 0 {
			numbered++
		}
	}
	if bound := 3 * waitroom.PendingPerNetwork; numbered > bound {
		t.Fatalf("%d of %d flood requests of one network took a number, want at most %d (3 gateways × PendingPerNetwork)", numbered, flood, bound)
	}
	if got := redisCalls(t, srv, "zscore") - z0; got != 0 {
		t.Fatalf("the flood ran %d ZSCOREs (a Decide each), want none", got)
	}
	time.Sleep(3 * tick)
	// A visitor of the flooded network who comes back is placed: the
	// flood spent none of the quota.
	a, ck := ask(bases[0]+"/events/x", "")
	if a.State != "waiting" {
		t.Fatalf("a visitor after the flood: %+v", a)
	}
	// The first visitor never came back either: the line is this one.
	queued := func() int64 {
		keys, _ := srv.Client().Keys(t.Context(), "*:queue").Result()
		if len(keys) == 0 {
			return 0
		}
		n, _ := srv.Client().ZCard(t.Context(), keys[0]).Result()
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, ck = ask(bases[1]+"/.waitroom/status?room=concert", ck)
		if a.State != "waiting" {
			t.Fatalf("a visitor after the flood, coming back: %+v, want waiting (not limited)", a)
		}
		if queued() >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a visitor after the flood was not placed within 10s: %+v", a)
		}
		time.Sleep(tick)
	}
	if n := queued(); n != 1 {
		t.Fatalf("%d places in line after the flood, want 1 (the visitor who came back)", n)
	}
}
