package waitroom

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
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
	client     func(r *http.Request) netip.Addr
	networks   Networks
	challenges *challenge.Issuer
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
	// Client is the client's address as the front door worked it out
	// (from trusted proxies' headers, or the peer). Nil reads the peer.
	Client func(r *http.Request) netip.Addr
	// Networks sizes the client networks per-client limits apply to.
	Networks Networks
	// Challenges issues and checks proofs of work for rooms with
	// challenge: pow (keys derived from the ticket keys). Nil refuses such
	// rooms' newcomers.
	Challenges *challenge.Issuer
	// Log receives new visitors and leaves at debug and info. Nil discards.
	Log *zap.Logger
}

// NewGate builds a gate.
func NewGate(o GateOptions) *Gate {
	g := &Gate{rooms: o.Rooms, tickets: o.Tickets, resp: o.Responder, roomOf: o.RoomOf, client: o.Client,
		networks: o.Networks, challenges: o.Challenges, log: o.Log}
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
	lr := g.rooms.get(room)
	if lr == nil {
		g.resp.Error(w, r, http.StatusNotFound)
		return
	}
	lr.visited()
	g.serve(w, r, lr, next)
}

// ServeFilled handles a request for a route whose room is a template
// (template, "event-{id}") filled from its path as room ("event-123"),
// creating the room on its first visit. Past the template's max_rooms in
// use, the answer is the "full" refusal (503 with Retry-After), counted.
func (g *Gate) ServeFilled(w http.ResponseWriter, r *http.Request, template, room string, params []Param, next http.Handler) {
	lr, err := g.rooms.Fill(r.Context(), template, room, params)
	switch {
	case errors.Is(err, ErrTooManyRooms):
		g.respond(w, r, Answer{Room: room, Template: template, Params: params, State: AnswerFull,
			RetryAfter: 30 * time.Second, StatusCode: http.StatusServiceUnavailable})
		return
	case err != nil:
		g.resp.Error(w, r, http.StatusNotFound)
		return
	}
	g.serve(w, r, lr, next)
}

func (g *Gate) serve(w http.ResponseWriter, r *http.Request, lr *liveRoom, next http.Handler) {
	room := lr.name
	if isPreflight(r) {
		g.preflight(w, r, lr, next)
		return
	}
	obs, label := g.rooms.obs, lr.label()
	// An auth check (nginx's auth_request) only asks whether the visitor is
	// in: it joins nobody, and anything but "in" is a bare 401, whose
	// waiting page nginx fetches by proxying the request here (error_page).
	join, respond := JoinTicket, g.respond
	if _, check := r.Context().Value(authCheck{}).(bool); check {
		join = JoinNone
		respond = func(w http.ResponseWriter, _ *http.Request, a Answer) {
			w.Header().Set(StateHeader, string(a.State))
			w.WriteHeader(http.StatusUnauthorized)
		}
	}
	p := g.tickets.Read(r, room)
	vt, err := g.visit(w, r, lr, p, join)
	if err != nil {
		obs.Request(label, "error")
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			note(r.Context(), room, "error", "")
			return // the visitor went away; nothing to answer
		}
		a, through := g.outage(lr, p, returnPath(r), err)
		note(r.Context(), room, "hold", p.Ticket.Visitor)
		if !through {
			respond(w, r, a)
			return
		}
		if p.Valid {
			vouch(r, room, p.Ticket.Visitor)
		}
		next.ServeHTTP(w, r)
		return
	}
	if p.Refused {
		obs.TicketRejected(p.Rejection)
	}
	if vt.refused != "" || vt.challenge != nil {
		obs.Request(label, "refused")
		note(r.Context(), room, "refused", "")
		respond(w, r, g.answer(vt, returnPath(r)))
		return
	}
	if !vt.fresh && vt.p.Valid && !vt.p.Cookie {
		// An app keeps its ticket in Waitroom-Token: give it back on every
		// answer, so a client can always carry the latest one.
		w.Header().Set(TokenHeader, vt.raw)
	}
	if vt.d.State != StateAdmitted {
		obs.Request(label, "queued")
		decision := "queued"
		if vt.fresh && !vt.p.Valid {
			decision = "joined" // a newcomer's first answer: its ticket
		}
		note(r.Context(), room, decision, vt.v.ID)
		respond(w, r, g.answer(vt, returnPath(r)))
		return
	}
	obs.Request(label, "admitted")
	note(r.Context(), room, "admitted", vt.v.ID)
	if vt.d.Joined {
		obs.Admitted(label)
	}
	vouch(r, room, vt.v.ID)
	ticket := vt.d.Ticket
	if ticket == 0 {
		ticket = vt.p.Ticket.Number
	}
	r = r.WithContext(withAdmission(r.Context(), Admission{Room: room, Visitor: vt.v.ID, Account: vt.account,
		Ticket: ticket, Entered: enteredAt(vt.p, vt.d, time.Now())}))
	if vt.fresh || w.Header().Get(TokenHeader) != "" {
		w = &privateWriter{ResponseWriter: w} // the ticket must not be cached for others
	}
	if isUpgrade(r.Header) {
		g.serveSocket(w, r, lr, vt.v, next)
		return
	}
	next.ServeHTTP(w, r)
}

type authCheck struct{}

// AuthCheck marks r as an auth check, nginx's auth_request: the gate
// answers 200 through next for a visitor inside, a bare 401 otherwise, and
// joins nobody (the waiting page, fetched through error_page, does that).
// Traefik's ForwardAuth and Envoy's ext_authz pass the gate's own answer on
// to the client, so they need no mark.
func AuthCheck(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), authCheck{}, true))
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
