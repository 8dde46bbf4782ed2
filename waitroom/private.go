package waitroom

import (
	"net/http"
	"strings"
)

// privateWriter keeps a response that carries a ticket (a fresh cookie, or
// the Waitroom-Token an app is handed on every answer) out of shared
// caches: a CDN that stored the site's "public" page with our Set-Cookie
// or token would hand one visitor's admission to everyone after it, so
// the CDN's own cache rules go too (cdnCacheRules). The
// Vary it adds tells a cache that ignores private not to serve one
// visitor's copy to another either.
type privateWriter struct {
	http.ResponseWriter
	wrote bool
}

// cdnCacheRules are the cache rules a CDN obeys before Cache-Control
// (RFC 9213's CDN-Cache-Control, Fastly's and Akamai's Surrogate-Control,
// Cloudflare's own): left beside a ticket, the site's "max-age=86400"
// there would have the CDN keep what private keeps out of caches.
var cdnCacheRules = []string{"CDN-Cache-Control", "Surrogate-Control", "Cloudflare-CDN-Cache-Control"}

func (p *privateWriter) WriteHeader(code int) {
	if !p.wrote && code >= 200 {
		p.wrote = true
		h := p.Header()
		h.Set("Cache-Control", privateCacheControl(h.Get("Cache-Control")))
		for _, k := range cdnCacheRules {
			h.Del(k)
		}
		h["Vary"] = varyOn(h["Vary"], "Cookie", TokenHeader)
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *privateWriter) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack (a WebSocket).
func (p *privateWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// privateCacheControl drops what lets a shared cache keep the response
// (public, s-maxage) and adds private, keeping the site's other directives.
func privateCacheControl(cc string) string {
	var out []string
	private := false
	for d := range strings.SplitSeq(cc, ",") {
		d = strings.TrimSpace(d)
		name, _, _ := strings.Cut(strings.ToLower(d), "=")
		switch name {
		case "", "public", "s-maxage":
			continue
		case "private", "no-store":
			private = true
		}
		out = append(out, d)
	}
	if !private {
		out = append(out, "private")
	}
	return strings.Join(out, ", ")
}

// varyOn adds the named headers to a Vary list that lacks them; "*" already
// varies on everything.
func varyOn(vary []string, names ...string) []string {
	for _, n := range names {
		if !hasToken(vary, n) && !hasToken(vary, "*") {
			vary = append(vary, n)
		}
	}
	return vary
}

// hasToken reports whether a comma-separated header lists token, in any case.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range splitTokens(v) {
			if strings.EqualFold(t, token) {
				return true
			}
		}
	}
	return false
}

// splitTokens splits a comma-separated header value, trimmed, empty
// elements left out.
func splitTokens(v string) []string {
	var out []string
	for t := range strings.SplitSeq(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
