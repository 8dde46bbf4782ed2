package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// storeErrors is waitroom_store_errors_total{kind} and
// waitroom_store_wait_shortfalls_total, registered by DeclareStoreErrors
// with the kinds the Redis store sorts its errors into (this package
// does not import the store).
type storeErrors struct {
	once sync.Once
	vec  *prometheus.CounterVec
	// kinds are the declared kinds' series; another kind is dropped, so
	// the series stay the closed set the store declared.
	kinds map[string]prometheus.Counter
	// short is waitroom_store_wait_shortfalls_total.
	short prometheus.Counter
}

// DeclareStoreErrors registers waitroom_store_errors_total with one
// series per kind, each at 0, and waitroom_store_wait_shortfalls_total, so that rate() has a starting point. The
// first call wins; later ones change nothing.
func (m *Metrics) DeclareStoreErrors(kinds []string) {
	if m == nil {
		return
	}
	m.storeErrs.once.Do(func() {
		vec := counterVec("waitroom_store_errors_total",
			"Failed store calls, by kind (unreachable, readonly, masterdown, loading, clusterdown, tryagain, noreplicas, oom, busy, other).", "kind")
		series := make(map[string]prometheus.Counter, len(kinds))
		for _, k := range kinds {
			series[k] = vec.WithLabelValues(k)
		}
		short := prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitroom_store_wait_shortfalls_total",
			Help: "Writes after which WAIT timed out with fewer replicas than store.redis.wait_replicas (the writes stand).",
		})
		m.reg.MustRegister(vec, short)
		m.storeErrs.vec, m.storeErrs.kinds, m.storeErrs.short = vec, series, short
	})
}

// StoreError counts a failed store call of a declared kind; safe for
// concurrent use once DeclareStoreErrors returned.
func (m *Metrics) StoreError(kind string) {
	if m == nil {
		return
	}
	if c, ok := m.storeErrs.kinds[kind]; ok {
		c.Inc()
	}
}

// WaitShortfall counts a write after which WAIT timed out with fewer
// replicas than wanted.
func (m *Metrics) WaitShortfall() {
	if m == nil || m.storeErrs.short == nil {
		return
	}
	m.storeErrs.short.Inc()
}
