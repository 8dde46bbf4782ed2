package waitroom

import (
	"net/http"
	"strings"
)

// privateWriter keeps a response that carries a fresh ticket out of shared
// caches: a CDN that stored the site's "public" page with our Set-Cookie
// would hand one visitor's admission to everyone after it.
type privateWriter struct {
	http.ResponseWriter
	wrote bool
}

func (p *privateWriter) WriteHeader(code int) {
	if !p.wrote && code >= 200 {
		p.wrote = true
		h := p.Header()
		h.Set("Cache-Control", privateCacheControl(h.Get("Cache-Control")))
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
