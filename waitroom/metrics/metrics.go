package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Buckets, in seconds. Upstream latency runs from a cached page to the 30s
// default proxy timeout (a slower upstream answers 504). Store calls are
// sub-millisecond for memstore and a round trip for Redis; past a second
// something is wrong and the exact figure matters less.
var (
	upstreamBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	storeBuckets    = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	// A wait is seconds to hours; a session minutes.
	waitBuckets    = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}
	sessionBuckets = []float64{10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600}
)

// Metrics records the gateway's metrics into a registry of its own. Its
// methods are safe for concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	requests     *prometheus.CounterVec   // room, decision
	rejections   *prometheus.CounterVec   // reason
	upstream     *prometheus.HistogramVec // upstream, class
	store        *prometheus.HistogramVec // op, result
	admissions   *prometheus.CounterVec   // room
	abandonments *prometheus.CounterVec   // room
	expiries     *prometheus.CounterVec   // room
	releases     *prometheus.CounterVec   // room, how
	queue        *prometheus.GaugeVec     // room
	active       *prometheus.GaugeVec     // room
	lastMinute   *prometheus.GaugeVec     // room
	reloads      *prometheus.CounterVec   // result
	refusals     *prometheus.CounterVec   // room, reason
	sessionRefs  *prometheus.CounterVec   // room, reason
	challenges   *prometheus.CounterVec   // room, result
	restores     *prometheus.CounterVec   // room, kind
	outages      prometheus.Counter
	failovers    prometheus.Counter
	storeUp      prometheus.Gauge
	connsRefused prometheus.Counter
	// templateRooms is per template, one series each however many events.
	templateRooms *prometheus.GaugeVec
	webhooks      *prometheus.CounterVec // event, result
	storeErrs     storeErrors            // kind (storeerrors.go)
	// waits and sessions are how long people waited and stayed, by room.
	waits, sessions *prometheus.HistogramVec
	auto            autopilotSeries
	watch           watchSeries
	lifecycle

	// Children resolved once, so recording does no label hashing.
	rejected  [len(reasons)]prometheus.Counter
	reloaded  [len(reloadResults)]prometheus.Counter
	storeOps  [len(ops)][len(opResults)]prometheus.Observer
	rooms     index[*roomSeries]
	upstreams index[*upstreamSeries]
}

// New returns Metrics with every series registered, the Go runtime and
// process collectors included.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.defineRooms()
	m.defineEdges()
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.admissions, m.abandonments, m.expiries, m.releases,
		m.queue, m.active, m.lastMinute, m.refusals, m.sessionRefs, m.challenges, m.restores, m.templateRooms, m.waits, m.sessions,
		m.rejections, m.upstream, m.store, m.reloads, m.outages, m.failovers, m.storeUp, m.connsRefused, m.webhooks,
	)
	m.reg.MustRegister(m.defineLifecycle()...)
	m.reg.MustRegister(m.defineAutopilot()...)
	m.reg.MustRegister(m.defineWatch()...)
	m.resolve()
	m.declareWebhooks()
	// Built once: InstrumentMetricHandler registers its own counters, and
	// ContinueOnError serves what could be gathered when one collector fails
	// (say, /proc unreadable) rather than a 500 that hides everything.
	m.handler = promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	}))
	return m
}

// defineRooms creates the series labelled by room.
func (m *Metrics) defineRooms() {
	m.requests = counterVec("waitroom_requests_total",
		"Requests through the gate, by room and decision (admitted, queued, bypass, error).", "room", "decision")
	m.admissions = counterVec("waitroom_admissions_total",
		"Visitors this instance let in, by a tick, by an admin admit or at once.", "room")
	m.abandonments = counterVec("waitroom_abandonments_total",
		"Waiting visitors this instance's ticks dropped for not polling.", "room")
	m.expiries = counterVec("waitroom_expiries_total",
		"Sessions this instance's ticks found expired.", "room")
	m.releases = counterVec("waitroom_releases_total",
		"Sessions or places this instance ended, by how (upstream, leave, admin).", "room", "how")
	m.queue = gaugeVec("waitroom_queue_length",
		"Visitors in line, from the store's last snapshot (shared by all instances).")
	m.active = gaugeVec("waitroom_active_sessions",
		"Sessions inside, from the store's last snapshot (shared by all instances).")
	m.waits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "waitroom_wait_seconds",
		Help:    "How long visitors this instance let in had waited, from their ticket's issue (0: in at once).",
		Buckets: waitBuckets,
	}, []string{"room"})
	m.sessions = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "waitroom_session_seconds",
		Help:    "Time inside of the sessions a release ended (by the site or the visitor's leave).",
		Buckets: sessionBuckets,
	}, []string{"room"})
	m.templateRooms = gaugeVec("waitroom_template_rooms",
		"Rooms a room template fills on this instance now (room is the template's name).")
	m.lastMinute = gaugeVec("waitroom_admitted_last_minute",
		"Admissions in the last 60 seconds, from the store's last snapshot (shared by all instances).")
	m.refusals = counterVec("waitroom_joins_refused_total",
		"Newcomers this instance turned away without a ticket, by reason (quota, full, challenge, identity).", "room", "reason")
	m.sessionRefs = counterVec("waitroom_session_refusals_total",
		"Requests an admitted session refused, by reason (shared: past session_clients; session_max).", "room", "reason")
	m.challenges = counterVec("waitroom_challenges_total",
		"Proofs of work issued and checked, by result (issued, ok, or why one was refused).", "room", "result")
	m.restores = counterVec("waitroom_restores_total",
		"Places and sessions put back after the store lost its data (all of it, or the last writes in a failover), and releases it had lost applied again, by kind (waiting, inside, release).", "room", "kind")
}

// defineEdges creates the series of what surrounds the rooms: tickets,
// upstreams, the store and the configuration.
func (m *Metrics) defineEdges() {
	m.rejections = counterVec("waitroom_ticket_rejections_total",
		"Tickets presented but refused, by reason (invalid, expired, other).", "reason")
	m.upstream = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "waitroom_upstream_duration_seconds",
		Help:    "Time to answer a proxied request, by upstream and the status class the client got (error: no status).",
		Buckets: upstreamBuckets,
	}, []string{"upstream", "class"})
	m.store = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "waitroom_store_duration_seconds",
		Help:    "Time of store calls, by operation and result (ok, error, canceled).",
		Buckets: storeBuckets,
	}, []string{"op", "result"})
	m.reloads = counterVec("waitroom_config_reloads_total",
		"Configuration reloads, by result (ok, error, unchanged).", "result")
	m.connsRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "waitroom_conns_refused_total",
		Help: "Connections this instance closed because their client network held server.max_conns_per_client already.",
	})
	m.webhooks = counterVec("waitroom_webhooks_total",
		"Webhook deliveries by event and result (sent, retried, failed_status, failed_network, abandoned, dropped, duplicate, invalid, claim_error).",
		"event", "result")
	m.outages = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "waitroom_store_outages_total",
		Help: "Times the store stopped answering.",
	})
	m.failovers = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "waitroom_store_failovers_total",
		Help: "Failovers this instance noticed: the store had lost its last writes and repaired the rooms (one count for the rooms repaired within 30s).",
	})
	m.storeUp = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "waitroom_store_up",
		Help: "1 while the store answers, 0 while it does not.",
	})
}

// resolve creates the series of the closed label sets up front, so they are
// exported as 0 before the first event (rate() needs a starting point) and
// recording them costs no lookup.
func (m *Metrics) resolve() {
	for i, r := range reasons {
		m.rejected[i] = m.rejections.WithLabelValues(r)
	}
	for i, r := range reloadResults {
		m.reloaded[i] = m.reloads.WithLabelValues(r)
	}
	for i, op := range ops {
		for j, r := range opResults {
			m.storeOps[i][j] = m.store.WithLabelValues(op, r)
		}
	}
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gaugeVec(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"room"})
}
