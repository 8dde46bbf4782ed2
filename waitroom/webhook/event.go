package webhook

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EventType names what happened, as sent in the payload's "type" and listed
// in an endpoint's events.
type EventType string

// The events a gateway sends. docs/webhooks.md describes each one's data.
const (
	// QueueStarted: a room that let everyone straight in starts queueing
	// (its line goes from empty to not empty). Data: QueueStartedData.
	QueueStarted EventType = "queue.started"
	// QueueDrained: the room's line is empty again. Data: QueueDrainedData.
	QueueDrained EventType = "queue.drained"
	// RoomModeChanged: the room's mode changed (fifo, random, passthrough,
	// reject, paused), by configuration or through the admin API. Data:
	// ModeChangedData.
	RoomModeChanged EventType = "room.mode_changed"
	// RoomClosed: the room closed (sold out). Data: RoomClosedData.
	RoomClosed EventType = "room.closed"
	// VisitorAdmitted: a visitor with a site-signed identity was let in, so
	// the site can tell that person. Visitors without one are not sent.
	// Data: VisitorAdmittedData.
	VisitorAdmitted EventType = "visitor.admitted"
	// RoomAutopilotChanged: the room's autopilot moved its limit (rose,
	// cut, or took the operator's pin). Rate-limited by the gateway: at
	// most one rise and one fall a minute per room. Data:
	// AutopilotChangedData.
	RoomAutopilotChanged EventType = "room.autopilot_changed"
)

// eventTypes are the event types, in the order docs and errors name them.
var eventTypes = [...]EventType{QueueStarted, QueueDrained, RoomModeChanged, RoomClosed, VisitorAdmitted, RoomAutopilotChanged}

// Events lists every event type.
func Events() []EventType { return slices.Clone(eventTypes[:]) }

// Known reports whether t is one of Events.
func (t EventType) Known() bool { return slices.Contains(eventTypes[:], t) }

// knownList is the list for error messages: "queue.started, ...".
func knownList() string {
	names := make([]string, len(eventTypes))
	for i, t := range eventTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// Event is one thing to tell the endpoints subscribed to its Type.
type Event struct {
	Type EventType
	// ID is the dedupe key: the same for every instance that sees the same
	// fact, different for different facts; Key builds one. The webhook-id
	// sent is derived from it (MessageID), so it is the same on every
	// attempt and every instance, and receivers dedupe on it. Empty means an
	// event only this instance can know: it gets a random id and is never
	// checked with the Claimer.
	ID string
	// Time is when it happened (the payload's "timestamp"); zero means the
	// moment Send is called.
	Time time.Time
	// Data is the event's data, encoded as JSON when Send is called (so the
	// caller may reuse it afterwards): one of the *Data types of this
	// package for the event's Type.
	Data any
}

// Key is a dedupe key for an event of type t in room, about fact: something
// every instance that sees the event knows alike, such as the first ticket
// of the line that started, the override's change stamp, or a visitor's id
// and ticket. The room is quoted so a room name holding ':' cannot make two
// keys meet.
func Key(t EventType, room, fact string) string {
	return "room:" + strconv.Quote(room) + ":" + string(t) + ":" + fact
}

// The data of each event type, with the JSON names receivers see.
type (
	// QueueStartedData is the data of queue.started.
	QueueStartedData struct {
		Room string `json:"room"`
		// Waiting is how many waited when the gateway noticed.
		Waiting int64 `json:"waiting"`
	}
	// QueueDrainedData is the data of queue.drained.
	QueueDrainedData struct {
		Room string `json:"room"`
	}
	// ModeChangedData is the data of room.mode_changed.
	ModeChangedData struct {
		Room string `json:"room"`
		From string `json:"from"`
		To   string `json:"to"`
		// By is "config" (a reload) or "admin" (the admin API).
		By string `json:"by"`
	}
	// RoomClosedData is the data of room.closed.
	RoomClosedData struct {
		Room string `json:"room"`
		// By is "upstream" (the site's response header), "admin" or
		// "config".
		By string `json:"by"`
	}
	// VisitorAdmittedData is the data of visitor.admitted.
	VisitorAdmittedData struct {
		Room    string `json:"room"`
		Visitor string `json:"visitor"`
		// Account is the account of the visitor's site-signed identity.
		Account string `json:"account"`
		// Until is when the admission runs out unless renewed.
		Until time.Time `json:"until"`
	}
	// AutopilotChangedData is the data of room.autopilot_changed.
	AutopilotChangedData struct {
		Room string `json:"room"`
		// From and To are the limit (the room's max_active in effect)
		// before and after; Rate the admission rate that goes with To.
		From int    `json:"from"`
		To   int    `json:"to"`
		Rate string `json:"rate"`
		// Reason says why, as the admin API does: "p90 1.4s > 800ms".
		Reason string `json:"reason"`
		// LatencySeconds and ErrorShare (0 to 1) are what the step that
		// moved it measured.
		LatencySeconds float64 `json:"latency_seconds"`
		ErrorShare     float64 `json:"error_share"`
	}
)

// payload is the body every endpoint gets: the Standard Webhooks shape.
type payload struct {
	Type      EventType `json:"type"`
	Timestamp string    `json:"timestamp"`
	Data      any       `json:"data"`
}

// maxBody bounds an encoded event. Events are a handful of short fields;
// anything near this is a bug in the caller, and receivers are asked to
// take small bodies.
const maxBody = 16 << 10

// encode is the body sent for e, with at standing in for a zero e.Time.
func encode(e Event, at time.Time) ([]byte, error) {
	if !e.Time.IsZero() {
		at = e.Time
	}
	body, err := json.Marshal(payload{Type: e.Type, Timestamp: at.UTC().Format(time.RFC3339Nano), Data: e.Data})
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", e.Type, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("encoding %s: %d bytes, more than %d", e.Type, len(body), maxBody)
	}
	return body, nil
}

// MessageID is the webhook-id sent for dedupe key id: "msg_" and 24
// URL-safe base64 characters of its SHA-256, so it never holds the '.' the
// signed content uses as a separator, nor anything of the key itself. An
// empty id gets a random one.
func MessageID(id string) string {
	var sum [sha256.Size]byte
	if id == "" {
		_, _ = rand.Read(sum[:]) // never fails (crypto/rand)
	} else {
		sum = sha256.Sum256([]byte(id))
	}
	return "msg_" + base64.RawURLEncoding.EncodeToString(sum[:18])
}
