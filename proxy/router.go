package proxy

import (
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/pattern"

	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// RouteConfig is one entry of the `routes:` list.
type RouteConfig struct {
	// Host is the host name the route answers for, without scheme or port,
	// any case ("tickets.example.com", "[::1]"). Default "": any host. A route
	// with a matching host beats every route without one.
	Host string `mapstructure:"host" yaml:"host" json:"host"`
	// Path is the path prefix, clean and decoded ("/events/"). Default "/".
	// It matches ASCII case-insensitively, and a prefix ending in "/" also
	// matches the path without that slash.
	Path string `mapstructure:"path" yaml:"path" json:"path"`
	// Upstream names the entry of `upstreams:` that serves the route. Required.
	Upstream string `mapstructure:"upstream" yaml:"upstream" json:"upstream"`
	// Room names the entry of `rooms:` that guards the route. Default "": no
	// room, requests go straight through.
	Room string `mapstructure:"room" yaml:"room" json:"room"`
}

// Validate reports every problem of the route that it can see alone, with
// keys relative to the route. Whether Upstream and Room exist is checked by
// ValidateRoutes.
func (c RouteConfig) Validate() error {
	var p conf.Problems
	if rule := checkHost(c.Host); rule != "" {
		p.Add("host", "%s", rule)
	}
	pat, err := pattern.ParsePath(c.Path)
	rule := ""
	if err != nil {
		rule = err.Error()
	} else {
		rule = checkPrefix(strings.NewReplacer("{", "", "}", "").Replace(c.Path))
	}
	if rule != "" {
		p.Add("path", "%s", rule)
	}
	if room, err := pattern.ParseTemplate(c.Room); err != nil {
		p.Add("room", "a room template names its parameters as {id}, got %q", c.Room)
	} else {
		for _, name := range room.Names() {
			if rule == "" && !slices.Contains(pat.Names(), name) {
				p.Add("room", "names {%s}, which the path %q does not have", name, c.Path)
			}
		}
	}
	if c.Upstream == "" {
		p.Add("upstream", "required, got %q", c.Upstream)
	}
	return p.Err()
}

// BuildRouter checks the whole `routes:` list and builds its router: each
// route, the upstream and room names against the configured sets, routes
// that repeat a (host, path) pair, and rooms that a different Host header
// walks around (see hostBypasses). Keys are "routes[2].upstream" and the
// like; the router is nil when there is any. Whether an empty list is
// acceptable is the caller's call.
func BuildRouter(routes []RouteConfig, upstreams map[string]string, rooms map[string]bool) (*Router, error) {
	if err := routeProblems(routes, upstreams, rooms); err != nil {
		return nil, err
	}
	if err := hostBypasses(routes, upstreams); err != nil {
		return nil, err
	}
	return newRouter(routes), nil
}

// routeProblems skips the name checks for a nil set, which is how NewRouter,
// knowing neither set, reuses it.
func routeProblems(routes []RouteConfig, upstreams map[string]string, rooms map[string]bool) error {
	var p conf.Problems
	seen := make(map[[2]string]int, len(routes))
	for i, rc := range routes {
		key := fmt.Sprintf("routes[%d]", i)
		p.Nest(key+".", rc.Validate())
		if upstreams != nil && rc.Upstream != "" && !has(upstreams, rc.Upstream) {
			p.Add(key+".upstream", "unknown upstream %q (known: %s)", rc.Upstream, names(upstreams))
		}
		if rooms != nil && rc.Room != "" && !has(rooms, rc.Room) {
			p.Add(key+".room", "unknown room %q (known: %s)", rc.Room, names(rooms))
		}
		pair := rc.Place()
		if j, dup := seen[pair]; dup {
			// A conflict: each route is fine alone, and the admin API
			// answers 409 for one that takes a pair in service.
			p.Conflict(key, "same host and path as routes[%d], got host %q, path %q", j, rc.Host, rc.Path)
			continue
		}
		seen[pair] = i
	}
	return p.Err()
}

func has[V any](set map[string]V, name string) bool {
	_, ok := set[name]
	return ok
}

func names[V any](set map[string]V) string {
	var ns []string
	for n := range set {
		ns = append(ns, fmt.Sprintf("%q", n))
	}
	if len(ns) == 0 {
		return "none"
	}
	slices.Sort(ns)
	return strings.Join(ns, ", ")
}

// Route is a route as the Router matched it. Host and Path are normalized:
// lower case, host without brackets or trailing dot.
type Route struct {
	// Index is the route's position in the configured list, for logs.
	Index int
	// Host is the lower-case host name; "" matches any host.
	Host string
	// Path is the lower-case path prefix.
	Path string
	// Upstream names the upstream that serves the route.
	Upstream string
	// Room names the room that guards the route; "" for none. For a room
	// template ("event-{id}") it is the room filled in from the path
	// ("event-123"), and Template is the template.
	Room     string
	Template string
	// Params are the path parameters' names and values (lower case), in
	// the order the path names them; nil for a path without any.
	Params []Param
	// Refused is true when the path fits the route but a parameter's value
	// is not one (see pattern.ValidValue): answer 404, never another route.
	Refused bool

	pat  pattern.Path
	room pattern.Template
}

// Param is one path parameter as matched.
type Param = pattern.Param

// Router picks the route for a request. It is immutable once built and safe
// for concurrent use; a reload builds a new one.
type Router struct {
	// routes are in match order: routes with a host first, then the longest
	// prefix first, then configuration order. The first that matches wins.
	routes []Route
}

// NewRouter validates routes (not the upstream and room names, which it
// cannot know) and sorts them for Match.
func NewRouter(routes []RouteConfig) (*Router, error) {
	if err := routeProblems(routes, nil, nil); err != nil {
		return nil, fmt.Errorf("building router: %w", err)
	}
	return newRouter(routes), nil
}

// newRouter sorts routes, already checked, for Match.
func newRouter(routes []RouteConfig) *Router {
	rt := &Router{routes: make([]Route, len(routes))}
	for i, rc := range routes {
		pat, _ := pattern.ParsePath(rc.Path)      // checked by routeProblems
		room, _ := pattern.ParseTemplate(rc.Room) // and this too
		rt.routes[i] = Route{
			Index: i, Host: normalizeHost(rc.Host), Path: lowerASCII(rc.Path),
			Upstream: rc.Upstream, Room: rc.Room, pat: pat, room: room,
		}
		if pattern.IsTemplate(rc.Room) {
			rt.routes[i].Template = rc.Room
		}
	}
	slices.SortStableFunc(rt.routes, func(a, b Route) int {
		if ah, bh := a.Host != "", b.Host != ""; ah != bh {
			if ah {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.pat.Specificity(), a.pat.Specificity())
	})
	return rt
}

// Match returns the route for a request to host (the Host header, port and
// all) and cleanPath (from CleanPath), compared in its MatchPath form, so
// "/events;x/1" is inside "/events/". Among the routes whose host matches it
// picks the longest prefix; only when none does, the longest prefix among the
// routes without a host. It allocates only for a path with ";".
func (rt *Router) Match(host, cleanPath string) (Route, bool) {
	h := hostOnly(host)
	cleanPath = MatchPath(cleanPath)
	for i := range rt.routes {
		r := &rt.routes[i]
		if r.Host != "" && !equalFoldLower(h, r.Host) {
			continue
		}
		if r.pat.Literal() {
			if hasPathPrefix(cleanPath, r.Path) {
				return *r, true
			}
			continue
		}
		if m, ok := r.matchParams(cleanPath); ok {
			return m, true
		}
	}
	return Route{}, false
}

// hostOnly strips the port from a Host header value ("[::1]:8080" -> "::1",
// "shop:8080" -> "shop") and one trailing dot, since "shop.example.com." names
// the same site and must not fall through to a route without a room.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[1:i]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}

// normalizeHost is hostOnly for configured names, plus lower case.
func normalizeHost(h string) string { return lowerASCII(hostOnly(h)) }

// Place is the host and path prefix rc claims, as the router compares
// them: two routes with one Place collide.
func (rc RouteConfig) Place() [2]string {
	return [2]string{normalizeHost(rc.Host), lowerASCII(rc.Path)}
}

// checkHost returns why h is not usable as a route host, or "" when it is.
func checkHost(h string) string {
	switch {
	case h == "":
		return ""
	case normalizeHost(h) == "":
		return fmt.Sprintf("must be a host name such as \"tickets.example.com\", got %q", h)
	case strings.Contains(h, "/"):
		return fmt.Sprintf("must be a host name without scheme or path, got %q", h)
	case strings.HasPrefix(h, "["):
		if a, err := netip.ParseAddr(strings.TrimSuffix(h[1:], "]")); err == nil && a.Is6() && strings.HasSuffix(h, "]") {
			return ""
		}
		return fmt.Sprintf("must be a bracketed IPv6 address without port such as \"[::1]\", got %q", h)
	case strings.Contains(h, ":"):
		if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
			return ""
		}
		return fmt.Sprintf("must not have a port, got %q", h)
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Sprintf("must be an ASCII host name such as \"tickets.example.com\" (punycode for other scripts), got %q", h)
		}
	}
	return ""
}
