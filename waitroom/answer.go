package waitroom

import (
	"net/http"
	"time"
)

// Request headers the upstream receives on every admitted request. The
// application strips client-sent values before the gate runs.
const (
	VisitorHeader = "Waitroom-Visitor"
	RoomHeader    = "Waitroom-Room"
)

// StateHeader is set on every answer the gate makes itself (a waiting page,
// a status, a refused write), never on the site's: a client, a load tester
// or a CDN rule can tell "in line" from "the site" without reading bodies.
const StateHeader = "Waitroom-State"

// AnswerState is what an answer the gate makes itself says of the visitor:
// the JSON's "state", the Waitroom-State header, and which words the page
// shows. Clients switch on these values, so they never change meaning.
type AnswerState string

// The answer states.
const (
	// AnswerWaiting: in line; the position is known.
	AnswerWaiting AnswerState = "waiting"
	// AnswerAdmitted: inside; the page moves on to where the visitor was going.
	AnswerAdmitted AnswerState = "admitted"
	// AnswerPaused: in line in a room that admits nobody for now.
	AnswerPaused AnswerState = "paused"
	// AnswerPrequeue: holds a ticket before a scheduled sale opens; no
	// position yet, since the opening's draw decides it.
	AnswerPrequeue AnswerState = "prequeue"
	// AnswerClosed: the room takes nobody new (mode reject, a sale before
	// or after its hours, a room a reload removed).
	AnswerClosed AnswerState = "closed"
	// AnswerHold: the store cannot be reached; the visitor is asked to wait
	// and the page keeps asking.
	AnswerHold AnswerState = "hold"
	// AnswerNone: the status endpoint found no ticket; the page reloads to
	// join.
	AnswerNone AnswerState = "none"
	// AnswerLeft: the visitor gave up its place (/.waitroom/leave).
	AnswerLeft AnswerState = "left"
	// AnswerChallenge: the visitor must solve Answer.Challenge before it
	// gets a ticket; its place in arrival order is already taken.
	AnswerChallenge AnswerState = "challenge"
	// AnswerLimited: the visitor's network took its join_limit of
	// tickets; no ticket, try again after Answer.RetryAfter (429).
	AnswerLimited AnswerState = "limited"
	// AnswerFull: the line holds max_waiting people; no ticket (503).
	AnswerFull AnswerState = "full"
	// AnswerIdentity: the room lets in only visitors the site signed in
	// (identity.required), and this one is not (403).
	AnswerIdentity AnswerState = "identity"
	// AnswerShared: the admission the ticket (or the account) holds is in
	// use by as many clients as session_clients allows (409); the ticket
	// is kept, and Answer.RetryAfter says when to ask again.
	AnswerShared AnswerState = "shared"
)

// Refused reports whether the state turns the visitor away without a
// ticket: Responder.Refused words it.
func (s AnswerState) Refused() bool {
	switch s {
	case AnswerLimited, AnswerFull, AnswerIdentity, AnswerShared:
		return true
	}
	return false
}

// Answer is what a visitor who does not go through is told.
type Answer struct {
	Room string
	// Template and Params, for a room filled in from a template, name the
	// template (whose page settings apply) and the values that filled it.
	Template string
	Params   []Param
	State    AnswerState
	Decision Decision
	ETA      time.Duration
	ETAKnown bool
	// ETAMax, when more than ETA, makes the estimate a range: the line
	// moved unevenly over the last minutes.
	ETAMax time.Duration
	// Stopped: the room lets nobody in now (mode paused, or max_active
	// 0), so there is no estimate and the page says so.
	Stopped    bool
	Progress   float64 // 0..1, from the position the visitor joined at
	Refresh    time.Duration
	ReturnTo   string // same-site request URI to go to once admitted
	Token      string // the encoded ticket, for app clients
	StatusCode int    // status of a waiting answer
	Message    string // the operator's notice for the room
	// Challenge is the proof of work of an AnswerChallenge.
	Challenge *ChallengeAnswer
	// RetryAfter is when a refused visitor may try again (AnswerLimited).
	RetryAfter time.Duration
	// Preview, for a preview link's answer (Gate.Preview), is the link's
	// own path and query: the page polls it instead of the status
	// endpoint, offers no leave, and says it is a preview. "" for a
	// visitor.
	Preview string
}

// ChallengeAnswer is a proof of work to solve: a nonce such that
// SHA-256(Prefix + nonce) starts with Bits zero bits, sent back as
// "Waitroom-Challenge: <Prefix>:<nonce>" (docs/challenge.md).
type ChallengeAnswer struct {
	Prefix string
	Bits   int
}

// Responder renders answers; package web implements it.
type Responder interface {
	// Waiting answers a GET or HEAD in line: HTML page or JSON by Accept.
	Waiting(w http.ResponseWriter, r *http.Request, a Answer)
	// Status answers /.waitroom/status, always JSON.
	Status(w http.ResponseWriter, r *http.Request, a Answer)
	// NotForwarded refuses a waiting visitor's POST, PUT, PATCH or DELETE.
	NotForwarded(w http.ResponseWriter, r *http.Request, a Answer)
	// Refused turns a visitor away without a ticket (a.State.Refused()):
	// 429 with Retry-After, 503, 403 or 409, as a page or JSON.
	Refused(w http.ResponseWriter, r *http.Request, a Answer)
	// Left confirms /.waitroom/leave: JSON to a client that asks for it;
	// a browser's POST is sent on to LeftPath (303), whose GET it answers
	// with the page.
	Left(w http.ResponseWriter, r *http.Request, a Answer)
	// Error answers with a branded error page.
	Error(w http.ResponseWriter, r *http.Request, status int)
}
