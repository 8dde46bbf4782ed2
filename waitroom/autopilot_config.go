package waitroom

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// AutopilotConfig is a room's `autopilot:` section: the room moves its own
// max_active and admission rate between bounds from what the gateway
// measures of the site (docs/autopilot.md). Off when Target is "".
type AutopilotConfig struct {
	// Target is the site's time to the first byte of its answer to
	// admitted requests, at Percentile, that the room keeps to: "800ms".
	// Required to turn the autopilot on.
	Target string `mapstructure:"target" yaml:"target" json:"target"`
	// Percentile is the share of requests Target holds for, "p50" to
	// "p99". Default "p90".
	Percentile string `mapstructure:"percentile" yaml:"percentile" json:"percentile"`
	// Errors is the share of admitted requests that may fail (the site's
	// 5xx, the gateway's 502 and 504: timeouts and connection failures)
	// before the limit falls, "2%". Default "2%".
	Errors string `mapstructure:"errors" yaml:"errors" json:"errors"`
	// MinActive is the floor of the limit, and where it starts; the room's
	// max_active is the ceiling. Default 0: a quarter of max_active (at
	// least 1).
	MinActive int `mapstructure:"min_active" yaml:"min_active" json:"min_active"`
	// Interval is how often the limit may move (one step). Default "15s".
	Interval string `mapstructure:"interval" yaml:"interval" json:"interval"`
	// Exclude are path prefixes whose requests are not measured, such as
	// static assets served from a cache: "/static/".
	Exclude []string `mapstructure:"exclude" yaml:"exclude" json:"exclude"`
	// Warmup is how long after its admission a visitor's requests are not
	// timed (their errors still count): its first page, assets and login
	// are heavier than what it does later. Default "5s"; "0s" times every
	// request. At most 5m, and under the room's session time to matter.
	Warmup string `mapstructure:"warmup" yaml:"warmup" json:"warmup"`
	// StartAbove is an arrival rate, "500/s": the room is quiet
	// (everyone straight in up to max_active) until arrivals (across
	// instances, over 10 s) pass it or the site shows strain; then the
	// autopilot's limit applies and the line forms, until arrivals are
	// under, the line empty and the site healthy for 30 s (StartHold).
	// "": the limit always applies.
	StartAbove string `mapstructure:"start_above" yaml:"start_above" json:"start_above"`
}

// Autopilot is a room's validated autopilot.
type Autopilot struct {
	Target     time.Duration
	Percentile int   // 50 to 99
	ErrorsPPM  int64 // the error bound, parts per million
	MinActive  int
	Interval   time.Duration
	Exclude    []string
	// Warmup: AutopilotConfig.Warmup, AutopilotWarmup by default.
	Warmup time.Duration
	// StartAbove: zero (unlimited) when not set.
	StartAbove Rate
}

// Bounds of the autopilot's settings.
const (
	maxExclude          = 64
	minAutopilotTarget  = time.Millisecond
	maxAutopilotTarget  = time.Minute
	minAutopilotStep    = 100 * time.Millisecond
	defaultAutopilotGap = 15 * time.Second
	// AutopilotWarmup is the default warmup: how long after its admission
	// a visitor's requests are not timed: its first page, assets and login
	// are heavier than what it does later, and they are the cost of
	// letting someone in, not the site's strain; their errors still count.
	AutopilotWarmup    = 5 * time.Second
	maxAutopilotWarmup = 5 * time.Minute
)

// Build checks the section; nil when it is off (no target).
func (c AutopilotConfig) Build(maxActive int) (*Autopilot, error) {
	var p conf.Problems
	if c.Target == "" {
		// The defaults may stand (configs/waitroom.yaml shows every key);
		// anything else set without a target is a mistake.
		if c.Percentile != "" && c.Percentile != "p90" || c.Errors != "" && c.Errors != "2%" || c.MinActive != 0 ||
			c.Interval != "" && c.Interval != "15s" || len(c.Exclude) > 0 || c.StartAbove != "" ||
			c.Warmup != "" && c.Warmup != "5s" {
			p.Add("target", "required to turn the autopilot on (its other keys are set)")
		}
		return nil, p.Err()
	}
	a := &Autopilot{Target: p.Duration("target", c.Target, minAutopilotTarget)}
	if a.Target > maxAutopilotTarget {
		p.Add("target", "must be at most %s, got %q", maxAutopilotTarget, c.Target)
	}
	a.Percentile = 90
	if c.Percentile != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c.Percentile, "p"))
		if err != nil || !strings.HasPrefix(c.Percentile, "p") || n < 50 || n > 99 {
			p.Add("percentile", `must be "p50" to "p99", got %q`, c.Percentile)
		} else {
			a.Percentile = n
		}
	}
	a.ErrorsPPM = 20_000
	if c.Errors != "" {
		f, err := strconv.ParseFloat(strings.TrimSuffix(c.Errors, "%"), 64)
		// At least 0.0001% (1 ppm, the unit the stores count in: a smaller
		// share would round to 0, every error over the bound); written so
		// NaN fails too.
		if err != nil || !strings.HasSuffix(c.Errors, "%") || !(f >= 0.0001 && f <= 50) {
			p.Add("errors", `must be a percentage from 0.0001 to 50, "2%%", got %q`, c.Errors)
		} else {
			a.ErrorsPPM = int64(f*10_000 + 0.5)
		}
	}
	switch {
	case c.MinActive < 0:
		p.Add("min_active", "must be >= 0 (0: a quarter of max_active), got %d", c.MinActive)
	case c.MinActive > maxActive:
		p.Add("min_active", "must be at most max_active (%d), got %d", maxActive, c.MinActive)
	case c.MinActive == 0:
		a.MinActive = max(maxActive/4, 1)
	default:
		a.MinActive = c.MinActive
	}
	if maxActive < 1 {
		p.Add("min_active", "the autopilot needs a max_active of at least 1 (its ceiling), got %d", maxActive)
	}
	a.Interval = defaultAutopilotGap
	if c.Interval != "" {
		a.Interval = p.Duration("interval", c.Interval, minAutopilotStep)
	}
	if len(c.Exclude) > maxExclude {
		p.Add("exclude", "must list at most %d prefixes, got %d", maxExclude, len(c.Exclude))
	}
	for i, e := range c.Exclude {
		if !strings.HasPrefix(e, "/") || len(e) > 256 {
			p.Add(fmt.Sprintf("exclude[%d]", i), `must be a path prefix starting with "/" (at most 256 bytes), got %q`, e)
		}
	}
	a.Exclude = c.Exclude
	a.Warmup = AutopilotWarmup
	if c.Warmup != "" {
		a.Warmup = p.Duration("warmup", c.Warmup, 0)
		if a.Warmup > maxAutopilotWarmup {
			p.Add("warmup", "must be at most %s, got %q", conf.Short(maxAutopilotWarmup), c.Warmup)
		}
	}
	if c.StartAbove != "" {
		r, err := ParseRate(c.StartAbove)
		switch {
		case err != nil:
			p.Add("start_above", "%v", err)
		case r.IsUnlimited():
			p.Add("start_above", `must be a rate such as "500/s" ("" for none), got %q`, c.StartAbove)
		default:
			a.StartAbove = r
		}
	}
	return a, p.Err()
}

// Excluded reports whether requests for path go unmeasured.
func (a *Autopilot) Excluded(path string) bool {
	for _, e := range a.Exclude {
		if strings.HasPrefix(path, e) {
			return true
		}
	}
	return false
}
