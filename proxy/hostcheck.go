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
func hostBypasses(routes []RouteConfig) error {
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
			if !ok || m.Upstream != rc.Upstream || m.Room == rc.Room {
				continue
			}
			p.Add(fmt.Sprintf("routes[%d]", i),
				"room %q guards host %q only, but %s with any other Host header reaches upstream %q through routes[%d] without it; "+
					"add a route without a host for %q with room %q, or send the other hosts to another upstream",
				rc.Room, rc.Host, path, rc.Upstream, at[m.Index], rc.Path, rc.Room)
			break
		}
	}
	return p.Err()
}
