package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// site is the counting upstream (-upstream): a stand-in for the site behind
// the gateway that notes, for every Waitroom-Visitor, the first and last
// request it served. Being in this process, it shares the visitors' clock,
// so it can join what it saw with when each visitor left.
type site struct {
	srv *http.Server
	url string

	mu        sync.Mutex
	seen      map[string]*seenVisitor
	requests  int64
	anonymous int64 // requests without Waitroom-Visitor: not through a room
	done      chan struct{}
}

type seenVisitor struct {
	first, last time.Time
	client      int // the load generator's visitor, from X-Load-Client; -1 if unknown
}

// startSite listens on addr and serves until Close.
func startSite(addr string) (*site, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("starting the counting upstream: %w", err)
	}
	s := &site{url: "http://" + ln.Addr().String(), seen: map[string]*seenVisitor{}, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

const sitePage = "<!doctype html><title>waitroom-load site</title><p>You are in.</p>\n"

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	id := r.Header.Get("Waitroom-Visitor")
	client, err := strconv.Atoi(r.Header.Get(clientHeader))
	if err != nil {
		client = -1
	}
	s.mu.Lock()
	s.requests++
	if id == "" {
		s.anonymous++
	} else if v := s.seen[id]; v != nil {
		v.last = now
	} else {
		s.seen[id] = &seenVisitor{first: now, last: now, client: client}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(sitePage))
}

// Close stops the site, giving in-flight requests a moment.
func (s *site) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// upstreamReport is what the site saw.
type upstreamReport struct {
	Enabled        bool    `json:"enabled"`
	URL            string  `json:"url,omitempty"`
	Requests       int64   `json:"requests"`
	WithoutVisitor int64   `json:"without_visitor"`
	Visitors       int     `json:"visitors"`
	MaxInside      int     `json:"max_inside"`
	MaxInsideAt    float64 `json:"max_inside_at_seconds"`
	MaxActive      *int    `json:"max_active,omitempty"`
	OverLimit      bool    `json:"over_limit"`
}

// report counts the most visitors inside at once. A visitor is inside from
// the first request the site got with its Waitroom-Visitor id until the
// later of its last such request and the moment it sent its leave. The
// gateway's session starts before the first and ends after both, so this
// is never longer than the real session: more inside than max_active here
// proves the gateway let too many in. Visitors who stay idle are counted
// only up to their last request, so the figure may be low, never high.
func (s *site) report(start time.Time, recs []record) upstreamReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := upstreamReport{Enabled: true, URL: s.url, Requests: s.requests, WithoutVisitor: s.anonymous, Visitors: len(s.seen)}
	// A visitor that lost its place and joined again has two ids; its leave
	// belongs to the later one.
	latest := map[int]*seenVisitor{}
	for _, v := range s.seen {
		if v.client >= 0 && v.client < len(recs) && (latest[v.client] == nil || v.first.After(latest[v.client].first)) {
			latest[v.client] = v
		}
	}
	type event struct {
		at   time.Duration
		step int
	}
	events := make([]event, 0, 2*len(s.seen))
	for _, v := range s.seen {
		from, to := v.first.Sub(start), v.last.Sub(start)
		if latest[v.client] == v && recs[v.client].left {
			to = max(to, recs[v.client].leaveSent)
		}
		events = append(events, event{from, +1}, event{to, -1})
	}
	// At equal times a leave goes first: both inside at once is not proved.
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.step, b.step)) })
	inside := 0
	for _, e := range events {
		if inside += e.step; inside > rep.MaxInside {
			rep.MaxInside, rep.MaxInsideAt = inside, e.at.Seconds()
		}
	}
	return rep
}
