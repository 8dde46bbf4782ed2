package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Bounds that keep one run on one machine sane: every visitor is a
// goroutine with its own record, and no run may outlive maxDuration.
const (
	maxVisitors = 200_000
	maxDuration = 30 * time.Minute
	maxRate     = 100_000 // arrivals per second
)

// config is a validated command line.
type config struct {
	target      *url.URL      // the first of targets: what the summary names
	targets     []*url.URL    // the gateways, one site: they differ only in port
	spread      string        // visitor (each visitor keeps to one gateway) or request (any request to any)
	conns       int           // most connections open to each gateway, as a balancer's pool; 0: one per request in flight
	profile     string        // ramp, steady or step
	visitors    int           // ramp: how many arrive; steady and step: a cap, 0 for none
	ramp        time.Duration // the arrival period of every profile
	rate        float64       // steady and step: arrivals per second (step: the last step's)
	steps       int           // step: how many steps the rate climbs in
	duration    time.Duration // the whole run, arrivals and waiting
	grace       time.Duration // in-flight requests may finish this long after duration
	timeout     time.Duration // one request
	requests    int           // requests each admitted visitor makes
	think       time.Duration // between those requests
	after       string        // leave or idle
	accept      string        // html or json
	room        string
	admin       *url.URL
	adminToken  string
	expectRate  string // "600/m"; "" when not given
	expectMax   int    // -1 when not given
	upstream    string // listen address of the counting upstream; "" for none
	allowRemote bool
	jsonOut     bool
}

// flagError is a command line the tool refuses: exit status 2.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// parseFlags reads args into a config, reporting every problem at once.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("waitroom-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usageHead); fs.PrintDefaults() }
	target := fs.String("target", "http://localhost:8080/", "guarded URL the visitors ask for; several gateways of one site comma-separated (differing only in port), visitors spread round robin")
	conns := fs.Int("conns", 0, "most connections to each gateway at once, as a load balancer's upstream pool; requests wait for one, and the wait counts in their latency (0: a connection per request in flight, as browsers)")
	spread := fs.String("spread", "visitor", "with several -target: visitor (each visitor keeps to its gateway, a sticky balancer) or request (every request to the next gateway, no stickiness)")
	profile := fs.String("profile", "ramp", "arrivals: ramp (-visitors over -ramp), steady (-rate for -ramp) or step (-rate reached in -steps over -ramp)")
	visitors := fs.Int("visitors", 1000, "ramp: visitors who arrive; steady and step: the most who arrive (0: no cap)")
	ramp := fs.Duration("ramp", 10*time.Second, "arrival period: every profile's arrivals happen in the run's first RAMP")
	rate := fs.String("rate", "", `steady and step: arrivals per period, e.g. "50/s" or "600/m"`)
	steps := fs.Int("steps", 5, "step: the rate rises to -rate in this many equal steps")
	duration := fs.Duration("duration", time.Minute, "the whole run, at most 30m; visitors still waiting then are reported as such")
	grace := fs.Duration("grace", 5*time.Second, "in-flight requests may finish this long after -duration (0 to 1m)")
	timeout := fs.Duration("timeout", 10*time.Second, "one request's limit; past it the request counts as a timeout error")
	requests := fs.Int("requests", 5, "requests each admitted visitor makes to -target")
	think := fs.Duration("think", 100*time.Millisecond, "pause between an admitted visitor's requests")
	after := fs.String("after", "leave", "once done: leave (POST /.waitroom/leave) or idle (keep the session until it expires)")
	accept := fs.String("accept", "html", "html: visitors are browsers that load the waiting page; json: apps that ask for JSON")
	room := fs.String("room", "", "room behind -target; needed with -admin when the gateway has several rooms")
	admin := fs.String("admin", "", "admin API base URL (e.g. http://127.0.0.1:9090) to read the room's limits from")
	// The token's default is read after parsing, so -h never prints it.
	adminToken := fs.String("admin-token", "", "admin bearer token (default $WAITROOM_ADMIN_TOKEN, which keeps it out of ps)")
	expectRate := fs.String("expect-rate", "", `the room's admit_rate, e.g. "600/m", when -admin is not used`)
	expectMax := fs.Int("expect-max-active", -1, "the room's max_active, when -admin is not used (-1: unknown)")
	upstream := fs.String("upstream", "", "start a counting site on this address (e.g. 127.0.0.1:3000) and point the gateway's upstream at it")
	allowRemote := fs.Bool("allow-remote", false, "allow a -target or -admin that is not a loopback address (only a gateway you run)")
	jsonOut := fs.Bool("json", false, "print the summary as JSON on stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, &flagError{err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c := config{profile: *profile, visitors: *visitors, ramp: *ramp, steps: *steps, duration: *duration,
		grace: *grace, timeout: *timeout, requests: *requests, think: *think, after: *after, accept: *accept,
		room: *room, adminToken: cmp.Or(*adminToken, os.Getenv("WAITROOM_ADMIN_TOKEN")), expectRate: *expectRate, expectMax: *expectMax,
		upstream: *upstream, allowRemote: *allowRemote, jsonOut: *jsonOut, spread: *spread, conns: *conns}
	var errs []error
	bad := func(name, rule string, got any) { errs = append(errs, fmt.Errorf("-%s: %s, got %v", name, rule, got)) }
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0)))
	}
	var err error
	if c.targets, err = parseTargets(*target); err != nil {
		bad("target", err.Error(), strconv.Quote(*target))
	} else {
		c.target = c.targets[0]
	}
	if c.conns < 0 || c.conns > maxVisitors {
		bad("conns", fmt.Sprintf("must be from 0 (no cap) to %d", maxVisitors), c.conns)
	}
	if c.spread != "visitor" && c.spread != "request" {
		bad("spread", "want visitor or request", strconv.Quote(c.spread))
	}
	if *admin != "" {
		if c.admin, err = httpURL(*admin); err != nil {
			bad("admin", err.Error(), strconv.Quote(*admin))
		}
	}
	c.checkProfile(set, *rate, bad)
	c.checkTimes(bad)
	c.checkVisitor(bad)
	if c.expectRate != "" {
		if _, _, err := parseRate(c.expectRate); err != nil {
			bad("expect-rate", err.Error(), strconv.Quote(c.expectRate))
		}
	}
	if c.expectMax < -1 {
		bad("expect-max-active", "must be >= 0", c.expectMax)
	}
	if len(errs) > 0 {
		return config{}, &flagError{errors.Join(errs...)}
	}
	return c, nil
}

const usageHead = `waitroom-load: browsers in a spike, against a waitroom gateway you run.

Usage:
  waitroom-load [flags]

Exit status: 0 all well, 1 an arrival unanswered, errors, order inversions
or more inside than max_active, 2 a bad command line or a refused target.

Flags:
`

func (c *config) checkProfile(set map[string]bool, rate string, bad func(string, string, any)) {
	switch c.profile {
	case "ramp":
		if set["rate"] {
			bad("rate", "only for -profile steady or step; ramp spreads -visitors over -ramp", strconv.Quote(rate))
		}
		if c.visitors < 1 || c.visitors > maxVisitors {
			bad("visitors", fmt.Sprintf("must be from 1 to %d", maxVisitors), c.visitors)
		}
	case "steady", "step":
		if !set["visitors"] {
			c.visitors = 0
		}
		if c.visitors < 0 || c.visitors > maxVisitors {
			bad("visitors", fmt.Sprintf("must be from 0 (no cap) to %d", maxVisitors), c.visitors)
		}
		n, per, err := parseRate(rate)
		switch {
		case err != nil:
			bad("rate", err.Error(), strconv.Quote(rate))
		case n/per.Seconds() > maxRate:
			bad("rate", fmt.Sprintf("must be at most %d/s", maxRate), strconv.Quote(rate))
		default:
			c.rate = n / per.Seconds()
		}
		if c.profile == "step" && (c.steps < 1 || c.steps > 100) {
			bad("steps", "must be from 1 to 100", c.steps)
		}
	default:
		bad("profile", "want ramp, steady or step", strconv.Quote(c.profile))
	}
	if set["steps"] && c.profile != "step" {
		bad("steps", "only for -profile step", c.steps)
	}
	if c.rate > 0 && c.ramp > 0 && c.rate*c.ramp.Seconds() > maxVisitors && c.visitors == 0 {
		bad("rate", fmt.Sprintf("brings more than %d visitors in -ramp %v; lower it or cap -visitors", maxVisitors, c.ramp), strconv.Quote(rate))
	}
}

func (c *config) checkTimes(bad func(string, string, any)) {
	switch {
	case c.duration <= 0 || c.duration > maxDuration:
		bad("duration", "must be more than 0 and at most 30m", c.duration)
	case c.ramp < 0 || c.ramp > c.duration:
		bad("ramp", "must be from 0 to -duration ("+c.duration.String()+")", c.ramp)
	}
	if c.profile != "ramp" && c.ramp <= 0 {
		bad("ramp", "must be more than 0 for -profile "+c.profile, c.ramp)
	}
	if c.grace < 0 || c.grace > time.Minute {
		bad("grace", "must be from 0 to 1m", c.grace)
	}
	if c.timeout <= 0 || c.timeout > 5*time.Minute {
		bad("timeout", "must be more than 0 and at most 5m", c.timeout)
	}
	if c.think < 0 || c.think > time.Minute {
		bad("think", "must be from 0 to 1m", c.think)
	}
}

func (c *config) checkVisitor(bad func(string, string, any)) {
	if c.requests < 0 || c.requests > 1000 {
		bad("requests", "must be from 0 to 1000", c.requests)
	}
	if c.after != "leave" && c.after != "idle" {
		bad("after", "want leave or idle", strconv.Quote(c.after))
	}
	if c.accept != "html" && c.accept != "json" {
		bad("accept", "want html or json", strconv.Quote(c.accept))
	}
	if c.room != "" && strings.ContainsAny(c.room, "/?#& ") {
		bad("room", "want a room name (letters, digits, - and _)", strconv.Quote(c.room))
	}
}

// maxTargets bounds -target's list: gateways on one machine.
const maxTargets = 64

// parseTargets reads -target: one URL, or several comma-separated that
// differ only in port. A cookie belongs to a host name, not a port, so a
// visitor's cookies from one gateway go with it to the others, as they do
// behind a load balancer; a second host name would be a second site.
func parseTargets(s string) ([]*url.URL, error) {
	parts := strings.Split(s, ",")
	if len(parts) > maxTargets {
		return nil, fmt.Errorf("at most %d gateways", maxTargets)
	}
	var out []*url.URL
	for _, p := range parts {
		u, err := httpURL(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		if len(out) > 0 {
			f := out[0]
			if u.Scheme != f.Scheme || u.Hostname() != f.Hostname() || u.RequestURI() != f.RequestURI() {
				return nil, errors.New("several targets must differ only in port (one site, several gateways)")
			}
			for _, o := range out {
				if o.Host == u.Host {
					return nil, fmt.Errorf("%s is listed twice", u.Host)
				}
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// httpURL accepts an absolute http or https URL with a host and no user info.
func httpURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("want an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("want a host")
	case u.User != nil:
		return nil, errors.New("user info is not allowed")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.Fragment = ""
	return u, nil
}

// parseRate reads "<n>/s", "<n>/m" or "<n>/h" as n per period; a bare number
// is refused, since 600 could mean per second or per minute.
func parseRate(s string) (float64, time.Duration, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || per == 0 || err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, 0, errors.New(`want "<n>/s", "<n>/m" or "<n>/h" with n > 0`)
	}
	return n, per, nil
}
