package pass

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// MiddlewareOptions tune Middleware.
type MiddlewareOptions struct {
	// Room, when set, is the room a pass must be for.
	Room string
	// RoomOf, when set, names the room from the request instead, for sites
	// whose rooms are filled from a template: with the gateway's room
	// "event-{id}" on "/events/{id}/", and a ServeMux pattern of the same
	// shape, func(r *http.Request) string { return "event-" + r.PathValue("id") }.
	// An empty answer refuses the request (ErrRoom): a request the site
	// cannot place in a room is no request a pass vouches for.
	RoomOf func(r *http.Request) string
	// PathOf is the path the pass must name. Default RequestPath(r), the
	// path as the site received it on the request line; a site behind a
	// proxy that rewrites paths gives the path the gateway saw. Return ""
	// to check no path.
	PathOf func(r *http.Request) string
	// Header carries the pass. Default HeaderName ("Waitroom-Pass").
	Header string
	// Refused answers a request without a valid pass. Default: 403 with a
	// short text body, or 503 when the key set could not be loaded (the
	// pass could not be checked, which is not the visitor's fault). err
	// wraps one of the Err sentinels; log Reason(err), not the token.
	Refused func(w http.ResponseWriter, r *http.Request, err error)
}

// Middleware lets through only requests that carry exactly one valid pass
// for the verifier's audience, the room and the request's own path, with
// its claims in the request's context (FromContext).
func Middleware(v *Verifier, o MiddlewareOptions) func(http.Handler) http.Handler {
	if o.Header == "" {
		o.Header = HeaderName
	}
	if o.Refused == nil {
		o.Refused = refused
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			vals := r.Header.Values(o.Header)
			if len(vals) != 1 {
				o.Refused(w, r, ErrMissing)
				return
			}
			want := Expect{Room: o.Room, Path: RequestPath(r)}
			if o.PathOf != nil {
				want.Path = o.PathOf(r)
			}
			if o.RoomOf != nil {
				if want.Room = o.RoomOf(r); want.Room == "" {
					o.Refused(w, r, refuse(ErrRoom, "the request names no room"))
					return
				}
			}
			c, err := v.VerifyFor(r.Context(), vals[0], want)
			if err != nil {
				o.Refused(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), c)))
		})
	}
}

// refused is the default answer: no detail that would help a forger.
func refused(w http.ResponseWriter, _ *http.Request, err error) {
	w.Header().Set("Cache-Control", "no-store")
	if errors.Is(err, ErrKeysUnavailable) {
		http.Error(w, "the waiting room pass cannot be checked right now", http.StatusServiceUnavailable)
		return
	}
	http.Error(w, "a valid waiting room pass is required", http.StatusForbidden)
}

type ctxKey struct{}

// NewContext returns a context that carries the claims of a verified pass.
func NewContext(ctx context.Context, c Claims) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the claims Middleware put in the request's context.
func FromContext(ctx context.Context) (Claims, bool) {
	c, ok := ctx.Value(ctxKey{}).(Claims)
	return c, ok
}

// RequestPath is the path of r's request line as the client sent it,
// without the query: what a pass names, as the gateway names the path the
// site receives (in auth mode, the proxy forwards the request line as
// it came; Java's getRequestURI and Node's req.url read the same). It is
// not r.URL.EscapedPath, which spells characters such as "{" or "|" as
// %7B and %7C when the request line has them bare. A request line not in
// origin form (an absolute URI) gives r.URL.EscapedPath().
func RequestPath(r *http.Request) string {
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasPrefix(p, "/") {
		return p
	}
	return r.URL.EscapedPath()
}
