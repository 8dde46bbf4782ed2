package main

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
)

// authPath decides for a proxy in front without proxying anything: nginx's
// auth_request, Traefik's ForwardAuth, Envoy's ext_authz (any method).
const authPath = waitroom.Prefix + "auth"

// auth answers an auth request about the original request it names, routed
// and gated exactly as the proxy would: 200 with the headers to copy
// (Set-Cookie, Waitroom-Pass, Waitroom-Visitor, Waitroom-Room) for a
// visitor inside, a route without a room or a bypass; otherwise, for nginx
// (X-Original-URI), a bare 401 that its error_page turns into a request for
// the waiting page; for the others, the waiting answer itself, which they
// pass on to the client.
func (f *generation) auth(w http.ResponseWriter, r *http.Request) {
	orig, nginx, ok := originalRequest(r)
	if !ok {
		f.pages.Error(w, r, http.StatusBadRequest)
		return
	}
	clean, err := proxy.CleanPath(orig.URL.Path)
	if err != nil {
		f.pages.Error(w, r, http.StatusBadRequest)
		return
	}
	orig.URL.Path, orig.URL.RawPath = clean, ""
	allow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{waitroom.VisitorHeader, waitroom.RoomHeader, proxy.PassHeader} {
			if v := r.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	route, matched := f.cfg.router.Match(orig.Host, clean)
	switch {
	case matched && route.Refused:
		f.pages.Error(w, r, http.StatusNotFound)
		return
	case !matched || route.Room == "" || f.cfg.bypass.Match(orig, clean):
		allow.ServeHTTP(w, orig) // not a room's: waitroom has nothing against it
		return
	}
	withPass := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mk := f.pass(route.Upstream); mk != nil {
			if p := mk(r); p != "" {
				r.Header.Set(proxy.PassHeader, p)
			}
		}
		allow.ServeHTTP(w, r)
	})
	if nginx {
		orig = waitroom.AuthCheck(orig)
	}
	if route.Template != "" {
		f.gate.ServeFilled(w, orig, route.Template, route.Room, params(route.Params), withPass)
		return
	}
	f.gate.Serve(w, orig, route.Room, withPass)
}

// originalRequest rebuilds the request an auth request is about: from
// X-Original-URI and X-Original-Method (nginx) or X-Forwarded-Uri,
// X-Forwarded-Method and X-Forwarded-Host (Traefik, Envoy), with the auth
// request's own cookies and headers, which the proxy passes along.
func originalRequest(r *http.Request) (*http.Request, bool, bool) {
	uri, method, host := r.Header.Get("X-Original-URI"), r.Header.Get("X-Original-Method"), r.Host
	nginx := uri != ""
	if !nginx {
		uri, method = r.Header.Get("X-Forwarded-Uri"), r.Header.Get("X-Forwarded-Method")
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, authPath); uri == "" && ok && strings.HasPrefix(rest, "/") {
		// Envoy's ext_authz sends the original path after its path_prefix.
		uri = rest
		if r.URL.RawQuery != "" {
			uri += "?" + r.URL.RawQuery
		}
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
	for _, h := range []string{"X-Original-URI", "X-Original-Method", "X-Forwarded-Uri", "X-Forwarded-Method", "X-Forwarded-Host"} {
		orig.Header.Del(h)
	}
	return orig, nginx, true
}
