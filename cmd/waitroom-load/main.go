// Command waitroom-load is a load generator for a waitroom gateway that
// behaves like browsers in a spike: each visitor keeps its own cookies,
// joins the line, polls as the waiting page's script does, uses the site
// once admitted and leaves. It reports latencies, errors, whether the line
// was served in ticket order, the admission pace against the room's, and,
// with its own counting upstream, how many were inside at once.
//
// It refuses targets that are not on this machine unless told otherwise:
// see docs/loadtest.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var progress io.Writer
	if isTerminal(os.Stderr) {
		progress = os.Stderr
	}
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, progress))
}

// run is main without the process: it returns the exit status, 0 when all
// went well, 1 on an unanswered arrival, errors, inversions or too many
// inside, 2 on a bad command line or a refused target.
func run(ctx context.Context, args []string, stdout, stderr, progress io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "waitroom-load: %v\n(-h lists the flags)\n", err)
		return 2
	}
	if err := checkTargets(ctx, c, systemLookup); err != nil {
		fmt.Fprintf(stderr, "waitroom-load: %v\n", err)
		return 2
	}
	lim := flagLimits(c)
	if c.admin != nil {
		if lim, err = adminLimits(ctx, c); err != nil {
			fmt.Fprintf(stderr, "waitroom-load: %v\n", err)
			return 1
		}
	}
	var s *site
	if c.upstream != "" {
		if s, err = startSite(c.upstream); err != nil {
			fmt.Fprintf(stderr, "waitroom-load: %v\n", err)
			return 1
		}
		defer s.Close()
		fmt.Fprintf(stderr, "waitroom-load: counting upstream on %s (the gateway's upstream url must point here)\n", s.url)
	}
	r := runLoad(ctx, c, progress)
	sum := summarize(r, s, lim, r.since())
	if s != nil && sum.Upstream.Requests == 0 && sum.Visitors.Admitted > 0 {
		fmt.Fprintf(stderr, "waitroom-load: warning: visitors were let in but the counting upstream saw nobody: is the gateway's upstream url %s?\n", s.url)
	}
	if lim.Room != "" && r.stats.room() != "" && lim.Room != r.stats.room() {
		fmt.Fprintf(stderr, "waitroom-load: warning: the limits are room %q's, but the answers named room %q\n", lim.Room, r.stats.room())
	}
	if c.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintf(stderr, "waitroom-load: %v\n", err)
			return 1
		}
	} else {
		writeText(stdout, sum, rampText(c))
	}
	if !sum.OK {
		return 1
	}
	return 0
}

func rampText(c config) string {
	if c.ramp == 0 {
		return "no time (all at once)"
	}
	return c.ramp.Round(time.Millisecond).String()
}
