package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

// Request counts one request through the gate of room ("" for a route
// without a room) by its outcome, under the decision label of decisionOf.
func (m *Metrics) Request(room string, o waitroom.Outcome) {
	decision := decisionOf(o)
	if m == nil || decision == "" {
		return
	}
	room = label(room)
	if i := indexOf(decisions[:], decision); i >= 0 {
		m.room(room).requests[i].Inc()
		return
	}
	m.requests.WithLabelValues(room, decision).Inc()
}

// decisionOf is the decision label o is counted under: "admitted" (passed
// to the upstream inside a session), "queued" (got the waiting page or its
// JSON), "bypass" (sent on without a room's line), "refused" (turned away:
// a quota, a full line, a challenge), "preflight" (a CORS preflight) or
// "error" (the store failed, or the visitor went away). The labels predate
// waitroom.Outcome and dashboards query them (deploy/grafana), so three
// outcomes keep the older, coarser word: a newcomer's first answer
// (joined) is "queued", a store failure (hold) is "error", a route without
// a room (proxied) is "bypass". The visitor endpoints' outcomes (poll,
// enter, left) and none are not counted here: "". Any other value is its
// own label.
func decisionOf(o waitroom.Outcome) string {
	switch o {
	case waitroom.OutcomeJoined:
		return "queued"
	case waitroom.OutcomeHold:
		return "error"
	case waitroom.OutcomeProxied:
		return "bypass"
	case waitroom.OutcomePoll, waitroom.OutcomeEnter, waitroom.OutcomeLeft, waitroom.OutcomeNone, "":
		return ""
	}
	return string(o)
}

// TicketRejected counts a ticket (cookie or Waitroom-Token) that was sent but
// not accepted, by reason: "invalid" (failed authentication or decoding:
// tampered, truncated, or signed with keys no longer configured), "expired"
// (authentic but older than cookie.max_age) or "other" (authentic but
// unusable: another room's, another format version, a malformed visitor id).
// Any other reason counts as "other", so the label set stays closed.
func (m *Metrics) TicketRejected(reason string) {
	if m == nil {
		return
	}
	i := indexOf(reasons[:], reason)
	if i < 0 {
		i = reasonOther
	}
	m.rejected[i].Inc()
}

// Upstream observes one proxied request to upstream that took d and ended
// with status. The class is that of the status the client got, whoever wrote
// it: a 502 or 504 the proxy wrote for an unreachable or slow upstream is
// "5xx" like one the upstream sent, and a client that went away first (499)
// is "4xx". That keeps one rule that matches the visitors' experience; the
// logs tell which side wrote the status. A status outside 100-599 (0: none
// was written) is "error". An empty upstream name reads "-".
func (m *Metrics) Upstream(upstream string, status int, d time.Duration) {
	if m == nil {
		return
	}
	upstream = label(upstream)
	us, ok := m.upstreams.load(upstream)
	if !ok {
		us = m.upstreams.get(upstream, m.newUpstream)
	}
	us[classOf(status)].Observe(d.Seconds())
}

func classOf(status int) int {
	if status < 100 || status > 599 {
		return classError
	}
	return status/100 - 1
}

// StoreOp observes one store call op that took d and returned err. The
// result is "ok" for a nil error and also for waitroom.ErrNotFound,
// waitroom.ErrTooManySockets, waitroom.ErrTooManyRooms and
// waitroom.ErrExists, expected answers (releasing a visitor already gone, a
// session's socket too many, a template's room too many, a definition
// created twice), not store failures; "canceled" when the caller's context
// was canceled (a visitor closing the tab says nothing about the store);
// "error" otherwise, timeouts included. Store calls this for every method;
// the op names are decide, admit, admit_n, release, stats, ping,
// set_override, clear_override, override, shuffle, socket, allow,
// use_room, definitions_version, load_definitions, put_definition and
// delete_definition.
func (m *Metrics) StoreOp(op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	if i := indexOf(ops[:], op); i >= 0 {
		m.storeOp(i, d, err)
		return
	}
	m.store.WithLabelValues(op, opResults[resultOf(err)]).Observe(d.Seconds())
}

func (m *Metrics) storeOp(op int, d time.Duration, err error) {
	m.storeOps[op][resultOf(err)].Observe(d.Seconds())
}

func resultOf(err error) int {
	switch {
	case err == nil, errors.Is(err, waitroom.ErrNotFound), errors.Is(err, waitroom.ErrTooManySockets),
		errors.Is(err, waitroom.ErrTooManyRooms), errors.Is(err, waitroom.ErrExists):
		return resultOK
	case errors.Is(err, context.Canceled):
		return resultCanceled
	default:
		return resultError
	}
}

// Reload counts a configuration reload by result: "ok" (a new configuration
// is running), "error" (the file was refused; the old one keeps running) or
// "unchanged" (the file said nothing new).
func (m *Metrics) Reload(result string) {
	if m == nil {
		return
	}
	m.lastReload(result)
	if i := indexOf(reloadResults[:], result); i >= 0 {
		m.reloaded[i].Inc()
		return
	}
	m.reloads.WithLabelValues(result).Inc()
}

// Webhook counts a webhook delivery's result (webhook.Observer).
func (m *Metrics) Webhook(event webhook.EventType, result webhook.Result) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(string(event), string(result)).Inc()
}

// ConnRefused counts a connection closed for server.max_conns_per_client.
func (m *Metrics) ConnRefused() {
	if m == nil {
		return
	}
	m.connsRefused.Inc()
}

// Outage counts the store going from answering to not answering. Call it on
// the transition, not on every failed call; StoreUp reports the state.
func (m *Metrics) Outage() {
	if m == nil {
		return
	}
	m.outages.Inc()
}

// Failover counts a failover this instance noticed (waitroom.Observer).
func (m *Metrics) Failover() {
	if m == nil {
		return
	}
	m.failovers.Inc()
}

// StoreUp sets waitroom_store_up to 1 when up, else 0.
func (m *Metrics) StoreUp(up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.storeUp.Set(v)
}
