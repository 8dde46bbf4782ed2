// Command waitroom-chaos stages the failures of issue 22 against three
// real gateways sharing one Redis (a Sentinel group, a Cluster with
// replicas, or one server) while a line of hundreds of visitors polls
// through them, and checks from the site's side what held: max_active,
// admission order, places, admissions twice, 5xx, and how long the line
// was held. `make chaos` runs each fault CHAOSRUNS times (default 20) and
// prints a Markdown table; the package's tests run each fault once.
//
// It needs redis-server (with --sentinel and cluster support, Debian's
// package) and redis-cli, and builds ./cmd/waitroom with go.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: 0 when every invariant held in every
// run, 1 when one broke (the table is printed either way), 2 on a bad
// command line or a harness that could not start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("waitroom-chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := DefaultOptions()
	runs := fs.Int("runs", 20, "runs of each fault")
	only := fs.String("faults", "", "comma-separated faults to run (default all: "+names()+")")
	fs.IntVar(&o.Visitors, "visitors", o.Visitors, "visitors in line at the start")
	fs.DurationVar(&o.Observe, "observe", o.Observe, "how long to watch after the fault or the promotion")
	fs.StringVar(&o.Room.Join, "join", o.Room.Join, "the room's join: decide, or batched (numbers from a block per gateway, places written a tick at a time)")
	verbose := fs.Bool("v", false, "print the end of the gateways' logs after a run with a problem")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	faults, err := pick(*only)
	if err != nil || *runs < 1 || o.Visitors < 1 {
		fmt.Fprintf(stderr, "waitroom-chaos: %v (want -runs >= 1, -visitors >= 1)\n", err)
		return 2
	}
	dir, err := os.MkdirTemp("", "chaos-bin")
	if err != nil {
		fmt.Fprintln(stderr, "waitroom-chaos:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	bin, err := Build(ctx, dir)
	if err != nil {
		fmt.Fprintln(stderr, "waitroom-chaos:", err)
		return 2
	}
	var results []Result
	broken, failed := false, 0
	for _, f := range faults {
		for i := 1; i <= *runs; i++ {
			start := time.Now()
			r, err := Run(ctx, bin, f, o)
			if ctx.Err() != nil {
				// The runs already done still say what held: print them.
				fmt.Fprintln(stderr, "waitroom-chaos: interrupted")
				Table(stdout, results)
				return 2
			}
			if err != nil {
				// A run that could not start (no redis-server, a port
				// taken) proves nothing: it fails the whole command, so
				// an empty table can never pass.
				failed++
				fmt.Fprintf(stderr, "waitroom-chaos: %s run %d: %v\n", f.Name, i, err)
				continue
			}
			broken = broken || len(r.Problems) > 0
			results = append(results, r)
			fmt.Fprintf(stderr, "%s (%.0fs)\n", Line(r, i), time.Since(start).Seconds())
			for _, p := range r.Problems {
				fmt.Fprintln(stderr, "    BROKEN:", p)
			}
			if *verbose && len(r.Problems) > 0 {
				fmt.Fprintln(stderr, r.Logs)
			}
		}
	}
	Table(stdout, results)
	switch {
	case failed > 0:
		fmt.Fprintf(stderr, "waitroom-chaos: %d runs could not start\n", failed)
		return 2
	case broken:
		return 1
	}
	return 0
}

func names() string {
	var n []string
	for _, f := range Faults() {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

func pick(list string) ([]Fault, error) {
	if list == "" {
		return Faults(), nil
	}
	var out []Fault
	for _, name := range strings.Split(list, ",") {
		f, ok := FaultNamed(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("no fault %q (have %s)", name, names())
		}
		out = append(out, f)
	}
	return out, nil
}
