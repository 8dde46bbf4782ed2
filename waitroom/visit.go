package waitroom

import (
	"context"
	"math"
	"net/http"
	"net/netip"
	"time"

	"go.uber.org/zap"
)

// visit is one request's standing in a room: who asked, what the store
// decided, and the ticket the client holds once the answer is sent. Serve
// and Status both make one, then answer from it.
type visit struct {
	lr      *liveRoom
	p       Presented
	v       Visitor
	d       Decision
	phase   Phase
	network netip.Prefix // the client's network; invalid when unknown
	account string       // the site's signed account, "" for none
	raw     string       // the encoded ticket the client holds after this answer
	fresh   bool         // this answer wrote a new ticket
	// refused, when set, turns the visitor away without a ticket;
	// challenge, when set, is the work it must do before it gets one.
	refused   AnswerState
	retry     time.Duration
	challenge *ChallengeAnswer
}

// visit works out who is asking (the site's signed account, the client's
// network, the ticket), asks the store where it stands, joining it as join
// says when the room takes newcomers now, and writes the ticket the
// decision calls for. A room with a challenge hands a newcomer work, not
// a ticket.
func (g *Gate) visit(w http.ResponseWriter, r *http.Request, lr *liveRoom, p Presented, join Join) (visit, error) {
	now := time.Now()
	room := lr.room()
	lim, ph, open := lr.admission(now)
	if !open {
		join = JoinNone
	}
	vt := visit{lr: lr, phase: ph, network: g.network(r)}
	id := ""
	if account, ok := room.Identity.Account(r); ok {
		id, vt.account = room.Identity.VisitorID(lr.name, account), account
		if p.Valid && p.Ticket.Visitor != id {
			p = Presented{Cookie: p.Cookie} // someone else's ticket: this request is the account's
		}
	} else if room.Identity.Required() {
		vt.p, vt.raw, vt.refused = p, p.Raw, AnswerIdentity
		g.rooms.obs.JoinRefused(lr.label(), "identity")
		return vt, nil
	}
	vt.p, vt.raw = p, p.Raw
	vt.v = g.visitor(lr.name, p, now, id, networkKey(vt.network))
	vt.v.Block = networkKey(blockOf(vt.network))
	vt.v.Client = g.client(r)
	// A pending ticket with no number was handed out loose (past its
	// network's PendingPerNetwork): it takes a place at the back.
	vt.v.Loose = p.Valid && p.Ticket.Pending && p.Ticket.Number == 0 && p.Ticket.Until == 0 && room.Challenge == nil
	if room.Challenge != nil && !vt.v.Placed {
		// A solved challenge places its ticket in the request that spends
		// it, so an unplaced ticket in a room with a challenge was minted
		// before the challenge was on: it buys no place, and the store
		// only finds one its holder holds already, by its id.
		vt.v.Ticket = 0
	}
	// A poll far back in line is answered from its ticket's anchor, one
	// near the front from the line's first places as the last tick read
	// them; its mark goes to the store with the next tick (anchored.go).
	// Halfway to every, the answer is sealed and anchored again by the
	// gate (renewAnchor), so a visitor who keeps polling never needs the
	// store for that.
	every := g.resealAfter(lr.name)
	d, an, ok := fromAnchor(lr, p, lim, ph, now, every)
	if !ok {
		d, an, ok = fromHead(lr, p, lim, ph, now, every)
	}
	if ok && lr.marks.add(vt.v) {
		vt.d = d
		// A place that moved is sealed into the ticket (nextAnchor), so
		// the next answer, from any instance's view, is never larger.
		if an != p.Ticket.Anchor || renewAnchor(p.Ticket, now, every) {
			vt.raw, vt.fresh = g.reissueAnchored(w, lr.name, vt.v, vt.p, d, an, now)
		}
		return vt, nil
	}
	if bt, ok := g.placeBatched(w, vt, lim, ph, now); ok {
		return bt, nil
	}
	if join == JoinTicket {
		if bt, ok := g.joinBatched(w, r, vt, lim, ph, now); ok {
			return bt, nil
		}
	}
	if room.Challenge != nil && join == JoinTicket {
		return g.newcomer(w, r, vt, lim, now)
	}
	return g.settle(w, r, vt, lim, join, now)
}

// settle asks the store and writes the ticket. A request the store turns
// away from an admitted session because session_clients others use it is
// refused (409 "shared") and keeps its ticket: a phone that moved to
// another address is served once its old one has gone quiet, and a copy
// gets nothing while the clients on it keep going. A session past
// session_max ran its course: its visitor starts over as a new one at the
// back.
func (g *Gate) settle(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, join Join, now time.Time) (visit, error) {
	name, obs := vt.lr.name, g.rooms.obs
	d, err := g.decide(r.Context(), name, lim, vt.v, join, now)
	if err != nil {
		return vt, err
	}
	if d.Refusal == RefusedShared || d.Refusal == RefusedSessionMax {
		obs.SessionRefused(vt.lr.label(), string(d.Refusal))
		if d.Refusal == RefusedShared {
			vt.refused, vt.retry = AnswerShared, d.RetryAfter
			return vt, nil
		}
		id := ""
		if vt.account != "" {
			id = vt.v.ID
		}
		vt.p = Presented{Cookie: vt.p.Cookie}
		block, client := vt.v.Block, vt.v.Client
		vt.v = g.visitor(name, vt.p, now, id, vt.v.Network)
		vt.v.Block, vt.v.Client = block, client
		if vt.lr.room().Challenge != nil && join == JoinTicket {
			return g.challenged(w, r, vt, lim, now)
		}
		if d, err = g.decide(r.Context(), name, lim, vt.v, join, now); err != nil {
			return vt, err
		}
	}
	switch d.Refusal {
	case RefusedQuota:
		vt.refused, vt.retry = AnswerLimited, d.RetryAfter
		g.limited(name, vt.network)
	case RefusedFull:
		vt.refused = AnswerFull
	}
	if d.Refusal == RefusedQuota || d.Refusal == RefusedFull {
		obs.JoinRefused(vt.lr.label(), string(d.Refusal))
		return vt, nil
	}
	vt.d = d
	g.noteAdmission(vt.lr, vt, d, now)
	g.noteRestore(name, vt.v, d)
	if d.State != StateNone {
		vt.raw, vt.fresh = g.reissue(w, name, vt.v, vt.p, d, now)
	}
	return vt, nil
}

// visitor is who the store is asked about: the ticket's holder, or a new
// visitor (with the account's id when the site signed one in). A ticket
// whose admission has run out (a finished session) gives up its number:
// after a restart of the store, only places still held may be put back,
// not sessions long served. One whose admission still runs says until
// when, so a store that lost its data lets it back inside rather than into
// line.
func (g *Gate) visitor(room string, p Presented, now time.Time, id, network string) Visitor {
	if !p.Valid {
		if id == "" {
			id = NewVisitorID()
		}
		if ce := g.log.Check(zap.DebugLevel, "new visitor"); ce != nil {
			ce.Write(zap.String(fieldRoom, room), zap.String(fieldVisitor, id), zap.Bool("ticket_refused", p.Refused))
		}
		return Visitor{ID: id, Network: network}
	}
	tk := p.Ticket
	v := Visitor{ID: tk.Visitor, Ticket: tk.Number, Placed: !tk.Pending, Network: network,
		Issued: time.Unix(tk.Issued, 0), Seen: time.Unix(tk.Sealed, 0)}
	switch {
	case tk.Admitted(now):
		v.Until = time.Unix(tk.Until, 0)
		if tk.Entered > 0 {
			v.Entered = time.Unix(tk.Entered, 0)
		}
	case tk.Until != 0:
		v.Ticket = 0
	}
	return v
}

// decide asks the store where the visitor stands, unless its ticket says it
// is inside and the store said so less than the session cache's interval
// ago.
func (g *Gate) decide(ctx context.Context, room string, lim Limits, v Visitor, join Join, now time.Time) (Decision, error) {
	sessions := g.rooms.sessions.Load()
	lr := g.rooms.get(room)
	if lr != nil {
		// The store learns the highest ticket this instance saw lately
		// (Visitor.Known), so it finds a counter behind the tickets, or
		// data lost, on the first request that meets it.
		if v.Ticket > 0 && cookieCounts(v, lim, now) {
			lr.known.seeCookie(v.Ticket, now)
		}
		v.Known = lr.known.hint(now, lim)
		if !lim.Random {
			// In a room that admits from the head, every ticket up to
			// the highest admitted went in: a store with some of them
			// still in line lost those admissions (Visitor.KnownAdmitted).
			if v.Until.After(now) {
				lr.admitted.see(v.Ticket, now)
			}
			v.KnownAdmitted = lr.admitted.hint(now, lim)
		}
	}
	if !v.Until.IsZero() {
		// Per client: a session used from another address must reach the
		// store, which counts its clients.
		if until, ok := sessions.get(room, v.ID, v.Client, now); ok {
			return Decision{State: StateAdmitted, Ticket: v.Ticket, Until: until, Placed: true}, nil
		}
	}
	d, err := g.rooms.store.Decide(ctx, room, lim, v, join)
	if err != nil {
		return d, err
	}
	g.rooms.health.answered()
	if lr != nil {
		lr.known.see(d.Ticket, now)
		if d.State == StateAdmitted && !lim.Random {
			lr.admitted.see(d.Ticket, now)
		}
	}
	if d.Repaired || d.GraceStarted {
		// The store lost writes: what this instance cached of the room's
		// sessions may be gone there.
		sessions.dropRoom(room)
	}
	if d.State == StateAdmitted {
		sessions.put(room, v.ID, v.Client, d.Until, now)
		if d.Ticket == 0 {
			d.Ticket = v.Ticket // a store need not keep the number of those inside
		}
	}
	return d, nil
}

// reissue writes a new ticket when the visitor's standing changed (a new
// ticket, place or session, a renewed session) or the one sent needs a new
// seal. Otherwise it keeps the one sent, so most of a waiting visitor's
// polls cost no encoding. It returns the current value and whether it
// wrote a new one.
func (g *Gate) reissue(w http.ResponseWriter, room string, v Visitor, p Presented, d Decision, now time.Time) (string, bool) {
	return g.reissueAnchored(w, room, v, p, d, anchorOf(g.rooms.get(room), d, now), now)
}

// reissueAnchored is reissue with the anchor the new ticket carries: the
// store's answer's (anchorOf), or the one a gate's own answer made
// (nextAnchor).
func (g *Gate) reissueAnchored(w http.ResponseWriter, room string, v Visitor, p Presented, d Decision, anchor Anchor,
	now time.Time) (string, bool) {
	want := p.Ticket
	want.Visitor, want.Room = v.ID, room
	switch {
	case d.Ticket != 0 && d.Ticket != want.Number:
		want.Number, want.Issued = d.Ticket, now.Unix()
	case d.Joined && d.Ticket == 0 && d.State == StateWaiting:
		// A loose ticket (Visitor.Loose): no number, whatever the old
		// ticket carried, and its placement window starts now.
		want.Number, want.Issued = 0, now.Unix()
	}
	if !p.Valid {
		want.Issued = now.Unix()
	}
	want.Pending = !d.Placed
	want.Start = startOf(p, d)
	want.Until, want.Entered = 0, 0
	want.Anchor = anchor
	if d.State == StateAdmitted {
		want.Until = d.Until.Unix()
		want.Entered = enteredAt(p, d, now)
	}
	// A waiting ticket is sealed again halfway to resealAfter, as
	// renewAnchor asks of the polls a gate answers itself, so those never
	// reach the age at which they must ask the store; an admitted one at
	// resealAfter, as before (no gate answers it, and sealing it twice as
	// often would double its encoding).
	every := g.resealAfter(room)
	if d.State == StateWaiting {
		every = max(every/2, 1)
	}
	if p.Valid && want == p.Ticket && now.Unix()-p.Ticket.Sealed < every {
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

// enteredAt is when the session of an admitted visitor began: its
// ticket's word for a session that goes on, now for one this decision
// began, 0 when neither tells (a ticket sealed before tickets said).
func enteredAt(p Presented, d Decision, now time.Time) int64 {
	switch {
	case p.Valid && p.Ticket.Entered > 0 && !d.Joined:
		return p.Ticket.Entered
	case !p.Valid || d.Joined || p.Ticket.Until == 0:
		return now.Unix()
	}
	return 0
}

// resealAfter is how old a seal may get before a poll renews it, in
// seconds: half the ticket's life, and half the room's abandon_after, so a
// visitor who keeps polling always carries a seal recent enough to get its
// place back after a data loss (Visitor.Seen), and the cost is one
// encoding per half abandon_after, not per poll.
func (g *Gate) resealAfter(room string) int64 {
	d := g.tickets.MaxAge() / 2
	if lr := g.rooms.get(room); lr != nil && lr.room().Limits.AbandonAfter > 0 {
		d = min(d, lr.room().Limits.AbandonAfter/2)
	}
	return max(int64(d/time.Second), 1)
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

// answer words a visit that does not go through: in line, before the sale,
// or closed, with the wait and when to ask again. App clients (no cookie)
// get their ticket in it; browsers keep theirs in an HttpOnly cookie, out
// of reach of page scripts.
func (g *Gate) answer(vt visit, returnTo string) Answer {
	lr, d := vt.lr, vt.d
	room, eff := lr.room(), lr.eff.Load()
	a := Answer{
		Room: lr.name, Template: room.Template, Params: room.Params,
		State: answerState(d.State), Decision: d, Refresh: room.Refresh,
		ReturnTo: returnTo, StatusCode: room.StatusCode, Message: lr.message(),
	}
	if !vt.p.Cookie {
		a.Token = vt.raw
	}
	switch {
	case vt.refused != "":
		a.State, a.Decision, a.Token, a.RetryAfter = vt.refused, Decision{}, "", vt.retry
		return a
	case vt.challenge != nil:
		a.State, a.Challenge, a.Token = AnswerChallenge, vt.challenge, ""
		return a
	case d.State == StateAdmitted:
		return a
	case eff.Mode == ModeReject || vt.phase == PhaseClosed:
		a.State, a.Decision = AnswerClosed, Decision{}
		return a
	case vt.phase == PhaseBefore || vt.phase == PhasePrequeue:
		// Everyone early is equal until the opening's shuffle: no place is
		// shown, only the time left until the sale opens.
		a.State, a.Decision = AnswerPrequeue, Decision{State: d.State, Ticket: d.Ticket}
		until := max(time.Until(room.Schedule.OpensAt), 0)
		a.ETA, a.ETAKnown = until, true
		a.Refresh = refreshHint(*room, nearFront+1, until, true)
		return a
	case d.State != StateWaiting:
		return a
	case eff.Mode == ModePaused:
		a.State = AnswerPaused
	}
	a.Stopped = eff.AdmitsNobody()
	if start := startOf(vt.p, d); start > 0 {
		a.Progress = math.Max(0, math.Min(1, float64(start-d.Position)/float64(start)))
	}
	if rate := admissionRate(lr.stats.Load(), eff.Limits.AdmitRate); rate > 0 && !eff.AdmitsNobody() {
		a.ETA, a.ETAMax = etaRange(d.Position, rate, lr.spread.Load())
		a.ETAKnown = true
	}
	a.Refresh = refreshHint(*room, d.Position, a.ETA, a.ETAKnown)
	if !d.Placed {
		// A ticket just handed out takes its place when it comes back,
		// which must be well within the placement window.
		a.Refresh = room.Refresh
	}
	return a
}

// answerState words a store's State for the visitor.
func answerState(s State) AnswerState {
	switch s {
	case StateWaiting:
		return AnswerWaiting
	case StateAdmitted:
		return AnswerAdmitted
	}
	return AnswerNone
}

// outage is what a visitor is told while the store cannot be reached, and
// whether it goes through anyway: a ticket whose admission still runs, on
// the word of its seal; everyone else only with store.on_error open, once
// the store has failed for store.open_after.
func (g *Gate) outage(lr *liveRoom, p Presented, returnTo string, err error) (Answer, bool) {
	g.rooms.health.failed(err)
	room := lr.room()
	a := Answer{Room: lr.name, Template: room.Template, Params: room.Params, State: AnswerHold, Refresh: room.Refresh,
		ReturnTo: returnTo, StatusCode: room.StatusCode}
	if g.rooms.outageOpen() || (p.Valid && p.Ticket.Admitted(time.Now())) {
		a.State = AnswerAdmitted
		return a, true
	}
	return a, false
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
