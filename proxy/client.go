package proxy

import (
	"net/http"
	"net/netip"
)

// DefaultNetworkV4Bits and DefaultNetworkV6Bits size the network that
// per-network limits count a client in: one IPv4 customer or NAT rarely
// holds more than a /24, and ISPs delegate a /56 to one IPv6 subscriber
// (RIPE-690), so a single household cannot spread over 2^72 addresses.
const (
	DefaultNetworkV4Bits = 24
	DefaultNetworkV6Bits = 56
)

// maxHops bounds how many entries of a forwarding list ClientAddr reads
// from the right: no real chain of proxies is longer, and a client must not
// be able to make every request walk a header of thousands of entries.
const maxHops = 32

// ClientAddr returns the address of the client that sent a request, as far
// as it can be known without believing a client: the peer's address
// (remoteAddr, r.RemoteAddr) unless the peer is in trusted, in which case
// the forwarding header is walked from the right past every trusted proxy.
//
// The header read is X-Forwarded-For when the request has one, otherwise
// Forwarded (RFC 7239, its for= values). X-Forwarded-For wins because it is
// what load balancers set (AWS, Google, Cloudflare, nginx, HAProxy) while
// most of them pass a client's Forwarded header through untouched: with the
// other rule, any client behind such a proxy could pick its address. A proxy
// that sets only Forwarded must therefore remove X-Forwarded-For.
//
// Several header lines are one list. The walk starts at the peer and moves
// one entry left while the address it holds is trusted; the first untrusted
// address is the client. An entry that is not an address (a Forwarded
// "unknown" or "_hidden", a malformed value) ends the walk at the last
// address found, which is then a trusted proxy. At most maxHops entries are
// read. IPv4-mapped IPv6 addresses are read as IPv4; zones are refused.
//
// The result is invalid when remoteAddr is not an IP address (a Unix
// socket). trusted should come from ParsePrefix. ClientAddr does not
// allocate.
func ClientAddr(remoteAddr string, h http.Header, trusted []netip.Prefix) netip.Addr {
	peer, ok := clientAddr(remoteAddr)
	if !ok || !containsAddr(trusted, peer) {
		return peer
	}
	var l hopList
	if v := h["X-Forwarded-For"]; len(v) > 0 {
		for _, line := range v {
			l.addXFF(line)
		}
	} else {
		for _, line := range h["Forwarded"] {
			l.addForwarded(line)
		}
	}
	addr := peer
	for i := range l.len() {
		if !containsAddr(trusted, addr) {
			break
		}
		a, ok := parseNode(l.fromRight(i))
		if !ok {
			break
		}
		addr = a
	}
	return addr
}

// Network is the network addr is counted in for per-network limits: its
// first v4Bits bits for IPv4 (IPv4-mapped IPv6 included), v6Bits for IPv6;
// bit counts out of range are clamped. The zero Prefix for an invalid addr.
func Network(addr netip.Addr, v4Bits, v6Bits int) netip.Prefix {
	if !addr.IsValid() {
		return netip.Prefix{}
	}
	addr = addr.Unmap().WithZone("")
	bits := v6Bits
	if addr.Is4() {
		bits = v4Bits
	}
	p, _ := addr.Prefix(min(max(bits, 0), addr.BitLen())) // bits in range: no error
	return p
}

// NetworkKey is the stable text of a network for store keys and logs:
// the masked CIDR in canonical form (RFC 5952 for IPv6), such as
// "203.0.113.0/24" or "2001:db8:0:1200::/56", at most 43 bytes. Every
// spelling of an address maps to one key. "" for the zero Prefix.
func NetworkKey(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.Masked().String()
}

// containsAddr reports whether a is in one of ps.
func containsAddr(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
