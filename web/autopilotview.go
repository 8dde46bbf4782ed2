package web

import (
	"math"

	"github.com/waitroom/waitroom/waitroom"
)

// AutopilotView is a room's autopilot as the admin API shows it: the limit
// in effect and the rate with it, what the last step measured, and why
// the limit is what it is ("p90 1.4s > 800ms", "pinned").
type AutopilotView struct {
	Limit      int     `json:"limit"`
	Rate       string  `json:"rate"`
	Latency    float64 `json:"latency_seconds"`
	ErrorShare float64 `json:"error_share"`
	Reason     string  `json:"reason"`
	// State names the reason for a reader in another language (the
	// dashboard's Korean): "rise", "slow", "pinned", … (autopilotStates).
	State    string `json:"state"`
	Pinned   bool   `json:"pinned"`
	Frozen   bool   `json:"frozen"`
	Steps    int64  `json:"steps"`
	Requests int64  `json:"requests"` // measured over the last step, every instance
	// Inside is the most sessions inside any instance's report of the
	// last step saw.
	Inside int64 `json:"inside"`
	// StartAbove is autopilot.start_above ("" without one) and
	// ArrivalsPerSecond the arrivals judged against it (absent until
	// measured); Quiet: under it with the site healthy, everyone goes
	// straight in up to max_active.
	StartAbove        string   `json:"start_above,omitempty"`
	ArrivalsPerSecond *float64 `json:"arrivals_per_second,omitempty"`
	Quiet             bool     `json:"quiet"`
	MinActive         int      `json:"min_active"`
	MaxActive         int      `json:"max_active"`
	Target            float64  `json:"target_seconds"`
	Percentile        int      `json:"percentile"`
}

// autopilotView is nil for a room without an autopilot.
func autopilotView(v *waitroom.AutopilotView) *AutopilotView {
	if v == nil {
		return nil
	}
	out := &AutopilotView{Limit: v.Limit, Rate: v.Rate.String(), Latency: v.Latency.Seconds(), ErrorShare: v.ErrorShare(),
		Reason: v.ReasonText(), State: autopilotState(v), Pinned: v.Reason == waitroom.ReasonPinned, Frozen: v.Frozen, Steps: v.Step,
		Requests: v.Samples, Inside: v.Active, MinActive: v.Min, MaxActive: v.Max, Target: v.Target.Seconds(), Percentile: v.Percentile, Quiet: v.Quiet}
	if !v.StartAbove.IsUnlimited() {
		out.StartAbove = v.StartAbove.String()
		if !math.IsNaN(v.Arrivals) {
			a := math.Round(v.Arrivals*100) / 100
			out.ArrivalsPerSecond = &a
		}
	}
	return out
}

// autopilotStates name waitroom's AutopilotReason values, in their order.
var autopilotStates = [...]string{waitroom.ReasonStart: "start", waitroom.ReasonIdle: "idle", waitroom.ReasonRise: "rise",
	waitroom.ReasonUnused: "unused", waitroom.ReasonSlow: "slow", waitroom.ReasonErrors: "errors",
	waitroom.ReasonDraining: "draining", waitroom.ReasonPinned: "pinned", waitroom.ReasonCeiling: "ceiling",
	waitroom.ReasonFloor: "floor", waitroom.ReasonFrozen: "frozen", waitroom.ReasonRecovering: "recovering",
	waitroom.ReasonAtTarget: "at_target", waitroom.ReasonSettling: "settling",
	waitroom.ReasonBackoff: "backoff", waitroom.ReasonKnee: "knee"}

// autopilotState is v's state name: "frozen" while the store is
// unreachable, whatever the last reason was.
func autopilotState(v *waitroom.AutopilotView) string {
	if v.Frozen {
		return "frozen"
	}
	if v.Quiet {
		return "quiet"
	}
	if int(v.Reason) >= 0 && int(v.Reason) < len(autopilotStates) {
		return autopilotStates[v.Reason]
	}
	return "unknown"
}
