package main

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The visitors' own headers: the checker tells who is inside by these, which
// the visitors set, and never by the gateway's Waitroom-Visitor. An epoch
// is one admission of a visitor: 1 for the first, 2 if it was sent back to
// the line and let in again.
const (
	visitorHeader  = "X-Chaos-Visitor"
	epochHeader    = "X-Chaos-Epoch"
	joinHeader     = "X-Chaos-Join"     // "1" on the request that joins the line
	releasedHeader = "X-Chaos-Released" // the site's answer: it released this visitor
)

// stay is how many site requests an admission makes before the site
// releases it: 2 to 4, a session of about a second.
func stay(visitor int) int { return 2 + visitor%3 }

// visit is what the site saw of one admission of one visitor.
type visit struct {
	visitor, epoch int
	first, last    time.Duration // the site's clock: its first and last request
	released       time.Duration // when the site answered with the release; 0: not released
	requests       int
	join           bool // the join itself reached the site: let in without waiting
}

// Site is the upstream behind the three gateways and the checker's eyes: a
// real HTTP server that notes every admitted request by the visitor's own
// headers, and releases each admission after stay(visitor) requests with
// Waitroom-Command: release, as a shop does after payment.
type Site struct {
	URL   string
	clock *clock
	srv   *http.Server
	done  chan struct{}

	mu        sync.Mutex
	visits    map[[2]int]*visit
	anonymous int // requests without the visitor's header: not from a visitor of this run
}

// StartSite listens on a loopback port and serves until Close.
func StartSite(c *clock) (*Site, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Site{URL: "http://" + ln.Addr().String(), clock: c, done: make(chan struct{}), visits: map[[2]int]*visit{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { defer close(s.done); _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := s.clock.now()
	id, err1 := strconv.Atoi(r.Header.Get(visitorHeader))
	epoch, err2 := strconv.Atoi(r.Header.Get(epochHeader))
	w.Header().Set("Cache-Control", "no-store")
	if err1 != nil || err2 != nil {
		s.mu.Lock()
		s.anonymous++
		s.mu.Unlock()
		_, _ = w.Write([]byte("who are you?\n"))
		return
	}
	s.mu.Lock()
	v := s.visits[[2]int{id, epoch}]
	if v == nil {
		v = &visit{visitor: id, epoch: epoch, first: now, join: r.Header.Get(joinHeader) == "1"}
		s.visits[[2]int{id, epoch}] = v
	}
	v.last = now
	v.requests++
	release := v.requests >= stay(id) && v.released == 0
	if release {
		v.released = now
	}
	s.mu.Unlock()
	if release {
		w.Header().Set("Waitroom-Command", "release")
		w.Header().Set(releasedHeader, "1")
	}
	_, _ = w.Write([]byte("in\n"))
}

// Visits is a copy of everything the site saw.
func (s *Site) Visits() ([]visit, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]visit, 0, len(s.visits))
	for _, v := range s.visits {
		out = append(out, *v)
	}
	return out, s.anonymous
}

// Close stops the site.
func (s *Site) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// clock is the run's one clock: visitors and site share this process, so
// their times compare directly.
type clock struct{ start time.Time }

func (c *clock) now() time.Duration { return time.Since(c.start) }
