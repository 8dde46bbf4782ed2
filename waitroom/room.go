package waitroom

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RoomConfig is one entry of the `rooms:` section, as written in YAML.
// Durations and rates are strings with units so that "90" is refused rather
// than read as 90 nanoseconds.
type RoomConfig struct {
	// MaxActive is the number of sessions inside at once. Default 100; 0
	// admits nobody.
	MaxActive int `mapstructure:"max_active" yaml:"max_active" json:"max_active"`
	// AdmitRate is how many new visitors go in per period, "300/m". Default
	// "unlimited": only MaxActive applies.
	AdmitRate string `mapstructure:"admit_rate" yaml:"admit_rate" json:"admit_rate"`
	// AdmitBurst is the token bucket's size. Default 0: one second's worth of
	// AdmitRate, at least 1.
	AdmitBurst int `mapstructure:"admit_burst" yaml:"admit_burst" json:"admit_burst"`
	// SessionTTL is how long a session lasts after the visitor's last request.
	// Default "10m".
	SessionTTL string `mapstructure:"session_ttl" yaml:"session_ttl" json:"session_ttl"`
	// AbandonAfter drops a waiting visitor who has not polled for this long.
	// Default "2m"; must be at least twice the page's refresh interval.
	AbandonAfter string `mapstructure:"abandon_after" yaml:"abandon_after" json:"abandon_after"`
	// RecoveryGrace is how long, after the store shows it lost its data (a
	// ticket older than its data comes back), only returning ticket holders
	// are let in. Default "": the same as AbandonAfter; "0s" disables it.
	RecoveryGrace string `mapstructure:"recovery_grace" yaml:"recovery_grace" json:"recovery_grace"`
	// Tick is how often the admitter moves the line. Default "1s".
	Tick string `mapstructure:"tick" yaml:"tick" json:"tick"`
	// StatusCode is the HTTP status of a waiting answer: 200 (default), 202 or 429.
	StatusCode int `mapstructure:"status_code" yaml:"status_code" json:"status_code"`
	// Mode is "fifo" (default), "random", "passthrough", "reject" or
	// "paused"; the admin API can change it at run time.
	Mode string `mapstructure:"mode" yaml:"mode" json:"mode"`
	// Schedule opens and closes a sale at fixed times; default none.
	Schedule ScheduleConfig `mapstructure:"schedule" yaml:"schedule" json:"schedule"`
}

// DefaultRoom returns the defaults every room starts from.
func DefaultRoom() RoomConfig {
	return RoomConfig{
		MaxActive:    100,
		AdmitRate:    Unlimited,
		SessionTTL:   "10m",
		AbandonAfter: "2m",
		Tick:         "1s",
		StatusCode:   200,
		Mode:         string(ModeFIFO),
	}
}

// Room is a validated room, ready to use.
type Room struct {
	Name       string
	Limits     Limits
	Tick       time.Duration
	StatusCode int
	Mode       Mode
	Schedule   Schedule
	// Refresh is how often a waiting visitor asks again, and Title the
	// room's display name; both come from the room's page section, which
	// the web package owns.
	Refresh    time.Duration
	RefreshMax time.Duration // the longest poll interval far back in line
	Title      string
	Message    string // the notice on the waiting page (page.message)
}

// Validate reports every problem of the room config, each as "key: rule, got
// value" with keys relative to the room.
func (c RoomConfig) Validate() error {
	_, err := c.Build("")
	return err
}

// Build parses and checks the config; the error lists every problem.
func (c RoomConfig) Build(name string) (Room, error) {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	r := Room{Name: name, StatusCode: c.StatusCode}
	if c.MaxActive < 0 {
		bad("max_active", "must be >= 0, got %d", c.MaxActive)
	}
	r.Limits.MaxActive = c.MaxActive
	rate, err := ParseRate(c.AdmitRate)
	if err != nil {
		bad("admit_rate", "%v", err)
	}
	r.Limits.AdmitRate = rate
	switch {
	case c.AdmitBurst < 0:
		bad("admit_burst", "must be >= 0 (0 means one second's worth of admit_rate), got %d", c.AdmitBurst)
	case c.AdmitBurst > maxRateN:
		bad("admit_burst", "must be <= %d, got %d", maxRateN, c.AdmitBurst)
	case c.AdmitBurst == 0:
		r.Limits.AdmitBurst = rate.DefaultBurst()
	default:
		r.Limits.AdmitBurst = c.AdmitBurst
	}
	durations := []durationField{
		{"session_ttl", c.SessionTTL, time.Millisecond, &r.Limits.SessionTTL},
		{"abandon_after", c.AbandonAfter, time.Millisecond, &r.Limits.AbandonAfter},
		{"tick", c.Tick, time.Millisecond, &r.Tick},
	}
	if c.RecoveryGrace != "" {
		durations = append(durations, durationField{"recovery_grace", c.RecoveryGrace, 0, &r.Limits.RecoveryGrace})
	}
	for _, d := range durations {
		v, err := ParseDuration(d.raw)
		switch {
		case err != nil:
			bad(d.key, "%v", err)
		case v < d.min:
			bad(d.key, "must be at least %v, got %q", d.min, d.raw)
		}
		*d.dst = v
	}
	if c.RecoveryGrace == "" {
		r.Limits.RecoveryGrace = r.Limits.AbandonAfter
	}
	if sched, err := c.Schedule.Build(); err != nil {
		errs = append(errs, prefixErrs("schedule.", err)...)
	} else {
		r.Schedule = sched
	}
	if m, err := ParseMode(c.Mode); err != nil {
		bad("mode", "%v", err)
	} else {
		r.Mode = m
	}
	switch c.StatusCode {
	case 200, 202, 429:
	default:
		bad("status_code", "must be 200, 202 or 429, got %d", c.StatusCode)
	}
	return r, errors.Join(errs...)
}

// durationField is one duration key of a section, its minimum and where the
// parsed value goes.
type durationField struct {
	key string
	raw string
	min time.Duration
	dst *time.Duration
}

// ParseDuration reads a Go duration that carries a unit ("90s", "2m"). A bare
// number is refused with a hint, since YAML would otherwise make 90 mean 90ns.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New(`want a duration such as "90s" or "2m", got ""`)
	}
	if strings.Trim(s, "0123456789.") == "" {
		return 0, fmt.Errorf(`want a duration with a unit such as "%ss", got %q`, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`want a duration such as "90s" or "2m", got %q`, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
	}
	return d, nil
}

// prefixErrs puts prefix before every problem of a joined error.
func prefixErrs(prefix string, err error) []error {
	var out []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, fmt.Errorf("%s%w", prefix, e))
		}
		return out
	}
	return []error{fmt.Errorf("%s%w", prefix, err)}
}
