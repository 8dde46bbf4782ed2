package metrics

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// The closed label sets. Each array's order is the index its resolved series
// are kept at.
var (
	decisions     = [...]string{"admitted", "queued", "bypass", "refused", "preflight", "error"}
	hows          = [...]string{"upstream", "leave", "admin"}
	reasons       = [...]string{"invalid", "expired", "other"}
	reloadResults = [...]string{"ok", "error", "unchanged"}
	classes       = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "error"}
	opResults     = [...]string{"ok", "error", "canceled"}
)

// Indexes into the arrays above that the code names.
const (
	reasonOther = 2
	classError  = 5
)

const (
	resultOK = iota
	resultError
	resultCanceled
)

// indexOf returns s's index in set, or -1. A loop beats a map for four to
// nine short strings, and allocates nothing.
func indexOf(set []string, s string) int {
	for i, v := range set {
		if v == s {
			return i
		}
	}
	return -1
}

// noRoom stands for the empty room: Prometheus reads an empty label value as
// no label at all, which would merge routeless requests into the bare metric.
const noRoom = "-"

func label(s string) string {
	if s == "" {
		return noRoom
	}
	return s
}

// roomSeries are a room's counters, resolved when the room is first seen
// (Declare, when it is put in service). The gauges are not here: Room sets
// them once a tick.
type roomSeries struct {
	requests     [len(decisions)]prometheus.Counter
	releases     [len(hows)]prometheus.Counter
	admissions   prometheus.Counter
	abandonments prometheus.Counter
	expiries     prometheus.Counter
	watch        *roomWatch
}

func (m *Metrics) newRoom(room string) *roomSeries {
	rs := &roomSeries{
		admissions:   m.admissions.WithLabelValues(room),
		abandonments: m.abandonments.WithLabelValues(room),
		expiries:     m.expiries.WithLabelValues(room),
		watch:        m.newWatch(room),
	}
	for i, d := range decisions {
		rs.requests[i] = m.requests.WithLabelValues(room, d)
	}
	for i, h := range hows {
		rs.releases[i] = m.releases.WithLabelValues(room, h)
	}
	return rs
}

// upstreamSeries is an upstream's histogram, one child per status class.
type upstreamSeries [len(classes)]prometheus.Observer

func (m *Metrics) newUpstream(upstream string) *upstreamSeries {
	var us upstreamSeries
	for i, c := range classes {
		us[i] = m.upstream.WithLabelValues(upstream, c)
	}
	return &us
}

// index maps a label value (a room, an upstream) to its resolved series.
// Reading is an atomic load and a map lookup, with no lock, so concurrent
// requests never contend; adding or removing a key copies the map, which is
// cheap for sets that change only with the configuration.
type index[V any] struct {
	mu sync.Mutex // serializes writers
	m  atomic.Pointer[map[string]V]
}

// load returns key's value if it has one. Callers try it before get, so the
// common path builds no func value for get's build argument.
func (x *index[V]) load(key string) (V, bool) {
	if m := x.m.Load(); m != nil {
		v, ok := (*m)[key]
		return v, ok
	}
	var zero V
	return zero, false
}

// get returns key's value, building it with build the first time.
func (x *index[V]) get(key string, build func(string) V) V {
	x.mu.Lock()
	defer x.mu.Unlock()
	var old map[string]V
	if p := x.m.Load(); p != nil {
		old = *p
	}
	if v, ok := old[key]; ok { // another writer got here first
		return v
	}
	next := make(map[string]V, len(old)+1)
	maps.Copy(next, old)
	v := build(key)
	next[key] = v
	x.m.Store(&next)
	return v
}

// delete removes key, then runs drop while still holding the writer lock,
// so a concurrent get cannot rebuild series that drop is deleting.
func (x *index[V]) delete(key string, drop func()) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p := x.m.Load(); p != nil {
		if _, ok := (*p)[key]; ok {
			next := maps.Clone(*p)
			delete(next, key)
			x.m.Store(&next)
		}
	}
	drop()
}
