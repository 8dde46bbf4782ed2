package main

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/door"
)

// auth answers an auth request about the original request it names, routed
// and gated exactly as the proxy would: 200 with the headers to copy
// (Set-Cookie, Waitroom-Pass, Waitroom-Visitor, Waitroom-Room) for a
// visitor inside, a route without a room or a bypass; otherwise, for nginx (X-Original-URI), a bare 401 that its
// error_page turns into a request for the waiting page; for the others
// (Traefik's forwardAuth, Envoy's ext_authz), the waiting answer itself,
// which they pass on to the client, never with a 2xx status, which both
// take for "allowed".
//
// Only a peer in server.trusted_proxies is answered, the proxies that make
// auth requests: the X-Original-* and X-Forwarded-* headers name the
// request judged, and the answer to an admitted visitor carries the pass,
// a bearer credential for the site that must never reach a client.
func (f *generation) auth(w http.ResponseWriter, r *http.Request) {
	if !proxy.FromPeer(f.cfg.trusted, r.RemoteAddr) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "the auth endpoint answers only the proxies in server.trusted_proxies", http.StatusForbidden)
		return
	}
	if !authSpelling(r.RequestURI) {
		// A path that reached this endpoint only once cleaned (an escaped
		// letter, a doubled slash) could slip past the rule with which a
		// proxy keeps /.waitroom/auth off its clients' routes.
		f.pages.Error(w, r, http.StatusNotFound)
		return
	}
	orig, nginx, ok := originalRequest(r)
	if !ok {
		f.pages.Error(w, r, http.StatusBadRequest)
		return
	}
	// The pass names the path as the site will receive it: the proxy
	// forwards the original request line as the client sent it.
	sitePath, _, _ := strings.Cut(orig.RequestURI, "?")
	d := f.router.Route(orig)
	orig.URL.Path, orig.URL.RawPath = d.Path, ""
	switch d.Kind {
	case door.KindRoom:
	case door.KindNoRoom, door.KindBypass:
		f.through(orig, d)
		allow(w, orig)
		return
	case door.KindBadPath:
		if nginx {
			// nginx turns any other status into a 500 of its own; its
			// error_page sends 401 to waitroom, whose front door answers
			// the same path with the 400 it deserves.
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		f.pages.Error(w, r, http.StatusBadRequest)
		return
	default:
		// No route (another Host, say), refused, waitroom's own paths,
		// and any kind added later: never 2xx, since the front door sends
		// none of these to the site.
		// nginx takes anything but 2xx, 401 and 403 for its own error.
		if nginx {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		f.pages.Error(w, r, http.StatusNotFound)
		return
	}
	withPass := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mk := f.pass(d.Upstream); mk != nil {
			if p := mk(r, sitePath); p != "" {
				r.Header.Set(proxy.PassHeader, p)
			}
		}
		allow(w, r)
	})
	if nginx {
		f.gate.Check(w, orig, d.Template, d.Room, d.Params, withPass)
		return
	}
	f.gate.Forward(w, orig, d.Template, d.Room, d.Params, withPass)
}

// envoyHeadersToRemove is the header of an ext_authz HTTP service's OK
// answer naming the headers Envoy removes from the original request
// before the site gets it.
const envoyHeadersToRemove = "X-Envoy-Auth-Headers-To-Remove"

// allow is an auth request's yes: 200 with the headers the gate set on
// the original request, for the proxy to copy on to the site. Envoy's
// allowed_upstream_headers only replaces the headers the answer carries,
// so a client's own Waitroom-Visitor, -Room or -Pass would reach the site
// on a route without a room or a bypass: the answer names every one it
// does not carry in envoyHeadersToRemove. (nginx sets each header from
// the answer, empty or not, and Traefik's authResponseHeaders deletes the
// request's before copying, so neither needs it; both ignore it.)
func allow(w http.ResponseWriter, r *http.Request) {
	var remove []string
	for _, h := range []string{waitroom.VisitorHeader, waitroom.RoomHeader, proxy.PassHeader} {
		if v := r.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		} else {
			remove = append(remove, strings.ToLower(h))
		}
	}
	if len(remove) > 0 {
		w.Header().Set(envoyHeadersToRemove, strings.Join(remove, ", "))
	}
	w.WriteHeader(http.StatusOK)
}

// originalRequest rebuilds the request an auth request is about: from
// X-Original-URI and X-Original-Method (nginx) or X-Forwarded-Uri,
// X-Forwarded-Method and X-Forwarded-Host (Traefik, Envoy), with the auth
// request's own cookies and headers, which the proxy passes along.
func originalRequest(r *http.Request) (*http.Request, bool, bool) {
	uri, method, host := r.Header.Get("X-Original-URI"), r.Header.Get("X-Original-Method"), r.Host
	nginx := uri != ""
	if nginx && r.Header.Get("X-Forwarded-Uri") != "" {
		// A proxy sends one of the two; both means a client added one
		// that its proxy passed along, and neither can be believed.
		return nil, nginx, false
	}
	if !nginx {
		uri, method = r.Header.Get("X-Forwarded-Uri"), r.Header.Get("X-Forwarded-Method")
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	if uri == "" {
		uri = envoyURI(r)
	}
	if uri == "" || !strings.HasPrefix(uri, "/") || len(uri) > 8<<10 {
		return nil, nginx, false
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, nginx, false
	}
	if method == "" {
		method = http.MethodGet
	}
	orig := r.Clone(r.Context())
	orig.Method, orig.URL, orig.Host, orig.RequestURI = method, u, host, uri
	orig.Body, orig.ContentLength = http.NoBody, 0
	// The pass is the gate's to set: a client's own must never come back
	// in allow's headers for the proxy to copy on to the site.
	for _, h := range []string{"X-Original-URI", "X-Original-Method", "X-Forwarded-Uri", "X-Forwarded-Method", "X-Forwarded-Host", proxy.PassHeader} {
		orig.Header.Del(h)
	}
	return orig, nginx, true
}

// authSpelling reports whether the request line names the auth endpoint
// literally: /.waitroom/auth, or below it (Envoy appends the original path).
func authSpelling(requestURI string) bool {
	p, _, _ := strings.Cut(requestURI, "?")
	return p == door.AuthPath || strings.HasPrefix(p, door.AuthPath+"/")
}

// envoyURI is the original request Envoy's ext_authz names after its
// path_prefix, taken from the request as sent, so an escaped slash in it
// still reads as one. Any other spelling (an absolute form) names none: a
// decoded path could not tell an escaped slash from a real one.
func envoyURI(r *http.Request) string {
	if rest, ok := strings.CutPrefix(r.RequestURI, door.AuthPath); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return ""
}
