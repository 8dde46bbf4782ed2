package waitroom

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// PreviewPath serves a preview link: the room's waiting page as a visitor
// in a chosen state, position and language would see it, for staff
// rehearsing a sale. It takes no place, sets no cookie and asks no store.
const PreviewPath = Prefix + "preview"

// Bounds of a preview link.
const (
	// DefaultPreviewTTL is a link's life when the admin API is not told.
	DefaultPreviewTTL = 15 * time.Minute
	// MaxPreviewTTL bounds a link's life: a link that leaks shows a page
	// for a day at most.
	MaxPreviewTTL = 24 * time.Hour
	// MaxPreviewPosition bounds the position a link shows.
	MaxPreviewPosition = 100_000_000
	// maxPreviewSealed bounds the p= parameter read: a payload with a room
	// of maxRoomBytes seals to about 450 bytes.
	maxPreviewSealed = 1024
)

// previewStates are the states a preview link shows, by the names the
// admin API takes. "sold_out" shows AnswerClosed: the gateway has one
// closed page, worded by the room's page.closed_heading and closed_lead
// (say, "Sold out"), for a room the operator closed and a site's
// "Waitroom-Command: close" alike.
var previewStates = [...]struct {
	name  string
	state AnswerState
}{
	{string(AnswerWaiting), AnswerWaiting},
	{string(AnswerChallenge), AnswerChallenge},
	{string(AnswerClosed), AnswerClosed},
	{string(AnswerFull), AnswerFull},
	{"sold_out", AnswerClosed},
}

// PreviewState is the state a preview of the admin API's name shows; false
// for a name it does not take (PreviewStateNames lists them).
func PreviewState(name string) (AnswerState, bool) {
	for _, s := range previewStates {
		if s.name == name {
			return s.state, true
		}
	}
	return "", false
}

// PreviewStateNames are the names PreviewState takes, in a fixed order.
func PreviewStateNames() []string {
	out := make([]string, len(previewStates))
	for i, s := range previewStates {
		out[i] = s.name
	}
	return out
}

// Preview is what a preview link shows. The link carries all of it, sealed,
// so opening it needs nothing but the keys.
type Preview struct {
	Room  string      `json:"r"`
	State AnswerState `json:"s"`
	// Position is 1 for the next to go in; only for AnswerWaiting, 0
	// otherwise.
	Position int64 `json:"p,omitempty"`
	// Lang is the page's language ("en", "ko"); "" lets the viewer's
	// Accept-Language and the room's page.locale choose, as for a visitor.
	Lang    string `json:"l,omitempty"`
	Expires int64  `json:"e"` // Unix seconds
}

// check holds a Preview to what a link may say, at sealing and again at
// opening (a link made by an older build with other bounds is refused).
func (p Preview) check() error {
	switch {
	case p.Room == "" || len(p.Room) > maxRoomBytes:
		return errors.New("room: must be 1 to 255 bytes")
	case p.State != AnswerWaiting && p.State != AnswerChallenge && p.State != AnswerClosed && p.State != AnswerFull:
		return fmt.Errorf("state: cannot preview %q", p.State)
	case p.State == AnswerWaiting && (p.Position < 1 || p.Position > MaxPreviewPosition):
		return fmt.Errorf("position: must be from 1 to %d for waiting, got %d", MaxPreviewPosition, p.Position)
	case p.State != AnswerWaiting && p.Position != 0:
		return fmt.Errorf("position: only for state waiting, got %d with %q", p.Position, p.State)
	case len(p.Lang) > 8:
		return errors.New("lang: too long")
	}
	return nil
}

// Why a preview link was refused; the viewer is told only which of the two.
var (
	ErrPreviewInvalid = errors.New("preview link invalid")
	ErrPreviewExpired = errors.New("preview link expired")
)

// Previews seals and opens preview links with keys derived from the ticket
// keys (challenge.DeriveKey(hash key, "preview")): every instance opens what
// any sealed, a key rotation carries them, and a ticket, a challenge or a
// pass can never pass for a link, nor a link for them. The first key seals,
// every key opens. A Previews is safe for concurrent use.
type Previews struct {
	keys [][]byte
}

// NewPreviews returns Previews over keys, each at least 32 bytes.
func NewPreviews(keys ...[]byte) (*Previews, error) {
	if len(keys) == 0 {
		return nil, errors.New("building preview keys: no key")
	}
	p := &Previews{}
	for i, k := range keys {
		if len(k) < 32 {
			return nil, fmt.Errorf("building preview keys: key %d has %d bytes, want at least 32", i, len(k))
		}
		p.keys = append(p.keys, append([]byte(nil), k...))
	}
	return p, nil
}

// PreviewsFromTickets derives the preview keys from the ticket key pairs.
func PreviewsFromTickets(pairs []KeyPair) (*Previews, error) {
	keys := make([][]byte, len(pairs))
	for i, k := range pairs {
		keys[i] = challenge.DeriveKey(k.Hash, "preview")
	}
	return NewPreviews(keys...)
}

// previewDomain starts every MAC input, so no other HMAC under a key
// derived for another purpose could match, even were the keys equal.
const previewDomain = "waitroom-preview-v1\x00"

func previewMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(previewDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// Seal returns the link's p= value for pv: base64url of the JSON payload
// followed by its HMAC-SHA256. It is signed, not encrypted: what it says
// (room, state, position, language, expiry) is no secret.
func (p *Previews) Seal(pv Preview) (string, error) {
	if err := pv.check(); err != nil {
		return "", err
	}
	payload, err := json.Marshal(pv)
	if err != nil {
		return "", fmt.Errorf("sealing preview: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(append(payload, previewMAC(p.keys[0], payload)...)), nil
}

// Open returns the preview sealed in s for room at now: ErrPreviewInvalid
// for anything forged, truncated, of another room or sealed with keys no
// longer configured, ErrPreviewExpired for an authentic link past its
// expiry. Every key is tried whatever matches, each MAC compared in
// constant time.
func (p *Previews) Open(s, room string, now time.Time) (Preview, error) {
	if len(s) == 0 || len(s) > maxPreviewSealed {
		return Preview{}, ErrPreviewInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) <= sha256.Size {
		return Preview{}, ErrPreviewInvalid
	}
	payload, mac := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	ok := 0
	for _, k := range p.keys {
		ok |= subtle.ConstantTimeCompare(mac, previewMAC(k, payload))
	}
	if ok != 1 {
		return Preview{}, ErrPreviewInvalid
	}
	var pv Preview
	if err := json.Unmarshal(payload, &pv); err != nil || pv.check() != nil || pv.Room != room {
		return Preview{}, ErrPreviewInvalid
	}
	if now.Unix() >= pv.Expires {
		return Preview{}, ErrPreviewExpired
	}
	if pv.Expires > now.Add(MaxPreviewTTL+time.Minute).Unix() {
		return Preview{}, ErrPreviewInvalid // sealed with a life no build allows
	}
	return pv, nil
}

// PreviewLink is the path and query of a link to pv, sealed by p.
func (p *Previews) PreviewLink(pv Preview) (string, error) {
	s, err := p.Seal(pv)
	if err != nil {
		return "", err
	}
	return PreviewPath + "?" + url.Values{"room": {pv.Room}, "p": {s}}.Encode(), nil
}

// PreviewRefuser is what a Responder that words a refused preview link
// offers (web.Pages does): 403 saying only "expired" or "invalid". A
// Responder without it answers with its 403 error page.
type PreviewRefuser interface {
	PreviewRefused(w http.ResponseWriter, r *http.Request, expired bool)
}

// Preview answers GET /.waitroom/preview?room=NAME&p=SEALED: the room's
// page in the state the link names, through the Responder a visitor's
// answer goes through, so staff see the same templates, assets and JSON.
// Nothing is recorded: no ticket is read or set, the store is not asked
// (the estimate comes from the stats the last tick read), the metrics
// count no visitor. The page polls this same link, so it stays a preview.
func (g *Gate) Preview(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		g.resp.Error(w, r, http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Robots-Tag", "noindex, nofollow")
	q := r.URL.Query()
	room := q.Get("room")
	var pv Preview
	err := ErrPreviewInvalid
	if g.previews != nil {
		pv, err = g.previews.Open(q.Get("p"), room, time.Now())
	}
	if err != nil {
		if len(room) <= maxRoomBytes { // a name no room has is not worth a long line
			g.log.Debug("preview link refused", zap.String(fieldRoom, room), zap.Error(err))
		}
		if pr, ok := g.resp.(PreviewRefuser); ok {
			pr.PreviewRefused(w, r, errors.Is(err, ErrPreviewExpired))
		} else {
			g.resp.Error(w, r, http.StatusForbidden)
		}
		return
	}
	lr := g.rooms.get(room)
	if lr == nil {
		g.resp.Error(w, r, http.StatusNotFound) // a room removed since the link was made
		return
	}
	a := previewAnswer(lr, pv)
	a.Preview = r.URL.Path + "?" + url.Values{"room": {room}, "p": {q.Get("p")}}.Encode()
	if pv.Lang != "" {
		// The page picks its language from Accept-Language first; the
		// link's choice must win over the viewer's browser.
		r = r.Clone(r.Context())
		r.Header.Set("Accept-Language", pv.Lang)
	}
	if a.State.Refused() {
		g.resp.Refused(w, r, a)
		return
	}
	g.resp.Waiting(w, r, a)
}

// previewAnswer is what a visitor in pv's state would be told by lr now,
// made without the store: the estimate from the stats the last tick read,
// as answer words it for a visitor at that position.
func previewAnswer(lr *liveRoom, pv Preview) Answer {
	room, eff := lr.room(), lr.eff.Load()
	a := Answer{
		Room: lr.name, Template: room.Template, Params: room.Params, State: pv.State,
		Refresh: room.Refresh, ReturnTo: "/", StatusCode: room.StatusCode, Message: lr.message(),
	}
	switch pv.State {
	case AnswerFull:
		a.RetryAfter = fullRetry
	case AnswerChallenge:
		bits := challenge.DefaultPolicy().Base
		if room.Challenge != nil {
			bits = room.Challenge.Base
		}
		// Random, never issued: the page does the work to show it, and a
		// preview's page sends no solution (waiting.js), which no Issuer
		// would take anyway.
		var id [48]byte
		rand.Read(id[:])
		a.Challenge = &ChallengeAnswer{Prefix: base64.RawURLEncoding.EncodeToString(id[:]), Bits: bits}
	case AnswerWaiting:
		st := lr.stats.Load()
		if st == nil {
			st = &Stats{}
		}
		a.Decision = Decision{State: StateWaiting, Position: pv.Position, Line: max(pv.Position, st.Waiting), Placed: true}
		a.Stopped = eff.AdmitsNobody()
		if rate := admissionRate(st, eff.Limits.AdmitRate); rate > 0 && !a.Stopped {
			a.ETA, a.ETAMax = etaRange(pv.Position, rate, lr.spread.Load())
			a.ETAKnown = true
		}
		a.Refresh = refreshHint(*room, pv.Position, a.ETA, a.ETAKnown)
	}
	return a
}
