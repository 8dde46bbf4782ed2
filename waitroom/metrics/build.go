package metrics

import (
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// lifecycle is what a dashboard needs on a quiet day: which build runs,
// and whether the last reload of the file took. Both exist from start, so
// a panel never says "No data" for want of an event.
type lifecycle struct {
	build          *prometheus.GaugeVec // version, goversion
	reloadOK       prometheus.Gauge
	reloadOKSecond prometheus.Gauge
}

func (m *Metrics) defineLifecycle() []prometheus.Collector {
	m.build = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitroom_build_info",
		Help: "1, labelled with the running build's version and Go version.",
	}, []string{"version", "goversion"})
	m.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "waitroom_config_last_reload_successful",
		Help: "1 when the last reload of the configuration took (or found it unchanged), 0 when it was refused and the one before runs on.",
	})
	m.reloadOKSecond = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "waitroom_config_last_reload_success_timestamp_seconds",
		Help: "When the configuration in service was last loaded, in Unix seconds (the start counts).",
	})
	m.reloadOK.Set(1)
	m.reloadOKSecond.Set(float64(time.Now().Unix()))
	return []prometheus.Collector{m.build, m.reloadOK, m.reloadOKSecond}
}

// BuildInfo names the running build in waitroom_build_info.
func (m *Metrics) BuildInfo(version string) {
	if m == nil {
		return
	}
	m.build.Reset()
	m.build.WithLabelValues(version, runtime.Version()).Set(1)
}

// lastReload keeps the last-reload gauges for a reload's result.
func (m *Metrics) lastReload(result string) {
	switch result {
	case "ok":
		m.reloadOK.Set(1)
		m.reloadOKSecond.Set(float64(time.Now().Unix()))
	case "unchanged":
		m.reloadOK.Set(1)
	case "error":
		m.reloadOK.Set(0)
	}
}
