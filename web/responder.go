package web

import (
	"net/http"
	"net/url"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/pattern"
)

// left words the answer to /.waitroom/leave.
var left = problem{code: "left",
	en: [2]string{"You left the line", "Your place has been given up. You can join again at any time, at the back of the line."},
	ko: [2]string{"대기열에서 나왔습니다", "대기 순번이 취소되었습니다. 언제든 다시 줄을 설 수 있으며, 이때는 맨 뒤에서 시작합니다."},
}

var joinAgain = map[string]string{"en": "Join the line again", "ko": "다시 줄 서기"}

// Responder answers the gate's visitors with these pages: it turns a
// waitroom.Answer into a Waiting, adding each room's title and language.
type Responder struct {
	*Pages
	rooms map[string]Page
}

var _ waitroom.Responder = (*Responder)(nil)

// NewResponder serves rooms' answers with pages; rooms maps a room name to
// its validated page settings.
func NewResponder(pages *Pages, rooms map[string]Page) *Responder {
	return &Responder{Pages: pages, rooms: rooms}
}

// Waiting answers a visitor in line (or asked to hold).
func (rs *Responder) Waiting(w http.ResponseWriter, r *http.Request, a waitroom.Answer) {
	w.Header().Set(waitroom.StateHeader, string(a.State))
	w.Header().Set(waitroom.RoomHeader, a.Room) // for client.js, which polls it
	rs.Pages.Waiting(w, r, rs.waiting(a))
}

// Status answers /.waitroom/status with JSON. A "hold" is 200 too: the
// state says what happened, and a client keeps polling either way.
func (rs *Responder) Status(w http.ResponseWriter, r *http.Request, a waitroom.Answer) {
	w.Header().Set(waitroom.StateHeader, string(a.State))
	rs.Pages.JSON(w, http.StatusOK, rs.waiting(a))
}

// NotForwarded refuses a waiting visitor's write request.
func (rs *Responder) NotForwarded(w http.ResponseWriter, r *http.Request, a waitroom.Answer) {
	w.Header().Set(waitroom.StateHeader, string(a.State))
	w.Header().Set(waitroom.RoomHeader, a.Room)
	rs.Pages.NotForwarded(w, r, a.Room, a.Refresh)
}

// Left confirms that the visitor left the line: JSON to a client that asks
// for it (client.js); a browser's POST (the page's no-script form) gets 303
// See Other to waitroom.LeftPath, so the page it ends on is a GET and a
// reload posts nothing again; that GET gets the page.
func (rs *Responder) Left(w http.ResponseWriter, r *http.Request, a waitroom.Answer) {
	if WantsJSON(r) {
		rs.Pages.json(w, r, http.StatusOK, map[string]string{"room": a.Room, "state": string(waitroom.AnswerLeft)})
		return
	}
	if r.Method == http.MethodPost {
		q := url.Values{"room": {a.Room}}
		if a.ReturnTo != "" && a.ReturnTo != "/" {
			q.Set("return_to", a.ReturnTo)
		}
		secure(w.Header(), cspJSON)
		w.Header().Set("Location", waitroom.LeftPath+"?"+q.Encode())
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	lang := Locale(r.Header.Get("Accept-Language"), rs.page(a).Locale)
	words := left.en
	if lang == "ko" {
		words = left.ko
	}
	v := errorView{Lang: lang, Heading: words[0], Text: words[1], Status: http.StatusOK,
		Link: localURL(a.ReturnTo), LinkText: joinAgain[lang], CSS: rs.css}
	w.Header().Add("Vary", "Accept, Accept-Language")
	rs.Pages.html(w, r, http.StatusOK, rs.cspError, "error.html", v)
}

// page is the page settings of the answer's room: its own, or its
// template's for a room filled in from one.
func (rs *Responder) page(a waitroom.Answer) Page {
	if p, ok := rs.rooms[a.Room]; ok || a.Template == "" {
		return p
	}
	return rs.rooms[a.Template]
}

func (rs *Responder) waiting(a waitroom.Answer) View {
	page := rs.page(a)
	d := a.Decision
	q := url.Values{"room": {a.Room}}
	if a.ReturnTo != "" {
		q.Set("return_to", a.ReturnTo)
	}
	v := View{
		Room: a.Room, Title: pattern.FillText(page.Title, a.Params), Locale: page.Locale, State: a.State,
		Position: d.Position, Ahead: d.Ahead(), Behind: d.Behind(), Line: d.Line, Ticket: d.Ticket,
		ETA: a.ETA, ETAKnown: a.ETAKnown && !a.Stopped, ETAMax: a.ETAMax, Paused: a.Stopped || a.State == waitroom.AnswerPaused, Progress: a.Progress, Refresh: a.Refresh,
		ReturnTo:  a.ReturnTo,
		StatusURL: waitroom.StatusPath + "?" + q.Encode(),
		LeaveURL:  waitroom.LeavePath + "?" + url.Values{"room": {a.Room}}.Encode(),
		Token:     a.Token, StatusCode: a.StatusCode, Message: a.Message,
		custom: page.custom, Quiet: page.Quiet,
		ClosedHeading: pattern.FillText(page.ClosedHeading, a.Params), ClosedLead: pattern.FillText(page.ClosedLead, a.Params),
	}
	if len(a.Params) > 0 {
		v.Params = make(map[string]string, len(a.Params))
		for _, p := range a.Params {
			v.Params[p.Name] = p.Value
		}
	}
	if c := a.Challenge; c != nil {
		v.Challenge = &ChallengeBody{Prefix: c.Prefix, Bits: c.Bits}
	}
	if a.Preview != "" {
		// The page polls the link itself, so it stays a preview, and has
		// no place to leave.
		v.Preview, v.StatusURL, v.LeaveURL = true, a.Preview, ""
	}
	return v
}
