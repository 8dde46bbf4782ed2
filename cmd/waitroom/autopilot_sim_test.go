package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"slices"
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
}

// simRecord is what the site saw, per answer.
type simRecord struct {
	mu   sync.Mutex
	hits []simHit
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
	if strings.HasSuffix(r.URL.Path, "/done") {
		w.Header().Set("Waitroom-Command", "release")
		fmt.Fprint(w, "site:bye")
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
	failed   atomic.Int64 // transport errors (a visitor's own timeout)

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
	cl := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: c.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, accept string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return 0, ""
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
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
	_, body := get(c.prefix+"page", "")
	for !strings.HasPrefix(body, "site:") && !strings.Contains(body, "site busy") {
		if !sleepCtx(ctx, c.poll) {
			return
		}
		_, status := get("/.waitroom/status?room="+c.room, "application/json")
		if strings.Contains(status, `"state":"admitted"`) {
			_, body = get(c.prefix+"page", "")
		}
	}
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
