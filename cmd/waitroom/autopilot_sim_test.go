package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The simulated site of the autopilot's tests (docs/autopilot.md): a pool
// of workers, each request holding one for the service time, so workers /
// service time requests a second; beyond that requests wait for a worker,
// and past a bound on the waiting they get 503 at once. Behind it, visitors
// who once admitted ask for a page every period (open loop: on time
// whatever the last answer took) for their session, then leave with
// "Waitroom-Command: release", and more of them come than the site can
// serve. The figures are the site's own: what it served and how long each
// answer took, from the request's arrival.

// simSite is the site; its workers and service time can change mid-run.
type simSite struct {
	mu       sync.Mutex
	cond     *sync.Cond
	workers  int
	service  time.Duration
	busy     int
	waiting  int
	maxQueue int

	rec simRecord
	// limitNow, when set, is the highest limit any gateway has in effect
	// now; the site reads it at each visit's first request (see
	// simRecord.overLimit).
	limitNow func() int
}

// simRecord is what the site saw, per answer, and per admission (the
// visitor's X-Sim-Visitor header).
type simRecord struct {
	mu     sync.Mutex
	hits   []simHit
	visits map[int64]*simVisit
}

// simVisit is one admission as the site saw it, as the chaos checker's
// visit (cmd/waitroom-chaos): from its first request's arrival to the
// answer of its release, or its last answer when it was not released.
// The gateway's session began before the first request and ends after the
// release passed it, so each visit lies within a session.
type simVisit struct {
	first, last, released time.Time
	// since is when the visitor last heard it was not admitted (its last
	// waiting poll sent, or its join): its admission was decided after.
	since time.Time
	// limit is the highest limit any gateway had in effect at first
	// (simSite.limitNow; -1 when not read).
	limit int
}

type simHit struct {
	at   time.Time // when it was answered
	took time.Duration
	code int
}

func newSimSite(t *testing.T, workers int, service time.Duration, maxQueue int) (*simSite, string) {
	s := &simSite{workers: workers, service: service, maxQueue: maxQueue}
	s.cond = sync.NewCond(&s.mu)
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// set changes the site's capacity.
func (s *simSite) set(workers int, service time.Duration) {
	s.mu.Lock()
	s.workers, s.service = workers, service
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *simSite) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id, _ := strconv.ParseInt(r.Header.Get("X-Sim-Visitor"), 10, 64)
	since, _ := strconv.ParseInt(r.Header.Get("X-Sim-Since"), 10, 64)
	if s.rec.visit(id, start, false) && s.limitNow != nil {
		s.rec.limitAtFirst(id, s.limitNow())
	}
	s.rec.since(id, time.Unix(0, since))
	defer func() { s.rec.visit(id, time.Now(), false) }()
	if strings.HasSuffix(r.URL.Path, "/done") {
		w.Header().Set("Waitroom-Command", "release")
		fmt.Fprint(w, "site:bye")
		s.rec.visit(id, time.Now(), true)
		return
	}
	s.mu.Lock()
	if s.busy >= s.workers && s.waiting >= s.maxQueue {
		s.mu.Unlock()
		s.rec.add(start, http.StatusServiceUnavailable)
		http.Error(w, "site busy", http.StatusServiceUnavailable)
		return
	}
	s.waiting++
	for s.busy >= s.workers {
		s.cond.Wait()
	}
	s.waiting--
	s.busy++
	service := s.service
	s.mu.Unlock()
	time.Sleep(service)
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
	s.cond.Signal()
	s.rec.add(start, http.StatusOK)
	fmt.Fprint(w, "site:page")
}

// visit notes a request of visitor id (0: none) at, its release when
// released.
// since notes when visitor id last heard it was not admitted, at its
// visit's first request.
func (r *simRecord) since(id int64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v := r.visits[id]; v != nil && v.since.IsZero() {
		v.since = at
	}
}

// limitAtFirst notes the limit in effect at visitor id's first request.
func (r *simRecord) limitAtFirst(id int64, limit int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v := r.visits[id]; v != nil {
		v.limit = limit
	}
}

// visit reports whether at is visitor id's first request.
func (r *simRecord) visit(id int64, at time.Time, released bool) (first bool) {
	if id == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.visits == nil {
		r.visits = make(map[int64]*simVisit)
	}
	v := r.visits[id]
	if v == nil {
		v = &simVisit{first: at, limit: -1}
		r.visits[id] = v
		first = true
	}
	if at.After(v.last) {
		v.last = at
	}
	if released && v.released.IsZero() {
		v.released = at
	}
	return first
}

// simEvent is a visit's start (+1) or end (-1) at the site.
type simEvent struct {
	at    time.Time
	step  int
	since time.Time // a start's: its visit's since
	limit int       // a start's: the limit in effect then (simVisit.limit)
}

// events are the visits' starts and ends in time order, as the chaos
// checker's maxInside sorts them: at equal times an end goes first (both
// live at once is not proved).
func (r *simRecord) events() []simEvent {
	r.mu.Lock()
	ev := make([]simEvent, 0, 2*len(r.visits))
	for _, v := range r.visits {
		end := v.last
		if !v.released.IsZero() {
			end = v.released
		}
		ev = append(ev, simEvent{v.first, +1, v.since, v.limit}, simEvent{end, -1, time.Time{}, 0})
	}
	r.mu.Unlock()
	slices.SortFunc(ev, func(a, b simEvent) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.step, b.step)) })
	return ev
}

// overLimit checks the chaos checker's invariant (maxInside: never more
// admissions live at the site at once than max_active) with a limit that
// moves: when an admission's first request reaches the site at t, the
// admissions live there are at most the sessions inside at t, which are at
// most the limit the last of them was admitted under. That admission was
// decided after this visitor last heard it was waiting (since, as the
// chaos checker's Resolution reads polls), and a gateway shows a limit
// the store decided within slack; limit(from, to) is the highest limit
// any gateway showed over [since-slack, t], and the limit in effect at t
// (simVisit.limit, read at that request) counts too: a gateway adopts a
// raised limit at its tick and admits under it in the same tick
// (Admitter.Tick: autopilot, then Admit), so a visitor who polls just
// after can reach the site before the next sample (every 250ms) shows
// the raised limit. Samples alone, ending at t, missed it: that was the
// check's false "over the limit" (13 live against 12 with the store
// holding 14 inside under one gateway's 14). It answers how many
// admissions found more live than that, and the worst.
func (r *simRecord) overLimit(slack time.Duration, limit func(from, to time.Time) int) (n int, worst string) {
	live, most := 0, 0
	for _, e := range r.events() {
		live += e.step
		if e.step < 0 || e.since.IsZero() {
			continue
		}
		if l := max(limit(e.since.Add(-slack), e.at), e.limit); live > l {
			n++
			if live-l > most {
				most, worst = live-l, fmt.Sprintf("%d live at %s, the highest limit from %v before (its last waiting poll) %d", live, e.at.Format("15:04:05.000"), e.at.Sub(e.since).Round(time.Millisecond), l)
			}
		}
	}
	return n, worst
}

// maxLive is the most admissions live at the site at once in [from, to).
func (r *simRecord) maxLive(from, to time.Time) int {
	live, most := 0, 0
	for _, e := range r.events() {
		live += e.step
		if !e.at.Before(from) && e.at.Before(to) {
			most = max(most, live)
		}
	}
	return most
}

func (r *simRecord) add(start time.Time, code int) {
	now := time.Now()
	r.mu.Lock()
	r.hits = append(r.hits, simHit{at: now, took: now.Sub(start), code: code})
	r.mu.Unlock()
}

// simFigures are the site's figures over a span.
type simFigures struct {
	served    int           // answered 200
	perSecond float64       // 200s a second
	p90       time.Duration // of the 200s
	share503  float64       // of every answer
}

func (f simFigures) String() string {
	return fmt.Sprintf("served %.1f/s, p90 %v, 503 share %.1f%%", f.perSecond, f.p90.Round(time.Millisecond), 100*f.share503)
}

// figures over [from, to).
func (r *simRecord) figures(from, to time.Time) simFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	var took []time.Duration
	var all, busy int
	for _, h := range r.hits {
		if h.at.Before(from) || !h.at.Before(to) {
			continue
		}
		all++
		if h.code == http.StatusServiceUnavailable {
			busy++
			continue
		}
		took = append(took, h.took)
	}
	f := simFigures{served: len(took), perSecond: float64(len(took)) / to.Sub(from).Seconds()}
	if len(took) > 0 {
		slices.Sort(took)
		f.p90 = took[(len(took)*9+9)/10-1]
	}
	if all > 0 {
		f.share503 = float64(busy) / float64(all)
	}
	return f
}

// simCrowd keeps n visitors coming to room behind the gateways (spread
// over them, a visitor keeping to one): each takes a ticket, polls its
// status every poll until admitted, asks for a page every period for
// session, then leaves (/done) and a new visitor takes its place.
type simCrowd struct {
	gateways []string
	prefix   string // the room's route, "/shop/"
	room     string
	period   time.Duration
	session  time.Duration
	poll     time.Duration
	inside   atomic.Int64
	waiting  atomic.Int64
	failed   atomic.Int64 // transport errors (a visitor's own timeout)
	ids      atomic.Int64 // the last admission's X-Sim-Visitor

	once sync.Once
	// transport is every visitor's: http.DefaultTransport keeps two idle
	// connections a host, so a crowd of them would open (and the gateway
	// accept) a new connection for most requests, CPU that a busy machine
	// then takes from the site's timing.
	transport *http.Transport
}

func (c *simCrowd) run(ctx context.Context, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Arrivals spread over the first second.
			if !sleepCtx(ctx, time.Duration(i)*time.Second/time.Duration(n)) {
				return
			}
			for ctx.Err() == nil {
				c.visit(ctx, c.gateways[i%len(c.gateways)])
			}
		})
	}
	return &wg
}

func (c *simCrowd) visit(ctx context.Context, base string) {
	c.once.Do(func() {
		c.transport = http.DefaultTransport.(*http.Transport).Clone()
		c.transport.MaxIdleConnsPerHost = 256
	})
	jar, _ := cookiejar.New(nil)
	id := strconv.FormatInt(c.ids.Add(1), 10)
	cl := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: c.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var since atomic.Int64 // when it last heard it was waiting
	since.Store(time.Now().UnixNano())
	get := func(path string, accept string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return 0, ""
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		req.Header.Set("X-Sim-Visitor", id)
		req.Header.Set("X-Sim-Since", strconv.FormatInt(since.Load(), 10))
		resp, err := cl.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				c.failed.Add(1)
			}
			return 0, ""
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	c.waiting.Add(1)
	waiting := true
	defer func() {
		if waiting {
			c.waiting.Add(-1)
		}
	}()
	_, body := get(c.prefix+"page", "")
	for !strings.HasPrefix(body, "site:") && !strings.Contains(body, "site busy") {
		if !sleepCtx(ctx, c.poll) {
			return
		}
		sent := time.Now()
		_, status := get("/.waitroom/status?room="+c.room, "application/json")
		// Only "waiting" proves it was not admitted when the poll was read
		// (a "hold" or no answer proves nothing).
		if strings.Contains(status, `"state":"waiting"`) {
			since.Store(sent.UnixNano())
		}
		if strings.Contains(status, `"state":"admitted"`) {
			_, body = get(c.prefix+"page", "")
		}
	}
	c.waiting.Add(-1)
	waiting = false
	c.inside.Add(1)
	defer c.inside.Add(-1)
	end := time.Now().Add(c.session)
	next := time.Now().Add(c.period)
	for time.Now().Before(end) {
		if !sleepCtx(ctx, time.Until(next)) {
			return
		}
		next = next.Add(c.period)
		go get(c.prefix+"page", "") // open loop: on time whatever the last one took
	}
	get(c.prefix+"done", "")
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
