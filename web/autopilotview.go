package web

import "github.com/waitroom/waitroom/waitroom"

// AutopilotView is a room's autopilot as the admin API shows it: the limit
// in effect and the rate with it, what the last step measured, and why
// the limit is what it is ("p90 1.4s > 800ms", "pinned").
type AutopilotView struct {
	Limit      int     `json:"limit"`
	Rate       string  `json:"rate"`
	Latency    float64 `json:"latency_seconds"`
	ErrorShare float64 `json:"error_share"`
	Reason     string  `json:"reason"`
	Pinned     bool    `json:"pinned"`
	Frozen     bool    `json:"frozen"`
	Steps      int64   `json:"steps"`
	Requests   int64   `json:"requests"` // measured over the last step, every instance
	MinActive  int     `json:"min_active"`
	MaxActive  int     `json:"max_active"`
	Target     float64 `json:"target_seconds"`
	Percentile int     `json:"percentile"`
}

// autopilotView is nil for a room without an autopilot.
func autopilotView(v *waitroom.AutopilotView) *AutopilotView {
	if v == nil {
		return nil
	}
	return &AutopilotView{Limit: v.Limit, Rate: v.Rate.String(), Latency: v.Latency.Seconds(), ErrorShare: v.ErrorShare(),
		Reason: v.ReasonText(), Pinned: v.Reason == waitroom.ReasonPinned, Frozen: v.Frozen, Steps: v.Step,
		Requests: v.Samples, MinActive: v.Min, MaxActive: v.Max, Target: v.Target.Seconds(), Percentile: v.Percentile}
}
