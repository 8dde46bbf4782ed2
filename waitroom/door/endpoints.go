package door

import (
	"net/http"
	"strings"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web"
)

// Paths under waitroom.Prefix that Endpoints serves besides the gate's
// status, leave and enter.
const (
	// ClientPath serves client.js, for SPAs and sites' own pages, and
	// ClientTypesPath its TypeScript types.
	ClientPath      = waitroom.Prefix + "client.js"
	ClientTypesPath = waitroom.Prefix + "client.d.ts"
	// JWKSPath serves the public keys of the admission pass, for sites
	// that verify it (also /admin/api/jwks on the admin listener).
	JWKSPath = waitroom.Prefix + "jwks.json"
	// AuthPath decides for a proxy in front without proxying anything:
	// nginx's auth_request, Traefik's ForwardAuth, Envoy's ext_authz,
	// which appends the original path to it.
	AuthPath = waitroom.Prefix + "auth"
	// ReleasePath ends the session a pass vouches for: the site's release
	// with the visitor's Waitroom-Pass, no admin token needed.
	ReleasePath = waitroom.Prefix + "release"
)

// Endpoints serves waitroom's own paths, the requests Router.Route calls
// KindEndpoint, for the front door and the middleware alike. Its fields
// are set before first use; Gate and Pages are required.
type Endpoints struct {
	Gate  *waitroom.Gate
	Pages *web.Pages
	// JWKS and Auth serve JWKSPath and AuthPath (and below it); nil
	// answers 404 (the middleware has neither).
	JWKS http.Handler
	Auth http.Handler
	// Release serves ReleasePath; nil answers 404.
	Release http.Handler
}

// ServeHTTP answers r, whose URL.Path is the cleaned path of the route
// decision; any other path under the prefix is 404.
func (e *Endpoints) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == waitroom.StatusPath:
		e.Gate.Status(w, r)
	case p == waitroom.LeavePath:
		e.Gate.Leave(w, r)
	case p == waitroom.LeftPath:
		e.Gate.Left(w, r)
	case p == waitroom.EnterPath:
		e.Gate.Enter(w, r)
	case p == waitroom.PreviewPath:
		e.Gate.Preview(w, r)
	case p == ClientPath:
		e.Pages.Client(w, r)
	case p == ClientTypesPath:
		e.Pages.ClientTypes(w, r)
	case e.JWKS != nil && p == JWKSPath:
		e.JWKS.ServeHTTP(w, r)
	case e.Release != nil && p == ReleasePath:
		e.Release.ServeHTTP(w, r)
	case e.Auth != nil && (p == AuthPath || strings.HasPrefix(p, AuthPath+"/")):
		e.Auth.ServeHTTP(w, r)
	case web.IsStatic(p):
		e.Pages.Static(w, r) // the waiting page's style and scripts
	default:
		e.Pages.Error(w, r, http.StatusNotFound)
	}
}
