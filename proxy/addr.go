package proxy

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParsePrefix reads a CIDR ("10.0.0.0/8", "2001:db8::/32") or a single
// address ("192.0.2.1"), which stands for itself alone (/32 or /128). The
// result is masked, and IPv4-mapped IPv6 addresses and networks
// ("::ffff:10.0.0.0/104") are read as IPv4 so that they match the client
// addresses compared against them, which are unmapped too.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("want a CIDR such as \"10.0.0.0/8\" or an IP address, got %q", s)
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("want a CIDR such as \"10.0.0.0/8\" or an IP address, got %q", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// clientAddr is the address of the peer that sent r, without port or zone;
// ok is false when RemoteAddr is not an IP (a Unix socket, say).
func clientAddr(remoteAddr string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(remoteAddr); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// inPrefixes reports whether the peer that sent the request is in one of ps.
func inPrefixes(ps []netip.Prefix, remoteAddr string) bool {
	if len(ps) == 0 {
		return false
	}
	a, ok := clientAddr(remoteAddr)
	return ok && containsAddr(ps, a)
}

// FromPeer reports whether the peer that sent a request (its RemoteAddr)
// is in one of ps; never for an empty ps or a RemoteAddr that is no IP.
func FromPeer(ps []netip.Prefix, remoteAddr string) bool { return inPrefixes(ps, remoteAddr) }
