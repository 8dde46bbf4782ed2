package proxy

import (
	"net/http"
	"strings"
)

// headerKind sorts request header names for dropForwarded.
type headerKind uint8

const (
	otherHeader headerKind = iota
	// forwardingHeader claims to say who the client is or how it came in
	// (X-Forwarded-For, X-Real-IP, True-Client-IP, ...). Only a trusted
	// proxy's word counts, and only in the canonical spelling.
	forwardingHeader
	// overrideHeader names another path than the request line's
	// (X-Original-URL, X-Rewrite-URL): frameworks that route on it would
	// serve a page other than the one the Router matched, whoever sent it.
	overrideHeader
)

// Names are written normalised: lower case, with "-" for "_" and ".".
var (
	// kindByName are the names matched whole.
	kindByName = map[string]headerKind{
		"forwarded":                 forwardingHeader,
		"forwarded-for":             forwardingHeader,
		"client-ip":                 forwardingHeader,
		"x-real-ip":                 forwardingHeader,
		"x-originating-ip":          forwardingHeader,
		"x-remote-ip":               forwardingHeader,
		"x-remote-addr":             forwardingHeader,
		"x-proxyuser-ip":            forwardingHeader,
		"cf-connecting-ipv6":        forwardingHeader,
		"cf-pseudo-ipv4":            forwardingHeader,
		"x-envoy-external-address":  forwardingHeader,
		"x-appengine-user-ip":       forwardingHeader,
		"x-azure-socketip":          forwardingHeader,
		"x-nf-client-connection-ip": forwardingHeader,
		"x-host":                    forwardingHeader,
		"x-original-host":           forwardingHeader,
		"x-original-url":            overrideHeader,
		"x-rewrite-url":             overrideHeader,
	}
	// forwardingPrefixes cover a family with any suffix: X-Forwarded-For,
	// -Host, -Proto, -Port, -Prefix, -Ssl, -Server, -Client-Cert and the rest.
	forwardingPrefixes = []string{"x-forwarded", "x-original-forwarded"}
	// forwardingSuffixes cover the vendors' client address headers:
	// True-Client-IP, X-Client-IP, X-Cluster-Client-IP, Fastly-Client-IP,
	// CF-Connecting-IP, X-Azure-ClientIP, WL-Proxy-Client-IP and the rest.
	forwardingSuffixes = []string{"-client-ip", "-clientip", "-connecting-ip", "-real-ip"}
)

// maxNamedLen is the longest name in kindByName; a longer header name can
// only match a prefix or a suffix.
const maxNamedLen = 32

// kindOf sorts the header name k, comparing ASCII case-insensitively with
// "_" and "." read as "-": CGI, WSGI and PHP servers turn all three into "_"
// (HTTP_X_FORWARDED_FOR), so "X_Forwarded_For" is X-Forwarded-For to them.
// It does not allocate.
func kindOf(k string) headerKind {
	if k == "" || !mayBeKnown(k) {
		return otherHeader
	}
	if len(k) <= maxNamedLen {
		var buf [maxNamedLen]byte
		for i := 0; i < len(k); i++ {
			buf[i] = foldName(k[i])
		}
		if kind, ok := kindByName[string(buf[:len(k)])]; ok {
			return kind
		}
	}
	for _, p := range forwardingPrefixes {
		if len(k) >= len(p) && sameName(k[:len(p)], p) {
			return forwardingHeader
		}
	}
	for _, s := range forwardingSuffixes {
		if len(k) >= len(s) && sameName(k[len(k)-len(s):], s) {
			return forwardingHeader
		}
	}
	return otherHeader
}

// lastBytes are the last bytes of every name in kindByName and of every
// suffix in forwardingSuffixes; every prefix starts with "x".
const lastBytes = "dr64pstl"

// mayBeKnown is kindOf's quick first look, which most of a browser's
// headers (Accept-Encoding, Cookie, Sec-Fetch-Mode, ...) do not pass.
func mayBeKnown(k string) bool {
	return foldName(k[0]) == 'x' || strings.IndexByte(lastBytes, foldName(k[len(k)-1])) >= 0
}

// dropForwarded removes what a client may have sent to pass for a proxy or
// to name another path. From an untrusted peer every forwarding header goes,
// in any spelling. From a trusted proxy the canonical spellings stay and
// the odd ones ("X_Forwarded_For", "X.Real.IP") go: no proxy sends them, so
// they can only come from the client behind it, and a CGI server would read
// them as the real ones. Override headers go whoever sent them.
func dropForwarded(h http.Header, fromTrusted bool) {
	for k := range h {
		switch kindOf(k) {
		case overrideHeader:
			delete(h, k)
		case forwardingHeader:
			if !fromTrusted || strings.ContainsAny(k, "_.") {
				delete(h, k)
			}
		}
	}
}

// foldName maps a header name byte to its normalised form: lower case,
// "-" for "_" and ".".
func foldName(c byte) byte {
	switch {
	case c == '_' || c == '.':
		return '-'
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	}
	return c
}

// sameName reports whether two header names of the same length are one
// name once normalised by foldName.
func sameName(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if foldName(a[i]) != foldName(b[i]) {
			return false
		}
	}
	return true
}
