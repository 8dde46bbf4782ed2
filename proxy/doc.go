// Package proxy routes visitor requests to upstream sites and forwards them
// there: the Router picks a route by host and longest path prefix, the Bypass
// lets static assets, allowed networks and holders of a secret header skip the
// waiting room, and an Upstream is one httputil.ReverseProxy per upstream site.
//
// One path for everything. CleanPath turns the request's decoded path into
// the one canonical spelling ("//", "/./", "/../", "%2F" and "%2e%2e" are
// resolved; backslashes and control bytes are refused). It also refuses what
// an upstream would resolve otherwise: a segment whose part before its first
// ";" is empty, "." or ".." ("/static/..;/events", "..%3B", "%2e%2e;"),
// since Tomcat, Jetty and Spring cut ";" path parameters before resolving
// dot segments; and a segment that, percent-decoded again (up to three
// times), becomes "." or ".." or gains a "/", "\", ";" or control byte
// ("%252e%252e", "..%253B", "%252F"). That cleaned path is exactly what the
// upstream receives, parameters and all. The Router and the Bypass match its
// MatchPath form, each segment without its ";" parameters, as a servlet
// container routes: "/events;jsessionid=1/checkout" is inside "/events/".
// For an upstream that reads parameters as part of the name, a route only
// guards more this way, and a bypass path lets through what a servlet would
// serve under it. So no spelling of a path can be matched as one thing and
// served as another.
// Prefixes match ASCII case-insensitively and a prefix ending in "/" also
// covers the same path without it: "/EVENTS/1" and "/events" are both inside
// "/events/".
//
// Who is asking. ClientAddr names the client: the connection's peer, or,
// only when the peer is one of the trusted proxies, the rightmost address
// of X-Forwarded-For (else of Forwarded's for= values) that is not itself a
// trusted proxy; a malformed or obfuscated entry ends the walk at the last
// trusted address, and at most 32 entries are read. The front door computes
// it once and keeps it in the request's scope (waitroom.Scope, which this
// package does not know); Bypass.Match is given it. Network groups clients into the
// /24 or /56 that per-network limits count. Behind an L4 balancer,
// ProxyProtocolListener reads the PROXY header (v1 or v2) from trusted
// peers only, where it is required, so the connection's address is already
// the client's, and no forwarding header is then believed.
//
// What the upstream sees. The request goes out with the upstream's Host and
// with X-Forwarded-For, -Host and -Proto set by the proxy. Inbound forwarding
// headers (Forwarded, X-Forwarded-*, X-Real-IP, True-Client-IP, ...) are
// kept only from configured trusted proxies and only in their canonical
// spelling; "X_Forwarded_For" and the like, which CGI servers read as the
// real ones, never pass, nor do X-Original-URL and X-Rewrite-URL. The
// waiting room's own cookies and the Waitroom-Token header are removed; every
// other cookie goes through byte for byte. Waitroom-Visitor and
// Waitroom-Room, set by the caller on admitted requests, go through as they
// are.
//
// What the visitor sees. An unreachable upstream is a 502, a slow one a 504,
// both rendered by the injected error page; a client that went away is logged
// as 499. A "Waitroom-Command" response header (or trailer) is handed to a
// callback ("release" ends the visitor's session, "close" and "open" close
// and reopen the room) and never reaches the browser. WebSocket upgrades pass
// through and end when their request's context does; "Upgrade: h2c" is
// refused with 400.
//
// The package imports neither waitroom nor web: the error page, the cookie
// names and the session callbacks are injected through Options, so the header
// names below repeat the ones package waitroom defines.
package proxy
