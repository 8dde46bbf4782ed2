package waitroom

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Default sizes of a client network, the unit of every per-client limit:
// a /24 and a /56 hold one household, office or PC-bang, while a single
// address would let anyone with a block of them walk around the limits.
const (
	DefaultNetworkIPv4 = 24
	DefaultNetworkIPv6 = 56
)

// Networks sizes the client networks per-client limits apply to, in prefix
// bits; zero fields take the defaults. Inside a Shared range (a carrier's
// NAT, a campus) one /24 holds thousands of unrelated people, so there the
// network is the single address (IPv4) or its /64 (IPv6, one subscriber's
// link): each gets its own join_limit, while the block's ceiling (the /16
// or /48 around it, BlockFactor times join_limit) still caps the range.
type Networks struct {
	IPv4, IPv6 int
	Shared     []netip.Prefix
}

// Units inside a Shared range.
const (
	SharedNetworkIPv4 = 32
	SharedNetworkIPv6 = 64
)

// bits is the size of the network around a.
func (n Networks) bits(a netip.Addr) int {
	bits, shared := n.IPv6, SharedNetworkIPv6
	if a.Is4() {
		bits, shared = n.IPv4, SharedNetworkIPv4
	}
	if bits >= shared {
		return bits
	}
	for _, p := range n.Shared {
		if p.Contains(a) {
			return shared
		}
	}
	return bits
}

// A client network's block is the wider network around it, its /16 or its
// /48 (Visitor.Block): a farm that spreads over many /24s or /56s of one
// block meets the block's join ceiling, BlockFactor times the network's.
const (
	BlockIPv4   = 16
	BlockIPv6   = 48
	BlockFactor = 16
)

// ChallengeJoinFactor is how far a room with a challenge lets a network
// run ahead of its join_limit pace: this many times join_limit at once
// instead of once, the work pricing each place past challenge_free, and
// never further. The work prices the places under the ceiling; it does
// not lift it, since a GPU pays any price.
const ChallengeJoinFactor = 2

// PendingPerNetwork is how many of a network's tickets handed out and not
// yet brought back the places behind them count: that many at once, then
// that many per placement window (a GCRA). A ticket past it is loose: it
// carries no number, nobody counts it, and brought back it takes a place
// at the back. So a flood of first requests that never come back moves
// nobody's position by more than twice this per network, and spends no
// place: the quota counts places taken (Limits.JoinLimit). It is part of
// the per-network guard: with an unlimited JoinLimit every ticket counts.
const PendingPerNetwork = 5

// PendingPerClient bounds a client's (Visitor.Client: an address, an IPv6
// /64) share of its network's PendingPerNetwork challenges the same way,
// so one address of a NAT asking for challenges as fast as it can (which
// costs no work) leaves its neighbours numbered challenges. Tickets of a
// plain room are not bounded per client: a loose one is placed a page
// refresh later, and a PC-bang behind one address keeps its 5. A network that is one client (inside
// server.shared_networks) meets only its own allowance. The block around
// a network has BlockFactor times PendingPerNetwork, so a flood spread
// over a block's networks inflates positions by no more than that.
const PendingPerClient = 2

// blockOf is the block around network; invalid when network is unknown
// or already as wide as a block.
func blockOf(network netip.Prefix) netip.Prefix {
	bits := BlockIPv6
	if network.Addr().Is4() {
		bits = BlockIPv4
	}
	if !network.IsValid() || network.Bits() <= bits {
		return netip.Prefix{}
	}
	b, err := network.Addr().Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return b
}

// network is the request's client network; invalid when the address is
// unknown (a Unix socket, say).
func (g *Gate) network(r *http.Request) netip.Prefix {
	return g.networkAt(r, true)
}

// unsharedNetwork is the request's client network as if no range were
// shared (its /24 or /56): the unit of the limits that shared_networks
// must not widen (preflight_limit, create_limit), whose only ceiling is
// the network's own, and the network a challenge is bound to, since a
// carrier's NAT may give each connection of one phone another address.
func (g *Gate) unsharedNetwork(r *http.Request) netip.Prefix {
	return g.networkAt(r, false)
}

// networkAt is the request's client network, the Shared ranges' unit
// inside them when shared.
func (g *Gate) networkAt(r *http.Request, shared bool) netip.Prefix {
	var a netip.Addr
	if sc := ScopeOf(r.Context()); sc != nil && sc.Client.IsValid() {
		a = sc.Client // as the front door believed it
	} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		a = ap.Addr()
	}
	a = a.Unmap()
	if !a.IsValid() {
		return netip.Prefix{}
	}
	n := g.networks
	if !shared {
		n.Shared = nil
	}
	p, err := a.WithZone("").Prefix(n.bits(a.WithZone("")))
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

// networkKey is a network's short key in the store: 8 characters of its
// SHA-256, so a store key stays short whatever the address family, and two
// networks sharing a key would only share a quota.
func networkKey(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	sum := sha256.Sum256([]byte(p.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// limitLog remembers which networks crossed their quota lately, so a
// flood from one network writes one log line a minute, not one per
// request. It is bounded: past maxLimitLog networks it starts over.
type limitLog struct {
	mu   sync.Mutex
	last map[netip.Prefix]time.Time
}

const maxLimitLog = 10000

// limited logs that network crossed the room's join_limit, at most once a
// minute per network.
func (g *Gate) limited(room string, network netip.Prefix) {
	now := time.Now()
	g.limits.mu.Lock()
	if g.limits.last == nil || len(g.limits.last) >= maxLimitLog {
		g.limits.last = make(map[netip.Prefix]time.Time)
	}
	seen, logged := g.limits.last[network]
	quiet := logged && now.Sub(seen) < time.Minute
	if !quiet {
		g.limits.last[network] = now
	}
	g.limits.mu.Unlock()
	if !quiet {
		g.log.Warn("client network over its join_limit; refusing its new tickets (logged once a minute per network)",
			zap.String(fieldRoom, room), zap.String(fieldNetwork, network.String()))
	}
}

// noteRestore counts what a decision put back after a data loss, and logs
// the first restore of the store's incarnation, which starts the grace.
func (g *Gate) noteRestore(room string, v Visitor, d Decision) {
	switch d.Restored {
	case RestoreWaiting:
		g.rooms.obs.Restored(g.rooms.labelOf(room), "waiting")
	case RestoreInside:
		g.rooms.obs.Restored(g.rooms.labelOf(room), "inside")
	default:
		return
	}
	if d.GraceStarted {
		g.log.Warn("the store lost its data; returning ticket holders are put back first (recovery grace)",
			zap.String(fieldRoom, room), zap.String(fieldVisitor, v.ID), zap.Int64(fieldTicket, v.Ticket))
	}
}
