package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// View is what one answer to a waiting visitor says, as HTML or as JSON.
// The caller fills it from the store's decision and the room's Page.
type View struct {
	Room   string
	Title  string // room title; empty or DefaultTitle shows the localized default
	Locale string // the room's language; the visitor's Accept-Language may override it

	// State is where the visitor stands; the page words each one.
	State waitroom.AnswerState

	Position int64 // 1 = next; 0 = unknown, and the page then hides the line
	Ahead    int64
	Behind   int64
	Line     int64 // everyone in the line
	// Ticket is the visitor's ticket number while in line: numbers only
	// grow, so two clients can tell who came first. 0 when unknown.
	Ticket int64

	ETA      time.Duration
	ETAKnown bool          // false words the estimate as "calculating…"
	ETAMax   time.Duration // more than ETA: the estimate is a range
	// Paused: the room lets nobody in now (mode paused, or max_active 0):
	// no estimate, and the page says why in its place.
	Paused   bool
	Progress float64 // 0..1 of the way from joining to the front

	Refresh time.Duration // when to ask again; zero means 5s

	ReturnTo  string // same-site request URI to go to once admitted
	StatusURL string // polled by the page's script, e.g. "/.waitroom/status?room=concert"
	LeaveURL  string // the "leave the line" form posts here; empty hides the form

	Token string // opaque; sent in JSON only, never in HTML

	Message string // the operator's notice for the room; "" for none

	// ClosedHeading and ClosedLead word the closed page in place of the
	// built-in words; "" for those.
	ClosedHeading, ClosedLead string
	// Params are the path parameters that filled the room's template, for
	// a room's own page ({{.Params.id}}); nil for a plain room.
	Params map[string]string

	Challenge *ChallengeBody // the work to do before a ticket; nil for none

	custom *template.Template // the room's own page (page.template), if any

	// Preview is true for a preview link's page: a banner and the title
	// say so, and the page sends no challenge's solution.
	Preview bool

	// Quiet: no tone when the visitor's turn comes in a background tab
	// (the room's page.sound is false).
	Quiet bool

	StatusCode int // 200 (default), 202 or 429
}

// StatusBody is the JSON body of a waiting answer and of the status
// endpoint. Every field is always present, so a client generated from a
// fixed schema reads every answer: eta_seconds and eta_max_seconds are
// null until there is a measure (and eta_max_seconds unless the wait is a
// range), and while paused is true (the room lets nobody in now: mode
// paused, or max_active 0); challenge is null unless state is "challenge".
type StatusBody struct {
	Room         string               `json:"room"`
	State        waitroom.AnswerState `json:"state"`
	Position     int64                `json:"position"`
	Ahead        int64                `json:"ahead"`
	Behind       int64                `json:"behind"`
	Waiting      int64                `json:"waiting"`
	Ticket       int64                `json:"ticket"`
	ETASeconds   *int64               `json:"eta_seconds"`
	ETAMaxSecs   *int64               `json:"eta_max_seconds"`
	Paused       bool                 `json:"paused"`
	Progress     float64              `json:"progress"`
	RefreshAfter int64                `json:"refresh_after"`
	Token        string               `json:"token"`
	Next         string               `json:"next"`
	Message      string               `json:"message"`
	Challenge    *ChallengeBody       `json:"challenge"`
}

// ChallengeBody is the work a client does before it gets a ticket: find a
// nonce such that SHA-256(prefix + nonce) starts with bits zero bits, then
// repeat the request with "Waitroom-Challenge: <prefix>:<nonce>".
type ChallengeBody struct {
	Prefix string `json:"prefix"`
	Bits   int    `json:"bits"`
}

const defaultRefresh = 5 * time.Second

// Waiting answers a waiting visitor: JSON when the Accept header prefers it,
// otherwise the HTML waiting room in the visitor's language.
func (p *Pages) Waiting(w http.ResponseWriter, r *http.Request, v View) {
	status := v.StatusCode
	if status != http.StatusAccepted && status != http.StatusTooManyRequests {
		status = http.StatusOK
	}
	h := w.Header()
	h.Add("Vary", "Accept, Accept-Language")
	if status == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.FormatInt(refreshSeconds(v.Refresh), 10))
	}
	if WantsJSON(r) {
		h.Set("Retry-After", strconv.FormatInt(refreshSeconds(v.Refresh), 10))
		p.json(w, r, status, v.Body())
		return
	}
	lang := Locale(r.Header.Get("Accept-Language"), v.Locale)
	vw := p.view(lang, v)
	if v.custom == nil && !v.Preview { // a preview's banner is not in the plans' shapes
		buf := getBuffer()
		defer putBuffer(buf)
		if p.fastWaiting(buf, &vw) {
			send(w, r, status, p.cspWaiting, "text/html; charset=utf-8", buf)
			return
		}
	}
	p.render(w, r, status, p.cspWaiting, v.custom, "waiting.html", vw)
}

// JSON sends v as the status endpoint's answer.
func (p *Pages) JSON(w http.ResponseWriter, status int, v View) {
	if status < 200 || status > 599 {
		status = http.StatusOK
	}
	p.json(w, nil, status, v.Body())
}

// Body is v as JSON clients and the page's script see it.
func (v View) Body() StatusBody {
	s := StatusBody{
		Room:         v.Room,
		State:        v.State,
		Position:     max(v.Position, 0),
		Ahead:        max(v.Ahead, 0),
		Behind:       max(v.Behind, 0),
		Waiting:      max(v.Line, 0),
		Ticket:       max(v.Ticket, 0),
		Progress:     math.Round(progress(v.Progress)*1000) / 1000,
		RefreshAfter: refreshSeconds(v.Refresh),
		Token:        v.Token,
		Message:      v.Message,
		Challenge:    v.Challenge,
	}
	if v.paused() {
		s.Paused = true
	} else if v.ETAKnown {
		e := etaSeconds(v.ETA)
		s.ETASeconds = &e
		if v.ETAMax > v.ETA {
			m := etaSeconds(v.ETAMax)
			s.ETAMaxSecs = &m
		}
	}
	if v.State == waitroom.AnswerAdmitted {
		s.Next = localURL(v.ReturnTo)
	}
	return s
}

// waitingView is the template's data: every string already in the visitor's
// language, so the template only lays things out.
type waitingView struct {
	Lang, Title, DocTitle      string
	State, Heading, Lead       string
	ShowLine                   bool
	Position, Ahead, Behind    string
	Total, ETA                 string
	Percent                    int
	PercentText                string
	Updated, UpdatedISO        string
	MetaRefresh, Next, LeaveTo string
	T                          map[string]string
	CSS                        template.CSS
	JS                         template.JS
	Solver                     template.JS // challenge.js, on a challenge answer only
	// Style, Script and SolverFile are the same three as files (Static),
	// which the built-in page loads; SolverFile only on a challenge answer.
	Style, Script, SolverFile assetRef
	Data                      template.JS // clientData as JSON, safe inside <script>
	Message                   string
	Params                    map[string]string // a templated room's path parameters
	// Banner says the page is a staff preview; "" for a visitor's page.
	Banner string
}

// clientData seeds waiting.js. It carries no token: the cookie already
// identifies the visitor, and a token in the page would leak with it.
type clientData struct {
	Status   string `json:"status"`
	Refresh  int64  `json:"refresh"`
	Lang     string `json:"lang"`
	Title    string `json:"title"`
	State    string `json:"state"`
	Position int64  `json:"position"`
	Ticket   int64  `json:"ticket,omitempty"`
	Next     string `json:"next,omitempty"`
	// Challenge is the work the page does before it has a ticket.
	Challenge *ChallengeBody `json:"challenge,omitempty"`
	// Closed words the closed page in the room's own words, if it has any.
	Closed *closedText `json:"closed,omitempty"`
	// Preview: a preview link's page, which sends no solution of its
	// challenge (it would join nobody) and keeps "Preview" first in its
	// title, as the server wrote it.
	Preview bool `json:"preview,omitempty"`
	// Quiet: turn.js plays no tone when the turn comes (page.sound false).
	Quiet bool `json:"quiet,omitempty"`
	// Text, the page's words in its language, is appended as "text" by
	// clientJSON from textJSON: it is the same for every visitor.
}

// textJSON is messages[lang] as JSON, made once: the words are most of the
// data, and encoding a map sorts and escapes it on every page otherwise.
var textJSON = func() map[string][]byte {
	m := make(map[string][]byte, len(messages))
	for lang, words := range messages {
		b, err := json.Marshal(words)
		if err != nil {
			panic(fmt.Sprintf("encoding the %s words: %v", lang, err))
		}
		m[lang] = b
	}
	return m
}()

// clientJSON is d with its language's words, as JSON that is safe inside a
// <script> element: encoding/json escapes <, >, & and U+2028/2029, so
// nothing in it can end the element or the string.
func clientJSON(d clientData) template.JS {
	b, err := json.Marshal(d)
	if err != nil || len(b) < 2 {
		return "{}"
	}
	words, ok := textJSON[d.Lang]
	if !ok {
		words = textJSON["en"]
	}
	out := make([]byte, 0, len(b)+len(words)+8)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"text":`...)
	out = append(out, words...)
	out = append(out, '}')
	return template.JS(out)
}

func (p *Pages) view(lang string, v View) waitingView {
	state := string(v.State)
	if messages["en"][state+"_heading"] == "" {
		state = string(waitroom.AnswerWaiting) // a state this build has no words for
	}
	title := v.Title
	if strings.TrimSpace(title) == "" || title == DefaultTitle {
		title = text(lang, "default_title")
	}
	now := p.now()
	pct := int(math.Round(progress(v.Progress) * 100))
	vw := waitingView{
		Lang: lang, Title: title, DocTitle: title,
		State: state, Heading: text(lang, state+"_heading"), Lead: text(lang, state+"_lead"),
		ShowLine: showLine(state, v.Position),
		Position: group(v.Position),
		Ahead:    count(lang, "ahead", v.Ahead),
		Behind:   count(lang, "behind", v.Behind),
		Total:    count(lang, "waiting", v.Line),
		ETA:      etaRangeText(lang, v.ETA, v.ETAMax, v.ETAKnown),
		Percent:  pct, PercentText: strings.ReplaceAll(text(lang, "progress_text"), "{n}", strconv.Itoa(pct)),
		Updated: clock(lang, now), UpdatedISO: now.UTC().Format(time.RFC3339),
		MetaRefresh: strconv.FormatInt(refreshSeconds(v.Refresh), 10),
		T:           messages[lang],
		CSS:         p.css, JS: p.js,
		Style: p.style.ref(), Script: p.script.ref(),
		Message: v.Message, Params: v.Params,
	}
	if v.paused() {
		// Nobody is let in: no estimate, whatever was measured before.
		vw.ETA = text(lang, "eta_paused")
	}
	if state == string(waitroom.AnswerClosed) {
		if v.ClosedHeading != "" {
			vw.Heading = v.ClosedHeading
		}
		if v.ClosedLead != "" {
			vw.Lead = v.ClosedLead
		}
	}
	if v.Challenge != nil && state == string(waitroom.AnswerChallenge) {
		vw.Solver, vw.SolverFile = p.solver, p.solverFile.ref()
	}
	if vw.ShowLine {
		vw.DocTitle = strings.ReplaceAll(text(lang, "doc_title"), "{n}", vw.Position) + " · " + title
	}
	if v.Preview {
		vw.Banner = text(lang, "preview_banner")
		vw.DocTitle = text(lang, "preview_title") + " · " + vw.DocTitle
	}
	vw.navigation(v)
	return vw
}

// navigation fills where the page may send the visitor: on once admitted,
// back to the server to leave, and to the status URL to poll. Each must stay
// on this site, since each becomes a navigation or a request with cookies: an
// off-site ReturnTo becomes "/", an off-site leave or status URL is dropped.
func (vw *waitingView) navigation(v View) {
	if vw.State == string(waitroom.AnswerAdmitted) {
		vw.Next = localURL(v.ReturnTo)
		vw.MetaRefresh = "0;url=" + vw.Next
	} else if localURL(v.LeaveURL) == v.LeaveURL {
		vw.LeaveTo = v.LeaveURL
	}
	status := v.StatusURL
	if localURL(status) != status {
		status = "" // the script then reloads the page instead of polling
	}
	vw.Data = clientJSON(clientData{
		Status: status, Refresh: refreshSeconds(v.Refresh), Lang: vw.Lang, Title: vw.Title,
		State: vw.State, Position: v.Position, Ticket: max(v.Ticket, 0), Next: vw.Next, Challenge: v.Challenge,
		Closed: closedWords(v), Preview: v.Preview, Quiet: v.Quiet,
	})
}

// closedText is a room's own words for its closed page.
type closedText struct {
	Heading string `json:"heading,omitempty"`
	Lead    string `json:"lead,omitempty"`
}

func closedWords(v View) *closedText {
	if v.ClosedHeading == "" && v.ClosedLead == "" {
		return nil
	}
	return &closedText{Heading: v.ClosedHeading, Lead: v.ClosedLead}
}

// paused reports an answer whose room lets nobody in now.
func (v View) paused() bool { return v.Paused || v.State == waitroom.AnswerPaused }

// showLine: a position is worth showing only while there is a line to be in.
func showLine(state string, position int64) bool {
	return position > 0 && state != string(waitroom.AnswerAdmitted) && state != string(waitroom.AnswerClosed)
}

func progress(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return min(f, 1)
}

func refreshSeconds(d time.Duration) int64 {
	if d <= 0 {
		d = defaultRefresh
	}
	return retrySeconds(d)
}

// etaSeconds rounds up, so "0 seconds" never promises a turn that is not here.
func etaSeconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 0)
}

// localURL keeps a URL on this site: a path that starts with one slash and
// has no backslash or control byte, which browsers could read as another
// host. Anything else becomes "/". The caller validates too; this is the
// last line, since the page turns the value into a navigation.
func localURL(u string) string {
	if len(u) == 0 || u[0] != '/' || (len(u) > 1 && (u[1] == '/' || u[1] == '\\')) {
		return "/"
	}
	for i := 0; i < len(u); i++ {
		if u[i] < 0x20 || u[i] == 0x7f || u[i] == '\\' {
			return "/"
		}
	}
	return u
}
