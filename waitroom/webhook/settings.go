package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DeliveryConfig is the webhook_delivery section: how the dispatcher
// queues, sends and retries, as written in YAML. Durations carry a unit.
type DeliveryConfig struct {
	// QueueSize bounds the deliveries (one event to one endpoint) queued or
	// waiting for a retry; past it Send drops and counts. Default 1000.
	QueueSize int `mapstructure:"queue_size" yaml:"queue_size" json:"queue_size"`
	// Workers is how many requests may be in flight at once. Default 8.
	Workers int `mapstructure:"workers" yaml:"workers" json:"workers"`
	// MaxAttempts is how many times one delivery is tried, the first
	// included. Default 8.
	MaxAttempts int `mapstructure:"max_attempts" yaml:"max_attempts" json:"max_attempts"`
	// BackoffBase is the wait before the first retry, doubled for each
	// further one (±20% jitter). Default "2s".
	BackoffBase string `mapstructure:"backoff_base" yaml:"backoff_base" json:"backoff_base"`
	// BackoffMax caps the wait between two attempts, a Retry-After
	// included. Default "5m".
	BackoffMax string `mapstructure:"backoff_max" yaml:"backoff_max" json:"backoff_max"`
	// Timeout bounds one attempt, from connecting to reading the answer.
	// Default "15s".
	Timeout string `mapstructure:"timeout" yaml:"timeout" json:"timeout"`
	// ClaimTTL is how long the store remembers that an instance took an
	// event, so no other instance sends it: longer than instances may take
	// to notice the same fact. Default "1h".
	ClaimTTL string `mapstructure:"claim_ttl" yaml:"claim_ttl" json:"claim_ttl"`
}

// Delivery is a DeliveryConfig built. In Options, a zero field takes the
// default.
type Delivery struct {
	QueueSize   int
	Workers     int
	MaxAttempts int
	BackoffBase time.Duration
	BackoffMax  time.Duration
	Timeout     time.Duration
	ClaimTTL    time.Duration
}

// DefaultDeliveryConfig is the section's defaults.
func DefaultDeliveryConfig() DeliveryConfig {
	return DeliveryConfig{
		QueueSize: 1000, Workers: 8, MaxAttempts: 8,
		BackoffBase: "2s", BackoffMax: "5m", Timeout: "15s", ClaimTTL: "1h",
	}
}

// defaultDelivery is DefaultDeliveryConfig built.
var defaultDelivery = Delivery{
	QueueSize: 1000, Workers: 8, MaxAttempts: 8,
	BackoffBase: 2 * time.Second, BackoffMax: 5 * time.Minute, Timeout: 15 * time.Second, ClaimTTL: time.Hour,
}

// withDefaults fills the zero fields.
func (d Delivery) withDefaults() Delivery {
	def := defaultDelivery
	pick := func(v, dv int) int {
		if v > 0 {
			return v
		}
		return dv
	}
	pickD := func(v, dv time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return dv
	}
	return Delivery{
		QueueSize: pick(d.QueueSize, def.QueueSize), Workers: pick(d.Workers, def.Workers),
		MaxAttempts: pick(d.MaxAttempts, def.MaxAttempts),
		BackoffBase: pickD(d.BackoffBase, def.BackoffBase), BackoffMax: pickD(d.BackoffMax, max(d.BackoffBase, def.BackoffMax)),
		Timeout: pickD(d.Timeout, def.Timeout), ClaimTTL: pickD(d.ClaimTTL, def.ClaimTTL),
	}
}

// Validate reports every problem of the section, keys relative to it.
func (c DeliveryConfig) Validate() error {
	_, err := c.Build()
	return err
}

// Build checks the section and returns it built, or every problem.
func (c DeliveryConfig) Build() (Delivery, error) {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	ints := []struct {
		key       string
		v, lo, hi int
	}{
		{"queue_size", c.QueueSize, 1, 100_000},
		{"workers", c.Workers, 1, 256},
		{"max_attempts", c.MaxAttempts, 1, 30},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			bad(f.key, "must be from %d to %d, got %d", f.lo, f.hi, f.v)
		}
	}
	d := Delivery{QueueSize: c.QueueSize, Workers: c.Workers, MaxAttempts: c.MaxAttempts}
	durs := []struct {
		key, raw string
		lo, hi   time.Duration
		dst      *time.Duration
	}{
		{"backoff_base", c.BackoffBase, time.Millisecond, time.Hour, &d.BackoffBase},
		{"backoff_max", c.BackoffMax, time.Millisecond, 24 * time.Hour, &d.BackoffMax},
		{"timeout", c.Timeout, time.Millisecond, 5 * time.Minute, &d.Timeout},
		{"claim_ttl", c.ClaimTTL, time.Second, 7 * 24 * time.Hour, &d.ClaimTTL},
	}
	for _, f := range durs {
		v, err := parseDuration(f.raw)
		switch {
		case err != nil:
			bad(f.key, "%v", err)
		case v < f.lo || v > f.hi:
			bad(f.key, "must be from %v to %v, got %q", f.lo, f.hi, f.raw)
		default:
			*f.dst = v
		}
	}
	if d.BackoffBase > 0 && d.BackoffMax > 0 && d.BackoffMax < d.BackoffBase {
		bad("backoff_max", "must be >= backoff_base (%q), got %q", c.BackoffBase, c.BackoffMax)
	}
	if err := errors.Join(errs...); err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// parseDuration reads a Go duration that carries a unit ("15s", "2m"). A
// bare number is refused with a hint, since YAML would otherwise make 15
// mean 15ns. It mirrors waitroom.ParseDuration, which this package must
// not import.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New(`want a duration such as "15s" or "2m", got ""`)
	}
	if strings.Trim(s, "0123456789.") == "" {
		return 0, fmt.Errorf(`want a duration with a unit such as "%ss", got %q`, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`want a duration such as "15s" or "2m", got %.64q`, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
	}
	return d, nil
}
