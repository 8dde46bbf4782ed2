package waitroom

import (
	"net/http"
	"net/netip"
)

// One admitted ticket serves one person. A session counts its clients, not
// only their networks: a copy of the ticket used from another seat of a
// PC-bang or a campus network (another address in the same /24) is
// another client, refused past Limits.SessionClients while those on it
// keep using it. A client is an address, not a per-browser id: whatever
// a browser keeps (a cookie, local storage) a copier copies with the
// ticket, while an address it cannot choose. A client that falls quiet
// for Limits.ClientQuiet stops counting, which is what a phone does when
// its carrier moves it to another address; so does a resold ticket whose
// seller stops using it, which no gateway can tell from the phone. What
// is left: clients behind one NAT address are one client.

// clientIPv6Bits is how much of an IPv6 address names one client: a /64
// is one link, inside which a device takes a new privacy address (RFC
// 8981) as often as every few hours.
const clientIPv6Bits = 64

// client is the short key of the request's client (Visitor.Client): its
// address, or its IPv6 /64; "" when the address is unknown.
func (g *Gate) client(r *http.Request) string {
	var a netip.Addr
	if sc := ScopeOf(r.Context()); sc != nil && sc.Client.IsValid() {
		a = sc.Client // as the front door believed it
	} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		a = ap.Addr()
	}
	return clientKey(a)
}

// clientKey is the key of the client at address a.
func clientKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return ""
	}
	bits := 32
	if a.Is6() {
		bits = clientIPv6Bits
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return ""
	}
	return networkKey(p)
}
