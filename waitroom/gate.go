package waitroom

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
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

// Answer is what a visitor who does not go through is told.
type Answer struct {
	Room     string
	State    string // "waiting", "admitted", "hold", "none" or "left"
	Decision Decision
	ETA      time.Duration
	ETAKnown bool
	// ETAMax, when more than ETA, makes the estimate a range: the line
	// moved unevenly over the last minutes.
	ETAMax     time.Duration
	Progress   float64 // 0..1, from the position the visitor joined at
	Refresh    time.Duration
	ReturnTo   string // same-site request URI to go to once admitted
	Token      string // the encoded ticket, for app clients
	StatusCode int    // status of a waiting answer
	Message    string // the operator's notice for the room
}

// Responder renders answers; package web implements it.
type Responder interface {
	// Waiting answers a GET or HEAD in line: HTML page or JSON by Accept.
	Waiting(w http.ResponseWriter, r *http.Request, a Answer)
	// Status answers /.waitroom/status, always JSON.
	Status(w http.ResponseWriter, r *http.Request, a Answer)
	// NotForwarded refuses a waiting visitor's POST, PUT, PATCH or DELETE.
	NotForwarded(w http.ResponseWriter, r *http.Request, a Answer)
	// Left confirms /.waitroom/leave.
	Left(w http.ResponseWriter, r *http.Request, a Answer)
	// Error answers with a branded error page.
	Error(w http.ResponseWriter, r *http.Request, status int)
}

// OnError is what the gate does while the store cannot be reached.
type OnError string

const (
	// OnErrorClosed lets through only visitors whose ticket carries a running
	// admission; everyone else is asked to hold.
	OnErrorClosed OnError = "closed"
	// OnErrorOpen lets everyone through.
	OnErrorOpen OnError = "open"
)

// Gate puts requests for a room in front of its line: identify the visitor
// from its ticket, ask the store, then proxy or answer.
type Gate struct {
	store   Store
	tickets *Tickets
	resp    Responder
	log     *zap.Logger
	onError OnError
	rooms   map[string]*line
	outage  atomic.Bool
	outages atomic.Int64
	now     func() time.Time
	// RoomOf names the room a Referer URL points into; used by the visitor
	// endpoints when the request does not say. Optional.
	RoomOf   func(r *http.Request, refererPath string) string
	obs      Observer
	sessions *sessionCache
}

// CacheSessions lets the gate trust for up to d that a visitor the store
// found inside is still inside, skipping the store on its requests in
// between (see sessionCache). 0, the default, asks the store every time.
// Call it before serving.
func (g *Gate) CacheSessions(d time.Duration) { g.sessions = newSessionCache(d) }

// Observe makes obs hear what the gate does; call it before serving.
func (g *Gate) Observe(obs Observer) { g.obs = obs }

// NewGate builds a gate over the given rooms.
func NewGate(store Store, tickets *Tickets, resp Responder, rooms []Room, onError OnError, log *zap.Logger) *Gate {
	g := &Gate{
		store: store, tickets: tickets, resp: resp, log: log, onError: onError,
		rooms: make(map[string]*line, len(rooms)), now: time.Now, obs: nopObserver{},
	}
	for _, r := range rooms {
		g.rooms[r.Name] = newLine(r)
	}
	return g
}

// Serve handles a request for a route guarded by room; next proxies to the
// upstream.
func (g *Gate) Serve(w http.ResponseWriter, r *http.Request, room string, next http.Handler) {
	ln := g.rooms[room]
	if ln == nil {
		g.resp.Error(w, r, http.StatusNotFound)
		return
	}
	// A CORS preflight cannot carry the cookie, so it must never take a
	// ticket; it goes to the site, which alone knows its CORS policy. Only
	// a real one: a browser sends Origin and no body.
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" &&
		r.Header.Get("Origin") != "" && r.ContentLength == 0 {
		next.ServeHTTP(w, r)
		return
	}
	p := g.tickets.Read(r, room)
	v := g.visitor(room, p)
	// A closed room (reject, or a sale before or after its hours) takes
	// nobody new into line; those inside go on.
	now := g.now()
	lim, ph, join := ln.admission(now)
	d, err := g.decide(r, room, lim, v, join, now)
	if err != nil {
		g.storeTrouble(w, r, ln, p, next, err)
		return
	}
	if p.Refused {
		g.obs.TicketRejected("invalid")
	}
	raw, changed := p.Raw, false
	if d.State != StateNone {
		raw, changed = g.reissue(w, room, v, p, d)
	}
	if !changed && p.Valid && !p.Cookie {
		// An app keeps its ticket in Waitroom-Token: give it back on every
		// answer, so a client can always carry the latest one.
		w.Header().Set(TokenHeader, raw)
	}
	if d.State == StateAdmitted {
		g.obs.Request(room, "admitted")
		if d.Joined {
			g.obs.Admitted(room)
		}
		r.Header.Set(VisitorHeader, v.ID)
		r.Header.Set(RoomHeader, room)
		if changed {
			w = &privateWriter{ResponseWriter: w} // the ticket must not be cached for others
		}
		next.ServeHTTP(w, r)
		return
	}
	g.obs.Request(room, "queued")
	a := g.answer(ln, d, g.token(p, raw), returnPath(r), startOf(p, d), ph)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		g.resp.NotForwarded(w, r, a)
		return
	}
	g.resp.Waiting(w, r, a)
}

// decide asks the store where the visitor stands, unless its ticket says it
// is inside and the store said so less than the session cache's interval
// ago.
func (g *Gate) decide(r *http.Request, room string, lim Limits, v Visitor, join bool, now time.Time) (Decision, error) {
	if !v.Until.IsZero() {
		if until, ok := g.sessions.get(room, v.ID, now); ok {
			return Decision{State: StateAdmitted, Ticket: v.Ticket, Until: until}, nil
		}
	}
	d, err := g.store.Decide(r.Context(), room, lim, v, join)
	if err != nil {
		return d, err
	}
	g.storeBack()
	if d.State == StateAdmitted {
		g.sessions.put(room, v.ID, d.Until, now)
		if d.Ticket == 0 {
			d.Ticket = v.Ticket // a store need not keep the number of those inside
		}
	}
	return d, nil
}

// visitor is who the store is asked about. A ticket whose admission has run
// out (a finished session) gives up its number: after a restart of the
// store, only places still held may be put back, not sessions long served.
// One whose admission still runs says until when, so a store that lost its
// data lets it back inside rather than into line.
func (g *Gate) visitor(room string, p Presented) Visitor {
	if !p.Valid {
		id := NewVisitorID()
		if ce := g.log.Check(zap.DebugLevel, "new visitor"); ce != nil {
			ce.Write(zap.String(fieldRoom, room), zap.String(fieldVisitor, id), zap.Bool("ticket_refused", p.Refused))
		}
		return Visitor{ID: id}
	}
	v := Visitor{ID: p.Ticket.Visitor, Ticket: p.Ticket.Number}
	switch {
	case p.Ticket.Admitted(g.now()):
		v.Until = time.Unix(p.Ticket.Until, 0)
	case p.Ticket.Until != 0:
		v.Ticket = 0
	}
	return v
}

// token is the ticket to show the client: app clients (no cookie) get it;
// browsers keep theirs in an HttpOnly cookie, out of reach of page scripts.
func (g *Gate) token(p Presented, raw string) string {
	if p.Cookie {
		return ""
	}
	return raw
}

// reissue writes a new ticket when the visitor's standing changed (a new
// place, a new or renewed session) or the one sent is past half its life.
// Otherwise it keeps the one sent, so a waiting visitor's poll costs no
// encoding. It returns the current value and whether it wrote a new one.
func (g *Gate) reissue(w http.ResponseWriter, room string, v Visitor, p Presented, d Decision) (string, bool) {
	want := p.Ticket
	want.Visitor, want.Room = v.ID, room
	if d.Ticket != 0 {
		want.Number = d.Ticket
	}
	now := g.now()
	if !p.Valid {
		want.Issued = now.Unix()
	}
	want.Start = startOf(p, d)
	want.Until = 0
	if d.State == StateAdmitted {
		want.Until = d.Until.Unix()
	}
	fresh := now.Unix()-p.Ticket.Sealed < int64(g.tickets.MaxAge()/time.Second)/2
	if p.Valid && want == p.Ticket && fresh {
		return p.Raw, false
	}
	value, err := g.tickets.Encode(want)
	if err != nil {
		g.log.Error("encoding ticket", zap.String(fieldRoom, room), zap.Error(err))
		return p.Raw, false
	}
	g.tickets.SetCookie(w, room, value)
	if !p.Cookie {
		w.Header().Set(TokenHeader, value)
	}
	return value, true
}

// startOf is the position the progress bar counts from: the one the visitor
// joined at, or its current one when its place is new to this ticket.
func startOf(p Presented, d Decision) int64 {
	if d.State != StateWaiting {
		return 0
	}
	if p.Valid && p.Ticket.Start >= d.Position && p.Ticket.Number == d.Ticket {
		return p.Ticket.Start
	}
	return d.Position
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

func (g *Gate) answer(ln *line, d Decision, token, returnTo string, start int64, ph Phase) Answer {
	eff := ln.eff.Load()
	a := Answer{
		Room: ln.room.Name, State: d.State.String(), Decision: d, Refresh: ln.room.Refresh,
		ReturnTo: returnTo, Token: token, StatusCode: ln.room.StatusCode, Message: ln.message(),
	}
	switch {
	case d.State == StateAdmitted:
		return a
	case eff.Mode == ModeReject || ph == PhaseClosed:
		a.State, a.Decision = "closed", Decision{}
		return a
	case ph == PhaseBefore || ph == PhasePrequeue:
		// Everyone early is equal until the opening's shuffle: no place is
		// shown, only the time left until the sale opens.
		a.State, a.Decision = "prequeue", Decision{State: d.State, Ticket: d.Ticket}
		until := max(ln.room.Schedule.OpensAt.Sub(g.now()), 0)
		a.ETA, a.ETAKnown = until, true
		a.Refresh = refreshHint(ln.room, nearFront+1, until, true)
		return a
	case d.State != StateWaiting:
		return a
	case eff.Mode == ModePaused:
		a.State = "paused"
	}
	if start > 0 {
		a.Progress = math.Max(0, math.Min(1, float64(start-d.Position)/float64(start)))
	}
	if rate := admissionRate(ln.stats.Load(), eff.Limits.AdmitRate); rate > 0 && eff.Mode != ModePaused {
		a.ETA, a.ETAMax = etaRange(d.Position, rate, ln.spread.Load())
		a.ETAKnown = true
	}
	a.Refresh = refreshHint(ln.room, d.Position, a.ETA, a.ETAKnown)
	return a
}

// etaRange is the wait of someone at position: one figure from the
// current rate when the line moves steadily, else the range between the
// fastest and the slowest minute of the last few (the current rate
// included), so the page does not promise what an uneven line may not keep.
func etaRange(position int64, rate float64, sp *rateSpread) (time.Duration, time.Duration) {
	at := func(r float64) time.Duration {
		return time.Duration(math.Ceil(float64(position)/r)) * time.Second
	}
	if sp == nil || sp.low <= 0 {
		return at(rate), 0
	}
	lo, hi := min(sp.low, rate), max(sp.high, rate)
	if hi < unsteady*lo {
		return at(rate), 0
	}
	return at(hi), at(lo)
}

// minMeasured is how long a room must have been measured before its rate
// means anything; until then the wait is "calculating".
const minMeasured = 10 * time.Second

// admissionRate is admissions per second as measured over the last minute:
// what the line really does, not what it is allowed to do. It never exceeds
// the configured rate, since the immediate admissions of a room's first
// seconds would otherwise promise a speed the bucket will not give.
func admissionRate(st *Stats, limit Rate) float64 {
	if st.MeasuredOver < minMeasured || st.AdmittedLastMinute <= 0 {
		return 0
	}
	return math.Min(float64(st.AdmittedLastMinute)/st.MeasuredOver.Seconds(), limit.PerSecond())
}

// storeTrouble answers while the store cannot be reached, as store.on_error says.
func (g *Gate) storeTrouble(w http.ResponseWriter, r *http.Request, ln *line, p Presented, next http.Handler, err error) {
	g.obs.Request(ln.room.Name, "error")
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the visitor went away; nothing to answer
	}
	g.storeDown(err)
	if g.onError == OnErrorOpen || (p.Valid && p.Ticket.Admitted(g.now())) {
		if p.Valid {
			r.Header.Set(VisitorHeader, p.Ticket.Visitor)
			r.Header.Set(RoomHeader, ln.room.Name)
		}
		next.ServeHTTP(w, r)
		return
	}
	a := Answer{Room: ln.room.Name, State: "hold", Refresh: ln.room.Refresh, ReturnTo: returnPath(r), StatusCode: ln.room.StatusCode}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		g.resp.NotForwarded(w, r, a)
		return
	}
	g.resp.Waiting(w, r, a)
}

// storeDown logs the start of an outage, once, not once per request.
func (g *Gate) storeDown(err error) {
	if !g.outage.Swap(true) {
		g.outages.Add(1)
		g.obs.Outage()
		g.obs.StoreUp(false)
		g.log.Error("store unreachable; following store.on_error", zap.String("on_error", string(g.onError)), zap.Error(err))
	}
}

// Outages counts the store outages this gate has lived through.
func (g *Gate) Outages() int64 { return g.outages.Load() }

// storeBack logs the end of an outage, once.
func (g *Gate) storeBack() {
	if g.outage.Load() && g.outage.Swap(false) {
		g.obs.StoreUp(true)
		g.log.Info("store reachable again")
	}
}

// StoreDown reports whether the last store call failed.
func (g *Gate) StoreDown() bool { return g.outage.Load() }
