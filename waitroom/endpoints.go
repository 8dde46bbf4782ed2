package waitroom

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Paths of the visitor endpoints. Everything under Prefix belongs to
// waitroom and never reaches an upstream.
const (
	Prefix     = "/.waitroom/"
	StatusPath = Prefix + "status"
	LeavePath  = Prefix + "leave"
	// LeftPath is the page a browser's leave is sent on to (303 See
	// Other): a GET, so reloading it posts nothing again.
	LeftPath  = Prefix + "left"
	EnterPath = Prefix + "enter"
)

// maxReturnTo bounds the return_to parameter; longer is refused.
const maxReturnTo = 2048

// safeReturnTo accepts only a path on this site ("/events/1?x=y"): no
// scheme, no host, no "//" or "/\" that a browser would read as another
// host, no control characters. An empty value means "/".
func safeReturnTo(s string) (string, bool) {
	if s == "" {
		return "/", true
	}
	if len(s) > maxReturnTo || s[0] != '/' || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "", false
	}
	return s, true
}

// Status answers /.waitroom/status?room=NAME&return_to=PATH with the
// visitor's standing as JSON. It never gives out a ticket: a visitor
// without one is told "none" and its page reloads to join.
func (g *Gate) Status(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		g.resp.Error(w, r, http.StatusMethodNotAllowed)
		return
	}
	lr, returnTo, ok := g.endpointRoom(w, r, true)
	if !ok {
		return
	}
	none := Answer{Room: lr.name, Template: lr.room().Template, Params: lr.room().Params, State: AnswerNone,
		Refresh: lr.room().Refresh, ReturnTo: returnTo}
	p := g.tickets.Read(r, lr.name)
	g.record(r, lr, OutcomePoll, p.Ticket.Visitor)
	if !p.Valid {
		g.resp.Status(w, r, none)
		return
	}
	g.rooms.visit(r.Context(), lr)
	vt, err := g.visit(w, r, lr, p, JoinNone)
	if err != nil {
		a, _ := g.outage(lr, p, returnTo, err)
		g.resp.Status(w, r, a)
		return
	}
	if !g.settled(r.Context(), vt) {
		vt.refused, vt.retry = AnswerFull, fullRetry
	}
	if vt.d.State == StateNone && lr.eff.Load().Mode != ModeReject && vt.phase == PhaseOpen {
		g.resp.Status(w, r, none)
		return
	}
	g.resp.Status(w, r, g.answer(vt, returnTo))
}

// Enter answers POST /.waitroom/enter?room=NAME, for a client that gates a
// button or a flow rather than a page (client.js's waitroom.enter): the
// visitor joins the room's line as a request to its route would (quota,
// challenge, bounded line and all) and is told where it stands, as JSON.
// Only the visitor's own pages may ask, as for Leave: a sibling site must
// not spend a visitor's quota.
func (g *Gate) Enter(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		g.resp.Error(w, r, http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		g.resp.Error(w, r, http.StatusForbidden)
		return
	}
	lr, returnTo, ok := g.endpointRoom(w, r, false)
	if !ok {
		return
	}
	g.rooms.visit(r.Context(), lr)
	p := g.tickets.Read(r, lr.name)
	vt, err := g.visit(w, r, lr, p, JoinTicket)
	if err != nil {
		a, _ := g.outage(lr, p, returnTo, err)
		g.resp.Status(w, r, a)
		return
	}
	if !g.settled(r.Context(), vt) {
		vt.refused, vt.retry = AnswerFull, fullRetry
	}
	g.record(r, lr, OutcomeEnter, vt.v.ID)
	a := g.answer(vt, returnTo)
	if a.State.Refused() {
		g.resp.Refused(w, r, a)
		return
	}
	if !vt.p.Cookie && vt.raw != "" {
		w.Header().Set(TokenHeader, vt.raw)
	}
	g.resp.Status(w, r, a)
}

// Leave answers POST /.waitroom/leave?room=NAME: the visitor gives up its
// place or ends its session, and its cookie is cleared.
func (g *Gate) Leave(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		g.resp.Error(w, r, http.StatusMethodNotAllowed)
		return
	}
	// Another site's form must not make a visitor give up its place: a
	// lax cookie is not sent cross-site, but the Set-Cookie that clears it
	// would still be obeyed.
	if !sameOrigin(r) {
		g.resp.Error(w, r, http.StatusForbidden)
		return
	}
	lr, returnTo, ok := g.endpointRoom(w, r, false)
	if !ok {
		return
	}
	a := Answer{Room: lr.name, Template: lr.room().Template, Params: lr.room().Params, State: AnswerLeft,
		ReturnTo: returnTo, Refresh: lr.room().Refresh}
	p := g.tickets.Read(r, lr.name)
	if p.Valid {
		id := p.Ticket.Visitor
		g.record(r, lr, OutcomeLeft, id)
		var entered time.Time // a session's start, for its length; zero for a place in line
		if p.Ticket.Admitted(time.Now()) && p.Ticket.Entered > 0 {
			entered = time.Unix(p.Ticket.Entered, 0)
		}
		err := g.rooms.Release(r.Context(), lr.name, id, "leave", entered)
		if err != nil && !errors.Is(err, ErrNotFound) {
			g.log.Warn("releasing visitor", zap.String(fieldRoom, lr.name), zap.String(fieldVisitor, id), zap.Error(err))
			g.resp.Error(w, r, http.StatusServiceUnavailable)
			return
		}
		g.log.Info("visitor left", zap.String(fieldRoom, lr.name), zap.String(fieldVisitor, id))
		g.tickets.ClearCookie(w, lr.name)
	}
	g.resp.Left(w, r, a)
}

// Left answers GET /.waitroom/left?room=NAME&return_to=PATH, where a
// browser's POST to Leave is sent on: it only says the place was given up
// (and links back to return_to), so a reload changes nothing. A room
// neither in service nor made by a template in service is 404.
func (g *Gate) Left(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		g.resp.Error(w, r, http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	returnTo, ok := safeReturnTo(q.Get("return_to"))
	if !ok {
		g.resp.Error(w, r, http.StatusBadRequest)
		return
	}
	a := Answer{Room: q.Get("room"), State: AnswerLeft, ReturnTo: returnTo}
	if lr := g.rooms.get(a.Room); lr != nil {
		a.Template, a.Params = lr.room().Template, lr.room().Params
	} else if template, params, fillable := g.rooms.unfill(a.Room); fillable {
		a.Template, a.Params = template, params // its page's language; nothing is made
	} else {
		g.resp.Error(w, r, http.StatusNotFound)
		return
	}
	g.resp.Left(w, r, a)
}

// sameOrigin reports a request the visitor's own pages could have made the
// browser send: Fetch Metadata says same-origin, or none (typed or
// bookmarked); without it, Origin names this very host. A sibling site
// (same-site) is another origin: a page on shop.example.com must not empty
// a place on tickets.example.com. A request with neither header is not a
// browser's, so nothing was forged.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// endpointRoom finds the room a visitor endpoint is about: ?room=, else the
// route the Referer points into, else the only ticket the visitor holds.
// It answers the request itself when it cannot tell or return_to is unsafe.
// A status poll for a room that no longer exists (a reload removed it) is
// told "closed", so its page says so rather than failing. An endpoint
// never makes a room: a template's room not in service here is filled
// only for a visitor holding its ticket (it was made where the ticket was
// taken); for anyone else a status poll is told "none", as a room tells a
// visitor without a ticket, and enter and leave get 404.
func (g *Gate) endpointRoom(w http.ResponseWriter, r *http.Request, status bool) (*liveRoom, string, bool) {
	q := r.URL.Query()
	returnTo, ok := safeReturnTo(q.Get("return_to"))
	if !ok {
		g.resp.Error(w, r, http.StatusBadRequest)
		return nil, "", false
	}
	name := q.Get("room")
	if name == "" {
		name = g.guessRoom(r)
	}
	if lr := g.rooms.get(name); lr != nil {
		return lr, returnTo, true
	}
	template, params, fillable := g.rooms.unfill(name)
	if fillable && g.tickets.Read(r, name).Valid {
		if lr, err := g.rooms.Fill(r.Context(), template, name, params); err == nil {
			return lr, returnTo, true
		}
	}
	switch {
	case status && fillable:
		refresh := time.Duration(0)
		if t := g.rooms.template(template); t != nil {
			refresh = t.Refresh
		}
		g.resp.Status(w, r, Answer{Room: name, Template: template, Params: params, State: AnswerNone, Refresh: refresh, ReturnTo: returnTo})
	case status && name != "":
		g.resp.Status(w, r, Answer{Room: name, State: AnswerClosed, Refresh: 30 * time.Second, ReturnTo: returnTo})
	default:
		g.resp.Error(w, r, http.StatusNotFound)
	}
	return nil, "", false
}

func (g *Gate) guessRoom(r *http.Request) string {
	if ref, err := url.Parse(r.Referer()); err == nil && g.roomOf != nil && ref.Path != "" &&
		(ref.Host == "" || strings.EqualFold(ref.Host, r.Host)) {
		if name := g.roomOf(r, ref.Path); name != "" {
			return name
		}
	}
	found := ""
	for name := range *g.rooms.live.Load() {
		if g.tickets.hasCookie(r, name) {
			if found != "" {
				return ""
			}
			found = name
		}
	}
	return found
}
