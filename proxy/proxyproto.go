package proxy

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// DefaultProxyHeaderTimeout bounds the wait for a PROXY header when the
// caller gives no timeout.
const DefaultProxyHeaderTimeout = 10 * time.Second

// errProxyHeader is why a PROXY header from a trusted peer is refused.
var errProxyHeader = errors.New("proxy protocol: want a TCP over IPv4 or IPv6 source, or LOCAL")

// ProxyProtocolListener wraps ln so that connections from the load balancers
// in trusted speak the PROXY protocol (v1 or v2, as HAProxy, AWS NLB and
// most L4 balancers send it): the connection's RemoteAddr becomes the client
// address in the header, so r.RemoteAddr, ClientAddr, the Bypass and the
// logs all see the client.
//
// From a trusted peer the header is required: a connection without one is
// closed before a request is read. Were it optional, a balancer that stopped
// sending it would go unnoticed, and its clients' forged X-Forwarded-For
// would count, since the peer they come through is trusted. A v2 LOCAL
// header (a balancer's own health check) and a v1 "PROXY UNKNOWN", which
// the specification reads alike, keep the peer's address. A v2 PROXY header
// whose source is no TCP address over IPv4 or IPv6 (UNSPEC, UNIX, UDP) is
// refused.
//
// The caller then believes no forwarding header: it calls ClientAddr and
// NewUpstream with no trusted proxies. The PROXY header already names the
// client; after a LOCAL or UNKNOWN header the balancer's own address is
// all that is known, and an X-Forwarded-For there was written by the
// client, since an L4 balancer writes none.
//
// From anyone else the connection is handed over as it came, unread: a
// PROXY header is then just bytes before a request line, which net/http
// answers with 400 and a closed connection. Strangers never reach the
// header parser, and direct visitors pay nothing.
//
// readTimeout bounds the wait for the header of a trusted peer's connection
// (DefaultProxyHeaderTimeout when not positive): a peer that connects and
// sends nothing holds a goroutine no longer. The http.Server's own
// timeouts apply after it. Wrap the TCP listener before any TLS listener.
func ProxyProtocolListener(ln net.Listener, trusted []netip.Prefix, readTimeout time.Duration) net.Listener {
	if readTimeout <= 0 {
		readTimeout = DefaultProxyHeaderTimeout
	}
	trusted = slices.Clone(trusted)
	return &proxyproto.Listener{
		Listener: ln,
		ConnPolicy: func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
			if a, ok := netAddr(o.Upstream); ok && containsAddr(trusted, a) {
				return proxyproto.REQUIRE, nil
			}
			return proxyproto.SKIP, nil
		},
		ValidateHeader:    checkProxyHeader,
		ReadHeaderTimeout: readTimeout,
	}
}

// checkProxyHeader accepts a LOCAL header (the library reads v1 UNKNOWN
// as one), or a PROXY header whose source is a TCP address over IPv4 or
// IPv6.
func checkProxyHeader(h *proxyproto.Header) error {
	if h.Command.IsLocal() {
		return nil
	}
	if !h.TransportProtocol.IsStream() || !(h.TransportProtocol.IsIPv4() || h.TransportProtocol.IsIPv6()) {
		return errProxyHeader
	}
	if a, ok := h.SourceAddr.(*net.TCPAddr); !ok || a.IP == nil {
		return errProxyHeader
	}
	return nil
}

// netAddr is the IP of a connection's address, unmapped and without zone.
func netAddr(a net.Addr) (netip.Addr, bool) {
	if t, ok := a.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(t.IP)
		return ip.Unmap(), ok
	}
	if a == nil {
		return netip.Addr{}, false
	}
	return clientAddr(a.String())
}
