package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Options shape one run.
type Options struct {
	Room     Room
	Visitors int           // the line at the start; then one more every Arrival
	Arrival  time.Duration // newcomers keep joining through the fault, so order can break across it
	Observe  time.Duration // how long to watch after the fault (or the promotion, when later)
	Warm     int           // admissions the site must see before the fault
}

// DefaultOptions: a line of 250, newcomers at 4/s (below the ~6/s the room
// admits, so the line stays hundreds long), 12 s watched after the fault.
func DefaultOptions() Options {
	return Options{Room: DefaultRoom(), Visitors: 250, Arrival: 250 * time.Millisecond, Observe: 12 * time.Second, Warm: 16}
}

// Result is one run of one fault.
type Result struct {
	Fault    string
	Window   Window
	Verdict  Verdict
	Problems []string
	Note     string // what the fault did, e.g. the promoted node
	Logs     string // the end of each gateway's log (warnings and errors)
}

// env is what a fault acts on: the gateways, the store, the run's clock.
type env struct {
	clock    *clock
	gateways []*Gateway
	store    any // *redistest.Server, *redistest.Sentinel or *redistest.Cluster
	room     Room
}

// Run starts the store the fault needs, a checking site, three gateways
// on bin and the crowd; waits until admissions flow; injects the fault;
// watches; and returns the checker's verdict. An error is the harness's
// own trouble (a store or gateway that would not start), not a verdict.
func Run(ctx context.Context, bin string, f Fault, o Options) (Result, error) {
	res := Result{Fault: f.Name}
	store, st, closeStore, err := f.Store()
	if err != nil {
		return res, fmt.Errorf("%s: starting the store: %w", f.Name, err)
	}
	defer closeStore()
	dir, err := os.MkdirTemp("", "chaos")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	c := &clock{start: time.Now()}
	site, err := StartSite(c)
	if err != nil {
		return res, err
	}
	defer site.Close()
	var gws []*Gateway
	defer func() {
		for _, g := range gws {
			g.Kill()
		}
	}()
	for range 3 {
		g, err := StartGateway(ctx, bin, dir, site.URL, st, o.Room)
		if err != nil {
			return res, err
		}
		gws = append(gws, g)
	}
	crowdCtx, stop := context.WithCancel(ctx)
	defer stop()
	cr := newCrowd(c, gws)
	visitors := make(chan []*Visitor, 1)
	go func() { visitors <- cr.arrive(crowdCtx, o.Visitors, 3*time.Second, o.Arrival) }()
	if err := warm(ctx, c, site, o.Warm, 3*time.Second+o.Room.AbandonAfter/10); err != nil {
		stop()
		<-visitors
		return res, fmt.Errorf("%s: %w%s", f.Name, err, logs(gws))
	}
	e := &env{clock: c, gateways: gws, store: store, room: o.Room}
	w, note, err := f.Inject(ctx, e)
	if err != nil {
		stop()
		<-visitors
		return res, fmt.Errorf("%s: %w%s", f.Name, err, logs(gws))
	}
	sleep(ctx, max(w.At, w.Promoted)+o.Observe-c.now())
	w.End = c.now()
	stop()
	vs := <-visitors
	visits, anonymous := site.Visits()
	res.Window, res.Note = w, note
	res.Verdict = check(vs, visits, anonymous, o.Room, w)
	res.Problems = res.Verdict.Problems(w, o.Room.Tick)
	res.Logs = logs(gws)
	if len(res.Problems) > 0 {
		res.Logs += dump(ctx, store)
	}
	return res, ctx.Err()
}

// warm waits until the site has seen n admissions, and at least least
// has passed: the initial line has joined and been placed, and moves.
func warm(ctx context.Context, c *clock, site *Site, n int, least time.Duration) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		visits, _ := site.Visits()
		if len(visits) >= n && c.now() >= least {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d admissions after 90s of warm-up", len(visits))
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// logs is the gateways' output, for an error's message.
func logs(gws []*Gateway) string {
	var b strings.Builder
	for _, g := range gws {
		fmt.Fprintf(&b, "\n--- gateway %s:\n%s", g.URL, tail(g.Log(), 4000))
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
