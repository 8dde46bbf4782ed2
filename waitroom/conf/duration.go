package conf

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ParseDuration reads a Go duration that carries a unit ("90s", "2m"). A
// bare number is refused with a hint, since YAML would otherwise make 90
// mean 90ns; so is a negative one.
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

// Duration parses raw as the value of key and records a problem when it is
// not a duration or is shorter than least. It returns what it read (0 after
// a problem), so a Build can fill its result and report in one pass.
func (p *Problems) Duration(key, raw string, least time.Duration) time.Duration {
	d, err := ParseDuration(raw)
	switch {
	case err != nil:
		p.Add(key, "%v", err)
		return 0
	case d < least && least == time.Nanosecond:
		p.Add(key, "must be more than 0, got %q", raw)
	case d < least:
		p.Add(key, "must be at least %s, got %q", Short(least), raw)
	}
	return d
}

// Short spells d the way a configuration would: "1m", "1h30m", "250ms",
// without the "0s" tails of time.Duration's String.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
