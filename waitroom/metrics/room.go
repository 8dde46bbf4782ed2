package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/waitroom"
)

// Tick adds what one admission tick of this instance did in room: visitors
// admitted from the line, waiting visitors dropped for not polling, and
// sessions found expired. Pass the store's Admitted as is, AdmitN's included.
func (m *Metrics) Tick(room string, a waitroom.Admitted) {
	if m == nil {
		return
	}
	rs := m.room(label(room))
	// Add(0) is cheap too, but most ticks of a quiet room do nothing.
	if a.Admitted > 0 {
		rs.admissions.Add(float64(a.Admitted))
	}
	if a.Abandoned > 0 {
		rs.abandonments.Add(float64(a.Abandoned))
	}
	if a.Expired > 0 {
		rs.expiries.Add(float64(a.Expired))
	}
}

// Admitted counts one visitor this instance let into room at once (Decide
// admitted it on arrival), which no tick reports.
func (m *Metrics) Admitted(room string) {
	if m == nil {
		return
	}
	m.room(label(room)).admissions.Inc()
}

// Released counts a session or place in room that this instance ended, by
// how: "upstream" (the site answered "Waitroom-Command: release"), "leave"
// (the visitor's /leave) or "admin" (the admin API).
func (m *Metrics) Released(room, how string) {
	if m == nil {
		return
	}
	room = label(room)
	if i := indexOf(hows[:], how); i >= 0 {
		m.room(room).releases[i].Inc()
		return
	}
	m.releases.WithLabelValues(room, how).Inc()
}

// Room sets room's gauges from st, the snapshot the admitter reads from the
// store each tick. The gauges describe the room as the store holds it, the
// same on every instance.
func (m *Metrics) Room(room string, st waitroom.Stats) {
	if m == nil {
		return
	}
	room = label(room)
	m.queue.WithLabelValues(room).Set(float64(st.Waiting))
	m.active.WithLabelValues(room).Set(float64(st.Active))
	m.lastMinute.WithLabelValues(room).Set(float64(st.AdmittedLastMinute))
	m.publishVisitors(room)
}

// Forget deletes every series of room, for a room a reload removed, so
// its last gauges do not linger as if it still had a line. Call it after the
// room's admitter has stopped; a request still in flight for the room may
// count into a series already gone, which is lost, as the room is.
func (m *Metrics) Forget(room string) {
	if m == nil {
		return
	}
	room = label(room)
	m.rooms.delete(room, func() {
		l := prometheus.Labels{"room": room}
		for _, v := range []deleter{
			m.requests, m.admissions, m.abandonments, m.expiries, m.releases,
			m.queue, m.active, m.lastMinute, m.refusals, m.sessionRefs, m.challenges, m.restores, m.templateRooms,
			m.waits, m.sessions,
		} {
			v.DeletePartialMatch(l)
		}
		for _, v := range m.watchVectors() {
			v.DeletePartialMatch(l)
		}
		m.forgetAutopilot(l)
	})
}

// TemplateRooms publishes how many rooms the template fills on this
// instance. A template's rooms share its series (the gate and the
// admitters label them with the template's name), so the series do not
// grow with the events.
func (m *Metrics) TemplateRooms(template string, n int) {
	if m == nil {
		return
	}
	m.templateRooms.WithLabelValues(label(template)).Set(float64(n))
}

// Waited observes a visitor's wait from its ticket's issue to its
// admission, in waitroom_wait_seconds.
func (m *Metrics) Waited(room string, d time.Duration) {
	if m == nil {
		return
	}
	m.waits.WithLabelValues(label(room)).Observe(d.Seconds())
}

// SessionEnded observes the time inside of a session a release ended, in
// waitroom_session_seconds.
func (m *Metrics) SessionEnded(room string, d time.Duration) {
	if m == nil {
		return
	}
	m.sessions.WithLabelValues(label(room)).Observe(d.Seconds())
}

// deleter is the part of a metric vector Forget needs.
type deleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

// room returns room's resolved counters; room is already labelled.
func (m *Metrics) room(room string) *roomSeries {
	if rs, ok := m.rooms.load(room); ok {
		return rs
	}
	return m.rooms.get(room, m.newRoom)
}

// JoinRefused counts a newcomer turned away without a ticket.
func (m *Metrics) JoinRefused(room, reason string) {
	if m != nil {
		m.refusals.WithLabelValues(label(room), reason).Inc()
	}
}

// SessionRefused counts a request an admitted session refused.
func (m *Metrics) SessionRefused(room, reason string) {
	if m != nil {
		m.sessionRefs.WithLabelValues(label(room), reason).Inc()
	}
}

// Challenge counts a proof of work issued or checked.
func (m *Metrics) Challenge(room, result string) {
	if m != nil {
		m.challenges.WithLabelValues(label(room), result).Inc()
	}
}

// Restored counts a place or session put back after a data loss.
func (m *Metrics) Restored(room, kind string) {
	if m != nil {
		m.restores.WithLabelValues(label(room), kind).Inc()
	}
}
