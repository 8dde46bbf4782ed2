package main

import (
	"strings"
	"testing"
)

// TestAutopilotConfig_IntervalUnderTick: an interval shorter than the
// room's tick is allowed (the limit moves once a tick) but warned of, by
// name, at start and by `waitroom check`; none at the default tick.
func TestAutopilotConfig_IntervalUnderTick(t *testing.T) {
	for _, c := range []struct {
		room string
		warn bool
	}{
		{"    max_active: 10\n    tick: 1s\n    autopilot: { target: 1s, interval: 500ms }", true},
		{"    max_active: 10\n    tick: 100ms\n    autopilot: { target: 1s, interval: 500ms }", false},
		{"    max_active: 10\n    autopilot: { target: 1s }", false},
	} {
		cfg, err := parseConfig("t.yaml", []byte(gwConfig("http://127.0.0.1:1", c.room)))
		if err != nil {
			t.Fatalf("%q: %v", c.room, err)
		}
		warned := false
		for _, w := range cfg.warnings {
			if strings.Contains(w, "rooms.concert.autopilot.interval (500ms) is shorter than the room's tick (1s)") {
				warned = true
			}
		}
		if warned != c.warn {
			t.Errorf("%q: warnings %q, want the interval warned of: %v", c.room, cfg.warnings, c.warn)
		}
	}
}
