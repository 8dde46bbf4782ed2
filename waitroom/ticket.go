package waitroom

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
)

// TokenHeader carries the ticket for clients without a cookie jar.
const TokenHeader = "Waitroom-Token"

// ticketVersion is bumped whenever the payload changes meaning; older
// tickets then decode as "new visitor".
const ticketVersion = 1

// Ticket is what a visitor's cookie (or Waitroom-Token) holds for one room.
// It is signed (HMAC-SHA256) and encrypted (AES), so the visitor can neither
// read nor forge it.
type Ticket struct {
	Version int    `json:"v"`
	Visitor string `json:"id"`
	Room    string `json:"r"`
	Number  int64  `json:"n"`           // ticket number from the store
	Issued  int64  `json:"t"`           // unix seconds when first issued
	Start   int64  `json:"p,omitempty"` // position when the visitor joined, for the progress bar
	Until   int64  `json:"u,omitempty"` // unix seconds the admission runs to; 0 while waiting
	Sealed  int64  `json:"s"`           // unix seconds of this encoding, to renew it before MaxAge
	// Pending is true for a ticket handed out whose place the store has
	// not written yet: its holder has not come back. Tickets issued before
	// places were written lazily read as placed.
	Pending bool `json:"w,omitempty"`
	// Entered is when the session the ticket carries began (unix seconds),
	// for waitroom_session_seconds; 0 while waiting.
	Entered int64 `json:"e,omitempty"`
	// Anchor is the store's last answer to a placed ticket's poll, which
	// the gate answers the next polls from (see Progress); zero for none.
	Anchor Anchor `json:"-"`
}

// Anchor is where a waiting ticket stood when the store last answered it:
// its Position, the room's Progress then, and when (unix seconds). Every
// instance can read it, so polls answered from it need no per-instance
// state, whichever instance serves them.
type Anchor struct {
	Position int64
	At       int64
	Progress Progress
}

// Admitted reports whether the ticket carries an admission still running at now.
func (t Ticket) Admitted(now time.Time) bool { return t.Until > now.Unix() }

// validVisitorID reports whether id is 22 characters of base64url, as
// NewVisitorID makes them.
func validVisitorID(id string) bool {
	if len(id) != 22 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewVisitorID returns 128 random bits, base64url without padding (22 bytes).
func NewVisitorID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// KeyPair is one hash key (signing) and one block key (encryption).
type KeyPair struct{ Hash, Block []byte }

// GenerateKeyPair returns a random 32-byte hash key and 32-byte block key.
func GenerateKeyPair() KeyPair {
	return KeyPair{Hash: securecookie.GenerateRandomKey(32), Block: securecookie.GenerateRandomKey(32)}
}

// Tickets encodes and decodes tickets. The first key pair encodes, every
// pair decodes, so keys can be rotated without losing anyone's place.
type Tickets struct {
	cfg    Cookie
	codecs []securecookie.Codec
	// built is when these settings were built (Unix seconds): the old
	// unprefixed cookie is read only for tickets sealed by then.
	built int64
}

// Cookie is the parsed cookie section.
type Cookie struct {
	Name     string // cookie name prefix; the room name follows an underscore
	Secure   bool
	SameSite http.SameSite
	Domain   string
	MaxAge   time.Duration // ticket lifetime
}

// NewTickets builds the codecs. keys must hold at least one pair.
func NewTickets(c Cookie, keys []KeyPair) (*Tickets, error) {
	if len(keys) == 0 {
		return nil, errors.New("building ticket codecs: no key pairs")
	}
	pairs := make([][]byte, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k.Hash, k.Block)
	}
	codecs := securecookie.CodecsFromPairs(pairs...)
	for _, codec := range codecs {
		if sc, ok := codec.(*securecookie.SecureCookie); ok {
			// Not gob (a type registry, and four times the cost of JSON):
			// a binary form that also reads the JSON of older tickets.
			sc.SetSerializer(ticketCodec{})
			// Decode checks the age itself, on the ticket's own seal, so
			// that an expired ticket can be told from a forged one.
			sc.MaxAge(0)
		}
	}
	return &Tickets{cfg: c, codecs: codecs, built: time.Now().Unix()}, nil
}

// MaxAge is how long an encoded ticket stays valid.
func (t *Tickets) MaxAge() time.Duration { return t.cfg.MaxAge }

// Encode signs and encrypts a ticket, stamping Sealed.
func (t *Tickets) Encode(tk Ticket) (string, error) {
	tk.Version = ticketVersion
	tk.Sealed = time.Now().Unix()
	v, err := securecookie.EncodeMulti(t.signName(tk.Room), tk, t.codecs...)
	if err != nil {
		return "", fmt.Errorf("encoding ticket: %w", err)
	}
	return v, nil
}

// Why a ticket that came was refused, as the metrics count it.
const (
	// RejectInvalid: it failed authentication or decoding (tampered,
	// truncated, or made with keys no longer configured).
	RejectInvalid = "invalid"
	// RejectExpired: authentic, but sealed longer than cookie.max_age ago.
	RejectExpired = "expired"
	// RejectOther: authentic but unusable (another room's, another format
	// version, a malformed visitor id).
	RejectOther = "other"
)

var (
	errTicketExpired  = errors.New("ticket expired")
	errTicketUnusable = errors.New("ticket unusable")
)

// Decode returns the ticket a value holds for room. Any error means "no
// ticket": tampered, expired, of another room, of another format, or made
// with keys no longer configured.
func (t *Tickets) Decode(room, value string) (Ticket, error) {
	var tk Ticket
	if value == "" {
		return tk, errors.New("decoding ticket: empty value")
	}
	if err := securecookie.DecodeMulti(t.signName(room), value, &tk, t.codecs...); err != nil {
		return Ticket{}, fmt.Errorf("decoding ticket: %w", err)
	}
	switch {
	case tk.Version != ticketVersion:
		return Ticket{}, fmt.Errorf("decoding ticket: version %d, want %d: %w", tk.Version, ticketVersion, errTicketUnusable)
	case tk.Room != room:
		return Ticket{}, fmt.Errorf("decoding ticket: ticket of another room: %w", errTicketUnusable)
	case !validVisitorID(tk.Visitor):
		return Ticket{}, fmt.Errorf("decoding ticket: malformed visitor id: %w", errTicketUnusable)
	case tk.Number < 0:
		return Ticket{}, fmt.Errorf("decoding ticket: negative ticket number: %w", errTicketUnusable)
	case t.cfg.MaxAge > 0 && time.Now().Unix()-tk.Sealed > int64(t.cfg.MaxAge/time.Second):
		return Ticket{}, fmt.Errorf("decoding ticket: sealed more than %v ago: %w", t.cfg.MaxAge, errTicketExpired)
	}
	return tk, nil
}

// rejection names why a value did not decode, for Presented.Rejection.
func rejection(err error) string {
	switch {
	case errors.Is(err, errTicketExpired):
		return RejectExpired
	case errors.Is(err, errTicketUnusable):
		return RejectOther
	}
	return RejectInvalid
}

// Presented is what a request brought for a room.
type Presented struct {
	Ticket Ticket
	Raw    string // the encoded value the ticket came in
	Valid  bool   // a ticket decoded
	// Cookie is true when the request carried the room's cookie, valid or
	// not: a browser, which must not be handed its ticket where a page's
	// script could read it.
	Cookie bool
	// Refused is true when a value was sent but did not decode: tampered,
	// expired, of another room, or made with keys no longer configured.
	// Rejection says why (RejectInvalid, RejectExpired, RejectOther), for
	// the last value refused.
	Refused   bool
	Rejection string
	// Legacy is true when the ticket came in the room's unprefixed cookie,
	// from before its name took the __Host- prefix: the answer moves it.
	Legacy bool
}

// Read finds the room's ticket in the Waitroom-Token header, or else in the
// room's cookies (the first that decodes: a sibling domain may have set
// another cookie of the same name in front of ours).
func (t *Tickets) Read(r *http.Request, room string) Presented {
	var p Presented
	if v := r.Header.Get(TokenHeader); v != "" {
		tk, err := t.Decode(room, v)
		if err == nil {
			return Presented{Ticket: tk, Raw: v, Valid: true}
		}
		p.Refused, p.Rejection = true, rejection(err)
	}
	for _, c := range r.CookiesNamed(t.CookieName(room)) {
		p.Cookie = true
		tk, err := t.Decode(room, c.Value)
		if err == nil {
			return Presented{Ticket: tk, Raw: c.Value, Valid: true, Cookie: true}
		}
		p.Refused, p.Rejection = true, rejection(err)
	}
	return t.readLegacy(r, room, p)
}

// SetCookie writes the room's cookie holding value.
func (t *Tickets) SetCookie(w http.ResponseWriter, room, value string) {
	http.SetCookie(w, t.cookie(room, value, int(t.cfg.MaxAge/time.Second)))
}

// ClearCookie tells the browser to drop the room's cookie.
func (t *Tickets) ClearCookie(w http.ResponseWriter, room string) {
	t.Expire(w.Header(), room)
}

// Expire adds to h the Set-Cookie that drops the room's cookie, for
// responses being prepared outside a ResponseWriter (a proxied one).
func (t *Tickets) Expire(h http.Header, room string) {
	h.Add("Set-Cookie", t.cookie(room, "", -1).String())
	if t.hostOnly() {
		h.Add("Set-Cookie", t.legacyExpiry(room).String())
	}
}

func (t *Tickets) cookie(room, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     t.CookieName(room),
		Value:    value,
		Path:     "/",
		Domain:   t.cfg.Domain,
		MaxAge:   maxAge,
		Secure:   t.cfg.Secure,
		HttpOnly: true,
		SameSite: t.cfg.SameSite,
	}
}
