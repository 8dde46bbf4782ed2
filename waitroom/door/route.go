package door

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
)

// Kind is what a request is to waitroom, as Router.Route decides it.
type Kind int

// The kinds of request. Each door answers them alike except where its
// caller's language differs: the auth endpoint allows what the front door
// proxies (no room, a bypass) and what is not the gateway's to judge (no
// route). Every door's switch lists the kinds it lets through and refuses
// the rest, so a kind added here is refused until a door says otherwise.
const (
	KindRoom     Kind = iota // a room's route: the gate decides
	KindEndpoint             // waitroom's own path under /.waitroom/: Endpoints
	KindBadPath              // a path CleanPath refuses: 400
	KindRefused              // fits a template's route but names no room: 404
	KindNoRoute              // no route matches: 404
	KindNoRoom               // a route without a room: to the upstream
	KindBypass               // a room's route a bypass rule lets through
)

// Route is the decision about one request: its kind, the cleaned path
// (what is matched and what is forwarded), and for a room's route its
// room, template and parameters and the upstream that serves it.
type Route struct {
	Kind     Kind
	Path     string
	Room     string
	Template string // "" unless Room was filled from a template
	Params   []waitroom.Param
	Upstream string
}

// Router decides what a request is: the one decision of the front door,
// the auth endpoint, the visitor endpoints' room lookup (RoomOf) and the
// middleware. Its fields are set before first use.
type Router struct {
	// Routes picks a route by host and path; nil sends every path to
	// Room (the middleware, in front of one handler).
	Routes *proxy.Router
	Room   string
	// Bypass lets some of a room's requests through; nil for none.
	Bypass *proxy.Bypass
}

// Route decides what r is, reading r.URL's path as sent: an escaped
// slash inside what a room template takes as one segment
// ("/events/a%2Fb/") names no room, since the decoded path no longer says
// where the segment ended.
func (rt *Router) Route(r *http.Request) Route {
	clean, err := proxy.CleanPath(r.URL.Path)
	if err != nil {
		return Route{Kind: KindBadPath}
	}
	d := Route{Path: clean}
	if isEndpoint(clean) {
		d.Kind = KindEndpoint
		return d
	}
	if rt.Routes == nil {
		d.Kind, d.Room = KindRoom, rt.Room
		return d
	}
	m, ok := rt.Routes.Match(r.Host, clean)
	d.Room, d.Template, d.Upstream, d.Params = m.Room, m.Template, m.Upstream, m.Params
	switch {
	case !ok:
		d.Kind = KindNoRoute
	case m.Refused || (m.Template != "" && encodedSlash(r)):
		d = Route{Kind: KindRefused, Path: clean} // names no room, goes nowhere
	case m.Room == "":
		d.Kind = KindNoRoom
	case rt.Bypass.Match(r, client(r), clean):
		d.Kind = KindBypass
	default:
		d.Kind = KindRoom
	}
	return d
}

// RoomOf is the room of the route a Referer path points into, for the
// visitor endpoints (waitroom.GateOptions.RoomOf); "" for none.
func (rt *Router) RoomOf(r *http.Request, path string) string {
	clean, err := proxy.CleanPath(path)
	if err != nil {
		return ""
	}
	if rt.Routes == nil {
		return rt.Room
	}
	m, _ := rt.Routes.Match(r.Host, clean)
	return m.Room
}

// isEndpoint reports a path under /.waitroom/ (or /.waitroom itself), in
// any case and whatever ;params its segments carry: none of it is a
// site's.
func isEndpoint(clean string) bool {
	m, p := proxy.MatchPath(clean), waitroom.Prefix
	return len(m) >= len(p) && strings.EqualFold(m[:len(p)], p) || strings.EqualFold(m, strings.TrimSuffix(p, "/"))
}

// client is the client's address as the front door worked it out, or
// the peer's when nothing did.
func client(r *http.Request) netip.Addr {
	if sc := waitroom.ScopeOf(r.Context()); sc != nil && sc.Client.IsValid() {
		return sc.Client
	}
	return proxy.ClientAddr(r.RemoteAddr, nil, nil)
}

func encodedSlash(r *http.Request) bool {
	return r.URL.RawPath != "" && strings.Contains(strings.ToLower(r.URL.RawPath), "%2f")
}
