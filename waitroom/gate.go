package waitroom

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// Gate puts requests for a room in front of its line: identify the visitor
// from its ticket, ask the store, then proxy or answer. It is the request
// path only, built from one configuration's tickets and pages over Rooms,
// which outlive it: a reload builds a new Gate.
type Gate struct {
	rooms      *Rooms
	tickets    *Tickets
	resp       Responder
	roomOf     func(r *http.Request, refererPath string) string
	networks   Networks
	challenges *challenge.Issuer
	previews   *Previews
	log        *zap.Logger
	limits     limitLog
	preflights preflightCache
}

// GateOptions wires a Gate. Rooms, Tickets and Responder are required.
type GateOptions struct {
	Rooms     *Rooms
	Tickets   *Tickets
	Responder Responder
	// RoomOf names the room a Referer path points into (the router's
	// answer), for the visitor endpoints when a request does not say.
	// Nil: they look at the visitor's tickets only.
	RoomOf func(r *http.Request, refererPath string) string
	// Networks sizes the client networks per-client limits apply to.
	Networks Networks
	// Challenges issues and checks proofs of work for rooms with
	// challenge: pow (keys derived from the ticket keys). Nil refuses such
	// rooms' newcomers.
	Challenges *challenge.Issuer
	// Previews opens preview links (PreviewPath; keys derived from the
	// ticket keys). Nil refuses every link.
	Previews *Previews
	// Log receives new visitors and leaves at debug and info. Nil discards.
	Log *zap.Logger
}

// NewGate builds a gate.
func NewGate(o GateOptions) *Gate {
	g := &Gate{rooms: o.Rooms, tickets: o.Tickets, resp: o.Responder, roomOf: o.RoomOf,
		networks: o.Networks, challenges: o.Challenges, previews: o.Previews, log: o.Log}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.networks.IPv4 <= 0 {
		g.networks.IPv4 = DefaultNetworkIPv4
	}
	if g.networks.IPv6 <= 0 {
		g.networks.IPv6 = DefaultNetworkIPv6
	}
	return g
}

// Serve handles a request for a route guarded by room; next proxies to the
// upstream.
func (g *Gate) Serve(w http.ResponseWriter, r *http.Request, room string, next http.Handler) {
	m := mode{join: JoinTicket, respond: g.respond}
	if lr := g.open(w, r, "", room, nil, m); lr != nil {
		g.serve(w, r, lr, next, m)
	}
}

// ServeFilled handles a request for a route whose room is a template
// (template, "event-{id}") filled from its path as room ("event-123"),
// making the room for a newcomer's ticket (within the client network's
// create_limit: past it, 429 with Retry-After). Past the template's
// max_rooms in use, a visitor who comes back with its ticket gets the
// "full" refusal (503 with Retry-After), counted.
func (g *Gate) ServeFilled(w http.ResponseWriter, r *http.Request, template, room string, params []Param, next http.Handler) {
	m := mode{join: JoinTicket, respond: g.respond}
	if lr := g.open(w, r, template, room, params, m); lr != nil {
		g.serve(w, r, lr, next, m)
	}
}

// Check answers an auth check, nginx's auth_request, with the decision
// Serve takes: through next (which answers 200) for a visitor inside, a
// bare 401 otherwise; it joins nobody (the waiting page, fetched through
// error_page, does that), so it makes no room a template would fill.
// template and params are "" and nil for a plain room. A preflight past
// its network's limit is 403, which nginx passes on.
func (g *Gate) Check(w http.ResponseWriter, r *http.Request, template, room string, params []Param, next http.Handler) {
	m := mode{join: JoinNone, respond: unauthorized, limited: http.StatusForbidden}
	if lr := g.open(w, r, template, room, params, m); lr != nil {
		g.serve(w, r, lr, next, m)
	}
}

// Forward answers an auth request of Traefik's forwardAuth or Envoy's
// ext_authz with the decision Serve takes: through next (which answers
// 200) for a visitor inside; otherwise the gate's own answer, which they
// pass on to the client, never with a 2xx status, which both take for
// "allowed": a waiting answer is 429 whatever the room's status_code.
func (g *Gate) Forward(w http.ResponseWriter, r *http.Request, template, room string, params []Param, next http.Handler) {
	m := mode{join: JoinTicket, respond: g.notYet, limited: http.StatusTooManyRequests}
	if lr := g.open(w, r, template, room, params, m); lr != nil {
		g.serve(w, r, lr, next, m)
	}
}

// mode is how a door asks: whether a newcomer joins, how an answer other
// than "in" is sent, and, for an auth request (which proxies nothing),
// the status of a preflight past its limit; 0 for the proxy's own door.
type mode struct {
	join    Join
	respond func(http.ResponseWriter, *http.Request, Answer)
	limited int
}

// unauthorized is an auth check's "not in": a bare 401 with the state.
func unauthorized(w http.ResponseWriter, _ *http.Request, a Answer) {
	w.Header().Set(StateHeader, string(a.State))
	w.WriteHeader(http.StatusUnauthorized)
}

// notYet is respond for forwardAuth and ext_authz: a waiting answer at
// 429 (its Retry-After the page's refresh), any other as respond sends it.
func (g *Gate) notYet(w http.ResponseWriter, r *http.Request, a Answer) {
	if a.StatusCode < 300 {
		a.StatusCode = http.StatusTooManyRequests
	}
	g.respond(w, r, a)
}

// open is the live room a request is for, filled from template when one
// is given (create); nil when it answered the request itself: no such
// room (404), a network past create_limit (429), or a check about a room
// nobody made yet (what a room answers a visitor without a ticket).
func (g *Gate) open(w http.ResponseWriter, r *http.Request, template, room string, params []Param, m mode) *liveRoom {
	if lr := g.rooms.get(room); lr != nil {
		g.rooms.visit(r.Context(), lr)
		return lr
	}
	if template == "" {
		g.resp.Error(w, r, http.StatusNotFound)
		return nil
	}
	lr, wait, err := g.create(r, template, room, params, m.join)
	switch {
	case wait > 0:
		m.respond(w, r, Answer{Room: room, Template: template, Params: params, State: AnswerLimited, RetryAfter: wait})
	case errors.Is(err, errNoRoomYet):
		m.respond(w, r, Answer{Room: room, Template: template, Params: params, State: AnswerNone})
	case err != nil:
		g.resp.Error(w, r, http.StatusNotFound)
	}
	return lr
}

// serve is a room's request, as httputil.ReverseProxy.ServeHTTP reads:
// decide, record, answer.
func (g *Gate) serve(w http.ResponseWriter, r *http.Request, lr *liveRoom, next http.Handler, m mode) {
	r, sc := Scoped(r)
	if isPreflight(r) {
		g.record(r, lr, OutcomePreflight, "")
		g.preflight(w, r, lr, next, m.limited)
		return
	}
	vt, o, err := g.decideRequest(w, r, lr, m.join)
	if (o == OutcomeJoined || o == OutcomeQueued || o == OutcomeAdmitted) && !g.settled(r.Context(), vt) {
		vt.refused, vt.retry, vt.v.ID, o = AnswerFull, fullRetry, "", OutcomeRefused
	}
	g.record(r, lr, o, vt.v.ID)
	g.watch(r, lr, vt, o, m)
	switch o {
	case OutcomeError:
		return // the visitor went away; nothing to answer
	case OutcomeHold:
		g.hold(w, r, lr, vt.p, err, next, m)
		return
	}
	if o != OutcomeRefused && !vt.fresh && vt.p.Valid && !vt.p.Cookie {
		// An app keeps its ticket in Waitroom-Token: give it back on every
		// answer, so a client can always carry the latest one.
		w.Header().Set(TokenHeader, vt.raw)
	}
	if o != OutcomeAdmitted {
		m.respond(w, r, g.answer(vt, returnPath(r)))
		return
	}
	g.admit(w, r, sc, vt, next)
}

// decideRequest is the gate's decision about a room's request: the
// visit and its Outcome, with the store's error behind OutcomeHold.
// vt.v.ID is the visitor the outcome is about, "" for none.
func (g *Gate) decideRequest(w http.ResponseWriter, r *http.Request, lr *liveRoom, join Join) (visit, Outcome, error) {
	p := g.tickets.Read(r, lr.name)
	vt, err := g.visit(w, r, lr, p, join)
	switch {
	case err != nil && errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return visit{}, OutcomeError, err
	case err != nil:
		return visit{p: p, v: Visitor{ID: p.Ticket.Visitor}}, OutcomeHold, err
	}
	if p.Refused {
		g.rooms.obs.TicketRejected(p.Rejection)
	}
	if p.Legacy {
		g.tickets.migrate(w, lr.name, vt.raw)
	}
	if lr.room().Identity.takeNotUTF8() {
		g.log.Warn("refused a signed identity whose account is not UTF-8; the site signs accounts it should not, and such visitors are anonymous (logged once per room)",
			zap.String(fieldRoom, lr.name))
	}
	switch {
	case vt.refused != "" || vt.challenge != nil:
		vt.v.ID = "" // a refusal names nobody: no ticket was taken
		return vt, OutcomeRefused, nil
	case vt.d.State == StateAdmitted:
		return vt, OutcomeAdmitted, nil
	case vt.fresh && !vt.p.Valid:
		return vt, OutcomeJoined, nil
	}
	return vt, OutcomeQueued, nil
}

// record is Record for a room's request.
func (g *Gate) record(r *http.Request, lr *liveRoom, o Outcome, visitor string) {
	Record(r, g.rooms.obs, lr.label(), lr.name, o, visitor)
}

// hold answers while the store cannot: the outage's answer, or through
// to next on its word.
func (g *Gate) hold(w http.ResponseWriter, r *http.Request, lr *liveRoom, p Presented, err error, next http.Handler, m mode) {
	a, through := g.outage(lr, p, returnPath(r), err)
	if !through {
		m.respond(w, r, a)
		return
	}
	if p.Valid {
		vouch(r, lr.name, p.Ticket.Visitor)
	}
	next.ServeHTTP(w, r)
}

// admit sends an admitted request on to next, telling the upstream who
// it is and the request's scope what was admitted.
func (g *Gate) admit(w http.ResponseWriter, r *http.Request, sc *Scope, vt visit, next http.Handler) {
	lr := vt.lr
	if vt.d.Joined {
		g.rooms.obs.Admitted(lr.label())
	}
	vouch(r, lr.name, vt.v.ID)
	ticket := vt.d.Ticket
	if ticket == 0 {
		ticket = vt.p.Ticket.Number
	}
	sc.Admission = &Admission{Room: lr.name, Visitor: vt.v.ID, Account: vt.account,
		Ticket: ticket, Entered: enteredAt(vt.p, vt.d, time.Now())}
	if vt.fresh || vt.p.Legacy || w.Header().Get(TokenHeader) != "" {
		w = &privateWriter{ResponseWriter: w} // the ticket must not be cached for others
	}
	if isUpgrade(r.Header) {
		g.serveSocket(w, r, lr, vt.v, next)
		return
	}
	next.ServeHTTP(w, r)
}

// vouch tells the upstream who the admitted visitor is. Client-sent values
// of these headers were removed before the gate ran.
func vouch(r *http.Request, room, visitor string) {
	r.Header.Set(VisitorHeader, visitor)
	r.Header.Set(RoomHeader, room)
}

// respond sends a not-admitted answer: a refusal for a visitor turned
// away, the waiting room (or its challenge) for a GET or HEAD, a refusal
// that says why for anything that would change something.
func (g *Gate) respond(w http.ResponseWriter, r *http.Request, a Answer) {
	if a.State.Refused() {
		g.resp.Refused(w, r, a)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		g.resp.NotForwarded(w, r, a)
		return
	}
	g.resp.Waiting(w, r, a)
}

// returnPath is where a waiting visitor goes once admitted: the page it
// asked for, or its path alone, or the front page, whichever is short
// enough to travel in a return_to.
func returnPath(r *http.Request) string {
	if u := r.URL.RequestURI(); len(u) <= maxReturnTo {
		return u
	}
	if len(r.URL.EscapedPath()) <= maxReturnTo {
		return r.URL.EscapedPath()
	}
	return "/"
}
