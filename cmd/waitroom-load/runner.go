package main

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// runner is one run: the schedule, the shared pool, the clocks.
type runner struct {
	cfg       config
	transport *http.Transport
	stats     *stats
	start     time.Time
	launched  int           // visitors who arrived before the end
	turn      atomic.Uint64 // -spread request: the next request's gateway, round robin

	// soft ends the run: no visitor starts a request after it. hard ends
	// -grace later and cuts off what is still in flight, so no run outlives
	// -duration plus -grace.
	soft, hard context.Context
}

// runLoad runs the visitors of c to the end and returns what they saw;
// progress, when not nil, gets a live status line.
func runLoad(ctx context.Context, c config, progress io.Writer) *runner {
	arr := arrivals(c)
	r := &runner{cfg: c, transport: newTransport(c.timeout), stats: newStats(len(arr), len(c.targets)), start: time.Now()}
	// A balancer keeps a pool of connections to each gateway; a request
	// waits for a free one, and its latency, from before the wait, says so.
	r.transport.MaxConnsPerHost = c.conns
	defer r.transport.CloseIdleConnections()
	soft, cancelSoft := context.WithDeadline(ctx, r.start.Add(c.duration))
	// hard outlives a cancelled ctx by the grace too: Ctrl-C lets what is
	// in flight finish, as the deadline does.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	stopGrace := context.AfterFunc(soft, func() { time.AfterFunc(c.grace, cancelHard) })
	r.soft, r.hard = soft, hard
	defer func() {
		stopGrace()
		cancelSoft()
		cancelHard()
	}()
	var bar *progressBar
	if progress != nil {
		bar = startProgress(progress, r, len(arr))
	}
	var wg sync.WaitGroup
	for i, at := range arr {
		if !r.sleepUntil(r.start.Add(at)) {
			break
		}
		r.launched++
		wg.Go(r.newVisitor(i).live)
	}
	wg.Wait()
	bar.stop()
	return r
}

// since is the time from the start of the run, on the monotonic clock.
func (r *runner) since() time.Duration { return time.Since(r.start) }

// over says the run has ended: visitors start no new request.
func (r *runner) over() bool { return r.soft.Err() != nil }

// sleep waits d, or less if the run ends first (false).
func (r *runner) sleep(d time.Duration) bool {
	if d <= 0 {
		return !r.over()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !r.over()
	case <-r.soft.Done():
		return false
	}
}

// sleepUntil waits until at; an arrival already due goes at once, so a
// slow scheduler catches up rather than stretching the ramp.
func (r *runner) sleepUntil(at time.Time) bool {
	return r.sleep(time.Until(at))
}

// arrivals is when each visitor arrives, as offsets from the start of the
// run, in order. The schedule is fixed before the run, so a slow gateway
// cannot slow the arrivals down: a spike does not wait for the site.
func arrivals(c config) []time.Duration {
	var out []time.Duration
	switch c.profile {
	case "ramp":
		out = make([]time.Duration, c.visitors)
		for i := range out {
			out[i] = time.Duration(float64(c.ramp) * float64(i) / float64(c.visitors))
		}
		return out
	case "steady":
		out = evenly(out, 0, c.ramp, c.rate, c.visitors)
	case "step":
		step := c.ramp / time.Duration(c.steps)
		for k := 1; k <= c.steps; k++ {
			from := time.Duration(k-1) * step
			if k == c.steps {
				step = c.ramp - from // the last step takes the rounding
			}
			out = evenly(out, from, step, c.rate*float64(k)/float64(c.steps), c.visitors)
		}
	}
	return out
}

// evenly appends arrivals at perSecond, starting at from, for length,
// until out holds limit arrivals (0: no limit).
func evenly(out []time.Duration, from, length time.Duration, perSecond float64, limit int) []time.Duration {
	n := int(math.Floor(length.Seconds() * perSecond))
	for i := 0; i < n && (limit == 0 || len(out) < limit); i++ {
		out = append(out, from+time.Duration(float64(i)/perSecond*float64(time.Second)))
	}
	return out
}

// spreadRequest sends req to the next gateway, as a balancer without
// stickiness would, and returns the gateway's index: the targets differ
// only in port, so the visitor's cookies, which belong to the host name,
// go along. The Origin and the Referer follow the request's host, as a
// browser on one site behind the balancer would send them.
func (r *runner) spreadRequest(req *http.Request) int {
	ts := r.cfg.targets
	i := int((r.turn.Add(1) - 1) % uint64(len(ts)))
	host := ts[i].Host
	req.URL.Host, req.Host = host, host
	if o := req.Header.Get("Origin"); o != "" {
		req.Header.Set("Origin", req.URL.Scheme+"://"+host)
	}
	if ref, err := url.Parse(req.Header.Get("Referer")); err == nil && ref.Host != "" {
		ref.Host = host
		req.Header.Set("Referer", ref.String())
	}
	return i
}
