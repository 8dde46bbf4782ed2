package proxy

import (
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// Header names shared with package waitroom, which this package must not
// import; the values are the same.
const (
	// TokenHeader carries a visitor's ticket for clients without cookies. It
	// is never forwarded: the upstream has no use for it and must not log it.
	TokenHeader = "Waitroom-Token"
	// VisitorHeader carries the admitted visitor's id to the upstream. The
	// caller sets it after stripping any client-sent value.
	VisitorHeader = "Waitroom-Visitor"
	// RoomHeader carries the room the visitor was admitted to.
	RoomHeader = "Waitroom-Room"
	// CommandHeader is a response header (or trailer) with which the upstream
	// instructs the waiting room (see Commands); it never reaches the
	// browser.
	CommandHeader = "Waitroom-Command"
	// PassHeader carries the admission pass the site may verify (package
	// waitroom/pass); a client's own is never forwarded.
	PassHeader = "Waitroom-Pass"
)

// Log field names: the project's closed list, as far as this package uses it.
const (
	fieldUpstream = "upstream"
	fieldStatus   = "status"
)

// hasToken reports whether any of the comma-separated lists in values holds
// token, ignoring ASCII case and anything after a "/" (so "h2c/1.0" is h2c).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t, _, _ = strings.Cut(strings.TrimSpace(t), "/")
			if strings.EqualFold(t, token) {
				return true
			}
		}
	}
	return false
}

// isUpgrade reports whether ReverseProxy will treat the request as a protocol
// upgrade: by its rule, Connection must list "upgrade" and Upgrade be set.
func isUpgrade(h http.Header) bool {
	return hasToken(h["Connection"], "upgrade") && h.Get("Upgrade") != ""
}

// badUpgrade reports an Upgrade header that must be answered 400 here rather
// than passed on. h2c would turn the connection to the upstream into an
// HTTP/2 tunnel that no longer passes through the proxy's checks (request
// smuggling past the room); a non-printable protocol name would reach the
// error handler as a 502 that blames the upstream.
func badUpgrade(h http.Header) bool {
	vs := h["Upgrade"]
	if len(vs) == 0 {
		return false
	}
	for _, v := range vs {
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return true
			}
		}
	}
	return hasToken(vs, "h2c")
}

// copyForwarded puts a trusted peer's forwarding headers on the outbound
// request before SetXForwarded, which then appends the peer to
// X-Forwarded-For.
func copyForwarded(out, in http.Header) {
	for _, k := range []string{"Forwarded", "X-Forwarded-For"} {
		if v := in[k]; len(v) > 0 {
			out[k] = slices.Clone(v)
		}
	}
}

// keepForwardedOrigin restores a trusted peer's X-Forwarded-Host and -Proto,
// which SetXForwarded overwrote with what this hop saw: behind a TLS-ending
// load balancer the upstream must still hear "https" and the public host.
func keepForwardedOrigin(out, in http.Header) {
	for _, k := range []string{"X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := in.Get(k); v != "" {
			out.Set(k, v)
		}
	}
}

// stripCookies removes the cookies own claims from the Cookie header(s),
// keeping every other name=value pair exactly as the browser sent it:
// re-serialising through http.Cookie would re-quote or drop values the
// upstream's own parser accepts. Several Cookie lines become one; none is
// left when nothing remains. The header is untouched when nothing is removed.
func stripCookies(h http.Header, own func(name string) bool) {
	lines := h["Cookie"]
	if len(lines) == 0 {
		return
	}
	var kept []string
	dropped := false
	for _, line := range lines {
		for pair := range strings.SplitSeq(line, ";") {
			pair = textproto.TrimString(pair)
			if pair == "" {
				continue
			}
			name, _, _ := strings.Cut(pair, "=")
			if own(textproto.TrimString(name)) {
				dropped = true
				continue
			}
			kept = append(kept, pair)
		}
	}
	switch {
	case !dropped:
	case len(kept) == 0:
		h.Del("Cookie")
	default:
		h["Cookie"] = []string{strings.Join(kept, "; ")}
	}
}

// dropReserved removes every header whose name, compared without case and
// with '_' and '.' read as '-', is one of names. CGI-style servers (PHP,
// WSGI) read "Waitroom_Visitor" exactly as "Waitroom-Visitor", so removing
// the canonical spelling alone would let a client speak for the gate.
func dropReserved(h http.Header, names []string) {
	for k := range h {
		if isReserved(k, names) {
			delete(h, k)
		}
	}
}

func isReserved(k string, names []string) bool {
	for _, n := range names {
		if len(k) == len(n) && sameName(k, n) {
			return true
		}
	}
	return false
}

// isToken reports whether s is an RFC 9110 token, the grammar of header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
