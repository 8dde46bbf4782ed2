package metrics

import "github.com/waitroom/waitroom/waitroom/webhook"

// The label values a room's refusal, challenge and restore series are
// declared with (Declare): what the gate records. A value recorded but not
// listed still counts, from its first event on.
var (
	joinReasons      = [...]string{"quota", "full", "challenge", "identity"}
	templateReasons  = [...]string{"create", "rooms"} // a template's own: rooms it would not make
	sessionReasons   = [...]string{"shared", "session_max", "sockets"}
	challengeResults = [...]string{"issued", "ok"}
	restoreKinds     = [...]string{"waiting", "inside", "release"}
	webhookEvents    = [...]webhook.EventType{webhook.QueueStarted, webhook.QueueDrained, webhook.RoomModeChanged,
		webhook.RoomClosed, webhook.VisitorAdmitted}
	webhookResults = [...]webhook.Result{webhook.ResultSent, webhook.ResultRetried, webhook.ResultFailedStatus,
		webhook.ResultFailedNetwork, webhook.ResultAbandoned, webhook.ResultDropped, webhook.ResultDuplicate,
		webhook.ResultInvalid, webhook.ResultClaimError}
)

// Declare exports every series of a room in service (or of a template,
// whose name labels the rooms it fills) at 0 before its first event: a
// dashboard's rate() needs a starting point, and a panel of a quiet room
// should read 0, not "No data". It never resets a series that already
// counts, so calling it again on every reload is harmless. The gauges read
// 0 until the room's first tick (at once, then every tick) sets them from
// the store; aggregated with max() over instances, as they are meant to be,
// the one instance that has not ticked yet does not show.
func (m *Metrics) Declare(room string, template bool) {
	if m == nil {
		return
	}
	room = label(room)
	m.room(room) // requests, admissions, abandonments, expiries, releases
	m.queue.WithLabelValues(room)
	m.active.WithLabelValues(room)
	m.lastMinute.WithLabelValues(room)
	m.waits.WithLabelValues(room)
	m.sessions.WithLabelValues(room)
	for _, r := range joinReasons {
		m.refusals.WithLabelValues(room, r)
	}
	for _, r := range sessionReasons {
		m.sessionRefs.WithLabelValues(room, r)
	}
	for _, r := range challengeResults {
		m.challenges.WithLabelValues(room, r)
	}
	for _, k := range restoreKinds {
		m.restores.WithLabelValues(room, k)
	}
	if template {
		m.templateRooms.WithLabelValues(room)
		for _, r := range templateReasons {
			m.refusals.WithLabelValues(room, r)
		}
	}
}

// DeclareUpstream exports an upstream's latency histogram, one child per
// status class, before its first request.
func (m *Metrics) DeclareUpstream(upstream string) {
	if m == nil {
		return
	}
	upstream = label(upstream)
	if _, ok := m.upstreams.load(upstream); !ok {
		m.upstreams.get(upstream, m.newUpstream)
	}
}

// declareWebhooks exports every event and result of webhook deliveries at
// 0: both sets are closed, and a delivery that never failed should read 0
// failures.
func (m *Metrics) declareWebhooks() {
	for _, e := range webhookEvents {
		for _, r := range webhookResults {
			m.webhooks.WithLabelValues(string(e), string(r))
		}
	}
}
