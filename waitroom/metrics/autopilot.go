package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/waitroom"
)

// autopilotSeries are a room's autopilot figures (waitroom.AutopilotView),
// set every tick of a room with one; the same on every instance but while
// an instance cannot reach the store, whose series keep the frozen limit.
type autopilotSeries struct {
	limit, latency, errorShare, frozen *prometheus.GaugeVec
}

func (m *Metrics) defineAutopilot() []prometheus.Collector {
	m.auto = autopilotSeries{
		limit: gaugeVec("waitroom_autopilot_limit",
			"The limit the room's autopilot puts in effect (its max_active now; a pinned override's while pinned)."),
		latency: gaugeVec("waitroom_autopilot_latency_seconds",
			"The site's time to first byte at the autopilot's percentile, over its last step, from every instance."),
		errorShare: gaugeVec("waitroom_autopilot_error_share",
			"The share (0-1) of admitted requests that failed (5xx, 502/504 of the gateway) over the autopilot's last step."),
		frozen: gaugeVec("waitroom_autopilot_frozen",
			"1 while this instance cannot reach the store and holds the autopilot's last limit."),
	}
	return []prometheus.Collector{m.auto.limit, m.auto.latency, m.auto.errorShare, m.auto.frozen}
}

// Autopilot publishes where room's autopilot stands
// (waitroom.AutopilotObserver).
func (m *Metrics) Autopilot(room string, v *waitroom.AutopilotView) {
	if m == nil || v == nil {
		return
	}
	room = label(room)
	m.auto.limit.WithLabelValues(room).Set(float64(v.Limit))
	m.auto.latency.WithLabelValues(room).Set(v.Latency.Seconds())
	m.auto.errorShare.WithLabelValues(room).Set(v.ErrorShare())
	frozen := 0.0
	if v.Frozen {
		frozen = 1
	}
	m.auto.frozen.WithLabelValues(room).Set(frozen)
}

// forgetAutopilot drops a removed room's autopilot series.
func (m *Metrics) forgetAutopilot(l prometheus.Labels) {
	for _, v := range []deleter{m.auto.limit, m.auto.latency, m.auto.errorShare, m.auto.frozen} {
		v.DeletePartialMatch(l)
	}
}
