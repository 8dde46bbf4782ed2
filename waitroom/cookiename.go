package waitroom

import (
	"errors"
	"net/http"
	"strings"
)

// hostPrefix is the cookie name prefix a browser accepts only from a
// secure origin with Path=/ and no Domain (RFC 6265bis): no sibling
// subdomain can set or overwrite such a cookie, so none can toss a ticket
// of its choosing into this site's visitors' browsers.
const hostPrefix = "__Host-"

// errLegacyTooNew: a ticket sealed since the __Host- name began came in
// the old name, which only a sibling subdomain could have set.
var errLegacyTooNew = errors.New("a ticket sealed since the cookie took the __Host- prefix, in its old name")

// CookieName is the name of the room's cookie: "__Host-waitroom_concert"
// when cookie.secure is set and cookie.domain is not (every room cookie
// has Path=/), else "waitroom_concert".
func (t *Tickets) CookieName(room string) string {
	if t.hostOnly() {
		return hostPrefix + t.signName(room)
	}
	return t.signName(room)
}

// CookieNames are every name the room's ticket may come in: its cookie's
// and, with the prefix, the unprefixed one of older versions, which the
// gateway reads once and strips before the site sees it.
func (t *Tickets) CookieNames(room string) []string {
	if t.hostOnly() {
		return []string{t.CookieName(room), t.signName(room)}
	}
	return []string{t.signName(room)}
}

// signName is the name a ticket is signed under, "waitroom_concert",
// whatever its cookie is called: a ticket for one room never decodes for
// another, and a renamed cookie keeps its value.
func (t *Tickets) signName(room string) string { return t.cfg.Name + "_" + room }

func (t *Tickets) hostOnly() bool { return t.cfg.Secure && t.cfg.Domain == "" }

// hasCookie reports whether r carries the room's cookie under any name.
func (t *Tickets) hasCookie(r *http.Request, room string) bool {
	for _, n := range t.CookieNames(room) {
		if _, err := r.Cookie(n); err == nil {
			return true
		}
	}
	return false
}

// readLegacy finds a ticket in the room's unprefixed cookie, for a browser
// that brought none under the __Host- name (p). Only a ticket sealed
// before these settings were built counts: one sealed since was handed out
// under the new name, so an old-named copy of it was tossed in.
func (t *Tickets) readLegacy(r *http.Request, room string, p Presented) Presented {
	if !t.hostOnly() {
		return p
	}
	for _, c := range r.CookiesNamed(t.signName(room)) {
		p.Cookie = true
		tk, err := t.Decode(room, c.Value)
		if err == nil && tk.Sealed <= t.built {
			return Presented{Ticket: tk, Raw: c.Value, Valid: true, Cookie: true, Legacy: true}
		}
		if err == nil {
			err = errors.Join(errLegacyTooNew, errTicketUnusable)
		}
		p.Refused, p.Rejection = true, rejection(err)
	}
	return p
}

// migrate moves a ticket read from the unprefixed cookie to the room's
// __Host- cookie, unless this answer set that cookie already, and drops
// the old one. The value stays, so nobody in line loses a place.
func (t *Tickets) migrate(w http.ResponseWriter, room, value string) {
	prefix := t.CookieName(room) + "="
	set := false
	for _, v := range w.Header()["Set-Cookie"] {
		set = set || strings.HasPrefix(v, prefix)
	}
	if value != "" && !set {
		t.SetCookie(w, room, value)
	}
	w.Header().Add("Set-Cookie", t.legacyExpiry(room).String())
}

// legacyExpiry drops the room's unprefixed cookie.
func (t *Tickets) legacyExpiry(room string) *http.Cookie {
	c := t.cookie(room, "", -1)
	c.Name = t.signName(room)
	return c
}
