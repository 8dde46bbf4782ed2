package proxy

import (
	"fmt"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// hostBypasses finds rooms that only a Host header guards. The upstream
// cannot see which Host a visitor sent (SetURL replaces it with the
// upstream's own), so a room route bound to tickets.example.com beside a
// host-less route to the same upstream is open to anyone who sends another
// Host: the request for the very same path goes through the host-less route.
// Upstreams are compared by their normalised origin (UpstreamSettings.Origin),
// so one site under two upstream names is one upstream here; by name when
// origins is nil.
func hostBypasses(routes []RouteConfig, origins map[string]string) error {
	var p conf.Problems
	var anyHost []RouteConfig
	var at []int // at[k] is anyHost[k]'s position in routes
	for i, rc := range routes {
		if rc.Host == "" {
			anyHost, at = append(anyHost, rc), append(at, i)
		}
	}
	if len(anyHost) == 0 {
		return nil
	}
	rt := newRouter(anyHost) // checked by routeProblems already
	for i, rc := range routes {
		if rc.Host == "" || rc.Room == "" {
			continue
		}
		// The room's own path, and any host-less route inside it, is where
		// a request with another Host lands.
		paths := []string{lowerASCII(rc.Path)}
		for _, q := range anyHost {
			if hasPathPrefix(lowerASCII(q.Path), lowerASCII(rc.Path)) {
				paths = append(paths, lowerASCII(q.Path))
			}
		}
		for _, path := range paths {
			m, ok := rt.Match("", path)
			if !ok || !sameUpstream(origins, m.Upstream, rc.Upstream) || m.Room == rc.Room {
				continue
			}
			site := fmt.Sprintf("upstream %q", rc.Upstream)
			if m.Upstream != rc.Upstream {
				site = fmt.Sprintf("the same site (%s) as upstream %q under the name %q", origins[m.Upstream], rc.Upstream, m.Upstream)
			}
			p.Add(fmt.Sprintf("routes[%d]", i),
				"room %q guards host %q only, but %s with any other Host header reaches %s through routes[%d] without it; "+
					"add a route without a host for %q with room %q, or send the other hosts to another upstream",
				rc.Room, rc.Host, path, site, at[m.Index], rc.Path, rc.Room)
			break
		}
	}
	return p.Err()
}

// sameUpstream reports whether two upstream names lead to one site.
func sameUpstream(origins map[string]string, a, b string) bool {
	if a == b {
		return true
	}
	oa, oka := origins[a]
	ob, okb := origins[b]
	return oka && okb && oa != "" && oa == ob
}
