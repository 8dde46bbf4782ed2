package waitroom

import (
	"strings"
	"testing"
	"time"
)

// TestAutopilotConfig_Warmup: the default, "0s" (time every request), the
// bound, a bad value, and warmup alone without a target.
func TestAutopilotConfig_Warmup(t *testing.T) {
	a, err := AutopilotConfig{Target: "800ms"}.Build(100)
	if err != nil || a.Warmup != AutopilotWarmup {
		t.Fatalf("default: %v, %v; want %v", a, err, AutopilotWarmup)
	}
	for raw, want := range map[string]time.Duration{"0s": 0, "700ms": 700 * time.Millisecond, "5m": 5 * time.Minute} {
		a, err := AutopilotConfig{Target: "800ms", Warmup: raw}.Build(100)
		if err != nil || a.Warmup != want {
			t.Errorf("warmup %q: %v, %v; want %v", raw, a, err, want)
		}
	}
	for _, bad := range []string{"-1s", "6m", "soon"} {
		if _, err := (AutopilotConfig{Target: "800ms", Warmup: bad}).Build(100); err == nil {
			t.Errorf("warmup %q accepted", bad)
		}
	}
	if _, err := (AutopilotConfig{Warmup: "1s"}).Build(100); err == nil {
		t.Error("warmup without a target accepted")
	}
	if a, err := (AutopilotConfig{Warmup: "5s"}).Build(100); a != nil || err != nil {
		t.Errorf("the default warmup alone: %v, %v; want off", a, err)
	}
}

// TestAutopilotConfig_Errors: the bound in parts per million, its least
// (0.0001%, 1 ppm) and its most, and what would round to 0 ppm or is not a
// number refused.
func TestAutopilotConfig_Errors(t *testing.T) {
	for raw, want := range map[string]int64{"": 20_000, "2%": 20_000, "0.0001%": 1, "0.5%": 5_000, "50%": 500_000} {
		a, err := AutopilotConfig{Target: "800ms", Errors: raw}.Build(100)
		if err != nil || a.ErrorsPPM != want {
			t.Errorf("errors %q: %v, %v; want %d ppm", raw, a, err, want)
		}
	}
	for _, bad := range []string{"0%", "0.00001%", "0.00009%", "-1%", "51%", "NaN%", "Inf%", "2", "two%"} {
		if _, err := (AutopilotConfig{Target: "800ms", Errors: bad}).Build(100); err == nil {
			t.Errorf("errors %q accepted", bad)
		}
	}
}

// TestAutopilotConfig_WarmupUnderSessionMax: a warmup as long as the
// room's session_max would leave no request timed; refused, and allowed
// with session_max off.
func TestAutopilotConfig_WarmupUnderSessionMax(t *testing.T) {
	c := DefaultRoom()
	c.MaxActive, c.SessionMax = 100, "1m"
	c.Autopilot = AutopilotConfig{Target: "800ms", Warmup: "1m"}
	if _, err := c.Build("shop"); err == nil || !strings.Contains(err.Error(), "autopilot.warmup") {
		t.Fatalf("warmup 1m, session_max 1m: %v, want refused", err)
	}
	c.Autopilot.Warmup = "59s"
	if _, err := c.Build("shop"); err != nil {
		t.Fatalf("warmup 59s, session_max 1m: %v", err)
	}
	c.Autopilot.Warmup, c.SessionMax = "5m", "0s"
	if _, err := c.Build("shop"); err != nil {
		t.Fatalf("warmup 5m, session_max off: %v", err)
	}
}
