package main

import (
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/door"
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
	// only when the peer is a trusted proxy and no PROXY header names it.
	r, sc := waitroom.Scoped(r)
	sc.Client = proxy.ClientAddr(r.RemoteAddr, r.Header, f.cfg.forwarders)
	d := f.router.Route(r)
	sc.Room, sc.Upstream = d.Room, d.Upstream
	// Route on the cleaned path and forward that same path, so what the
	// router saw is what the upstream gets.
	r.URL.Path, r.URL.RawPath = d.Path, ""
	switch d.Kind {
	case door.KindRoom:
		f.gateRoute(w, r, d, f.upstreams[d.Upstream])
	case door.KindNoRoom, door.KindBypass:
		f.through(r, d)
		f.upstreams[d.Upstream].ServeHTTP(w, r)
	case door.KindEndpoint:
		f.endpoints.ServeHTTP(w, r)
	case door.KindBadPath:
		f.pages.Error(w, r, http.StatusBadRequest)
	default:
		// Refused (the path fits a room template's route but its value
		// cannot name a room; it must not fall through to another
		// route), no route, and any kind added later: nothing reaches
		// the site unless a case above says so.
		f.pages.Error(w, r, http.StatusNotFound)
	}
}

// through records a request that goes to its upstream without the gate:
// a route without a room ("proxied") or a bypass rule's ("bypass").
func (f *generation) through(r *http.Request, d door.Route) {
	o := waitroom.OutcomeBypass
	if d.Kind == door.KindNoRoom {
		o = waitroom.OutcomeProxied
	}
	label := d.Room // a filled room counts under its template's name
	if d.Template != "" {
		label = d.Template
	}
	waitroom.Record(r, f.obs, label, d.Room, o, "")
}

// withScope gives each request its waitroom.Scope before anything reads
// it: the access log outside the front door reads what the front door
// and the gate write.
func withScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, _ = waitroom.Scoped(r)
		next.ServeHTTP(w, r)
	})
}

// gateRoute puts a request for a room's route through the gate; next
// serves it once admitted.
func (f *generation) gateRoute(w http.ResponseWriter, r *http.Request, d door.Route, next http.Handler) {
	if d.Template != "" {
		f.gate.ServeFilled(w, r, d.Template, d.Room, d.Params, next)
		return
	}
	f.gate.Serve(w, r, d.Room, next)
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
