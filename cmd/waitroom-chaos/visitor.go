package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"sync"
	"time"
)

// poll is one answer of the gateway to a visitor in line.
type poll struct {
	sent, recv time.Duration
	state      string
	position   int
	ticket     int64
	join       bool // the answer to a join: its ticket holds no place yet
}

// admission is one time a visitor was let in: the gateway decided it after
// lo (the last request answered "waiting" was sent then, or the join was)
// and no later than hi (the answer that said so was received).
type admission struct {
	lo, hi   time.Duration
	straight bool // the join itself went through to the site
}

// failure is an answer that was neither the site nor the gateway's JSON:
// a 5xx, another error status, or no answer at all.
type failure struct {
	at     time.Duration // sent
	status int           // 0: no answer (connection refused, timeout)
	dead   bool          // to a gateway a fault killed: the balancer's problem, not the gateway's
}

// Visitor is one person in the line, as the checker saw it: its own
// cookie jar, its own clock readings. Its fields are written by its own
// goroutine only, and read after Run returns.
type Visitor struct {
	ID       int
	joinSent time.Duration
	joined   bool // it got a ticket or was let in
	polls    []poll
	admits   []admission
	sentBack int  // admitted, then answered "waiting" by the site's path
	lost     bool // its ticket was forgotten ("none"): it joined again
	released bool
	maxGap   time.Duration // the longest time between two requests while in line
	failures []failure
}

// statusJSON is the part of the gateway's JSON the checker reads.
type statusJSON struct {
	State        string `json:"state"`
	Position     int    `json:"position"`
	RefreshAfter int    `json:"refresh_after"`
	Ticket       int64  `json:"ticket"`
}

// crowd sends the visitors through the gateways, each request to one of
// the live gateways at random, as a load balancer would.
type crowd struct {
	clock     *clock
	gateways  []*Gateway
	transport *http.Transport
	room      Room
}

func newCrowd(c *clock, gws []*Gateway) *crowd {
	return &crowd{clock: c, gateways: gws, transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second}}
}

// pick is a live gateway at random; a killed one gets nothing.
func (c *crowd) pick() *Gateway {
	for {
		g := c.gateways[rand.IntN(len(c.gateways))]
		if !g.dead.Load() {
			return g
		}
	}
}

// answer is one response, read to its end.
type answer struct {
	status     int
	state      string // Waitroom-State: the gateway's own answer; "": the site's
	released   bool
	body       []byte
	sent, recv time.Duration
}

func (c *crowd) do(ctx context.Context, v *Visitor, cl *http.Client, path string, h map[string]string) (*answer, bool) {
	g := c.pick()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+path, nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set(visitorHeader, strconv.Itoa(v.ID))
	for k, val := range h {
		req.Header.Set(k, val)
	}
	a := &answer{sent: c.clock.now()}
	resp, err := cl.Do(req)
	if err == nil {
		a.body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
	}
	a.recv = c.clock.now()
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) {
			v.failures = append(v.failures, failure{at: a.sent, dead: g.dead.Load()})
		}
		return nil, false
	}
	a.status, a.state, a.released = resp.StatusCode, resp.Header.Get("Waitroom-State"), resp.Header.Get(releasedHeader) == "1"
	if a.status >= 300 && a.status != http.StatusTooManyRequests {
		v.failures = append(v.failures, failure{at: a.sent, status: a.status})
		return nil, false
	}
	return a, true
}

// Live is the visitor's whole visit: join, poll at the pace the gateway
// asks, use the site once in until the site releases it, until ctx ends.
func (c *crowd) Live(ctx context.Context, v *Visitor) {
	jar, _ := cookiejar.New(nil) // cookies ignore ports: one jar serves all three gateways
	w := &walk{crowd: c, v: v, cl: &http.Client{Transport: c.transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	a := w.join(ctx, "1")
	joined := true // a is the answer to a join
	for a != nil && ctx.Err() == nil {
		fromJoin := joined
		joined = false
		if a.state == "" { // the site answered
			w.in(a)
			if a.released {
				v.released = true
				return
			}
			if !sleep(ctx, 300*time.Millisecond) {
				return
			}
			a = w.site(ctx, "/events/page")
			continue
		}
		var s statusJSON
		_ = json.Unmarshal(a.body, &s)
		if w.inside && (s.State == "waiting" || s.State == "none") {
			w.inside = false // the site's path answered by the line: the admission was lost
			v.sentBack++
		}
		switch s.State {
		case "admitted":
			w.admitted(a)
			a = w.site(ctx, "/events/page")
			continue
		case "waiting", "paused":
			w.lastWait = a.sent
		case "none":
			// The page reloads and joins again. Only a ticket seen placed
			// was forgotten; a join answered "hold" (no store, so no
			// ticket) or a ticket never brought back is not a place.
			v.lost = v.lost || w.placed
		}
		w.placed = w.placed || (s.State == "waiting" && !fromJoin)
		w.ticketed = w.ticketed || s.Ticket > 0
		v.polls = append(v.polls, poll{sent: a.sent, recv: a.recv, state: s.State, position: s.Position, ticket: s.Ticket, join: fromJoin})
		if s.State == "none" {
			a, joined = w.join(ctx, "0"), true
			w.ticketed, w.placed = false, false
			continue
		}
		a = w.poll(ctx, a.sent, time.Duration(max(1, s.RefreshAfter))*time.Second)
	}
}

// walk is one visitor's state while it lives.
type walk struct {
	*crowd
	v        *Visitor
	cl       *http.Client
	inside   bool
	ticketed bool          // a ticket number was seen: the join that counts is done
	placed   bool          // a poll (not a join) was answered "waiting": the ticket holds a place
	lastWait time.Duration // sent: the last request answered "waiting" (lo of the next admission)
}

// epoch is the admission the next request to the site belongs to.
func (w *walk) epoch() string {
	if w.inside {
		return strconv.Itoa(len(w.v.admits))
	}
	return strconv.Itoa(len(w.v.admits) + 1)
}

// in notes a site answer: an admission, unless the visitor was inside.
func (w *walk) in(a *answer) {
	if !w.inside {
		w.v.admits = append(w.v.admits, admission{lo: max(w.lastWait, a.sent), hi: a.recv, straight: !w.v.joined})
		w.inside = true
	}
	w.v.joined = true
}

// admitted notes a status answer "admitted".
func (w *walk) admitted(a *answer) {
	if !w.inside {
		w.v.admits = append(w.v.admits, admission{lo: w.lastWait, hi: a.recv})
		w.inside = true
	}
}

// join asks for the room's page as a person typing its address, until an
// answer comes; join is "1" for the first, "0" for a join after a lost
// ticket. nil when the run ended.
func (w *walk) join(ctx context.Context, join string) *answer {
	for ctx.Err() == nil {
		if !w.ticketed {
			// The join that counts for order is the one that got the ticket.
			w.v.joinSent = w.clock.now()
		}
		if a, ok := w.do(ctx, w.v, w.cl, "/events/", map[string]string{epochHeader: w.epoch(), joinHeader: join}); ok {
			if a.state != "" {
				w.v.joined = true
				w.lastWait = a.sent
			}
			return a
		}
		if !sleep(ctx, time.Second) {
			break
		}
	}
	return nil
}

// site is one request to the site's path; a failure is retried on another
// gateway after a short pause. nil when the run ended.
func (w *walk) site(ctx context.Context, path string) *answer {
	for ctx.Err() == nil {
		if a, ok := w.do(ctx, w.v, w.cl, path, map[string]string{epochHeader: w.epoch()}); ok {
			return a
		}
		if !sleep(ctx, 300*time.Millisecond) {
			break
		}
	}
	return nil
}

// poll waits d as the page does, then asks for the visitor's standing; a
// failure is retried a second later, as the page backs off.
func (w *walk) poll(ctx context.Context, prev, d time.Duration) *answer {
	for sleep(ctx, d) {
		if a, ok := w.do(ctx, w.v, w.cl, "/.waitroom/status?room="+roomName, nil); ok {
			w.v.maxGap = max(w.v.maxGap, a.sent-prev)
			return a
		}
		d = time.Second
	}
	return nil
}

// sleep waits d or until ctx ends, saying whether the run goes on.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// arrive starts n visitors over spread, then one every gap until ctx ends,
// and returns once every visitor's goroutine has.
func (c *crowd) arrive(ctx context.Context, n int, spread, gap time.Duration) []*Visitor {
	var (
		wg  sync.WaitGroup
		all []*Visitor
	)
	start := func() {
		v := &Visitor{ID: len(all)}
		all = append(all, v)
		wg.Go(func() { c.Live(ctx, v) })
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		start()
		sleep(ctx, spread/time.Duration(max(n, 1)))
	}
	for sleep(ctx, gap) {
		start()
	}
	wg.Wait()
	return all
}
