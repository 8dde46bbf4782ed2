package main

import (
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web"
)

// frontDoor is the visitor listener's handler, where every request enters:
// work out the client's address, clean the path, serve waitroom's own
// endpoints, route, then bypass, proxy or queue. It takes the generation in
// service once per request, so a reload never changes the rules under a
// request.
type frontDoor struct{ app *App }

func (fd *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := fd.app.current()
	// Only the gate may tell an upstream who a visitor is.
	r.Header.Del(waitroom.VisitorHeader)
	r.Header.Del(waitroom.RoomHeader)
	// Once, here: the bypass rules, the per-network limits, the logs and
	// the metrics all read this address, believed from forwarding headers
	// only when the peer is a trusted proxy.
	client := proxy.ClientAddr(r.RemoteAddr, r.Header, f.cfg.trusted)
	r = r.WithContext(proxy.WithClient(r.Context(), client))
	setClient(r.Context(), client.String())
	// An escaped slash inside what a room template takes as one segment
	// ("/events/a%2Fb/") must not name a room: the decoded path no longer
	// says where the segment ended.
	encodedSlash := r.URL.RawPath != "" && strings.Contains(strings.ToLower(r.URL.RawPath), "%2f")
	clean, err := proxy.CleanPath(r.URL.Path)
	if err != nil {
		f.pages.Error(w, r, http.StatusBadRequest)
		return
	}
	// Route on the cleaned path and forward that same path, so what the
	// router saw is what the upstream gets.
	r.URL.Path, r.URL.RawPath = clean, ""
	if match := proxy.MatchPath(clean); hasPrefixFold(match, waitroom.Prefix) || strings.EqualFold(match, strings.TrimSuffix(waitroom.Prefix, "/")) {
		f.endpoint(w, r, clean)
		return
	}
	route, ok := f.cfg.router.Match(r.Host, clean)
	if !ok || route.Refused || (route.Template != "" && encodedSlash) {
		// Refused: the path fits a room template's route but its value
		// cannot name a room; it must not fall through to another route.
		f.pages.Error(w, r, http.StatusNotFound)
		return
	}
	up := f.upstreams[route.Upstream]
	setUpstream(r.Context(), route.Upstream)
	if route.Room == "" || f.cfg.bypass.Match(r, clean) {
		fd.app.metrics.Request(route.Room, "bypass")
		if route.Room == "" {
			setDecision(r.Context(), "", "proxied")
		} else {
			setDecision(r.Context(), route.Room, "bypass")
		}
		up.ServeHTTP(w, r)
		return
	}
	if route.Template != "" {
		f.gate.ServeFilled(w, r, route.Template, route.Room, params(route.Params), up)
		return
	}
	f.gate.Serve(w, r, route.Room, up)
}

// params are the router's path parameters as the gate takes them.
func params(ps []proxy.Param) []waitroom.Param {
	out := make([]waitroom.Param, len(ps))
	for i, p := range ps {
		out[i] = waitroom.Param{Name: p.Name, Value: p.Value}
	}
	return out
}

func (f *generation) endpoint(w http.ResponseWriter, r *http.Request, clean string) {
	switch clean {
	case waitroom.StatusPath:
		f.gate.Status(w, r)
	case waitroom.LeavePath:
		f.gate.Leave(w, r)
	case jwksPath:
		f.jwks().ServeHTTP(w, r)
	case authPath:
		f.auth(w, r)
	case waitroom.EnterPath:
		f.gate.Enter(w, r)
	case clientPath:
		f.pages.Client(w, r)
	default:
		if strings.HasPrefix(clean, authPath+"/") {
			f.auth(w, r) // Envoy's ext_authz appends the original path
			return
		}
		if web.IsStatic(clean) {
			f.pages.Static(w, r)
			return
		}
		f.pages.Error(w, r, http.StatusNotFound)
	}
}

// clientPath serves client.js, for SPAs and sites' own pages.
const clientPath = waitroom.Prefix + "client.js"

// jwksPath serves the public keys of the admission pass, for sites that
// verify it (also /admin/api/jwks on the admin listener).
const jwksPath = waitroom.Prefix + "jwks.json"

// jwks is the key set handler of the generation; 404 without passes.
func (f *generation) jwks() http.Handler {
	if f.signer == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.pages.Error(w, r, http.StatusNotFound) })
	}
	return f.signer.JWKSHandler()
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// chain wraps h in middleware, the first listed outermost.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// recoverer answers a panicking request with a 502 page and logs the stack,
// so one bad request never takes a connection's neighbours down with it.
func recoverer(log *zap.Logger, pages *web.Pages) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p) // the proxy's way to abort a response; net/http handles it
				}
				log.Error("request panicked", zap.String("panic", fmt.Sprint(p)), zap.Stack("stack"))
				pages.Error(w, r, http.StatusBadGateway)
			}()
			next.ServeHTTP(w, r)
		})
	}
}
