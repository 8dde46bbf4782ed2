package proxy

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// ConnLimit caps the connections one client network holds open on this
// listener (server.max_conns_per_client): a client that opens thousands of
// idle sockets takes file descriptors and goroutines from everyone. It is
// a per-instance bound on this instance's own sockets, which no other
// instance shares. Peers in Trusted (a load balancer speaking HTTP) carry
// many clients on their connections and are never capped; behind a PROXY
// protocol balancer the cap applies to the client the header names.
type ConnLimit struct {
	// Max is the most connections a network may hold; <= 0 turns the cap off.
	Max int
	// V4Bits and V6Bits size a client network (see Network).
	V4Bits, V6Bits int
	// Trusted are the proxies whose connections are not capped.
	Trusted []netip.Prefix
	// OnRefuse, if set, is told of each connection closed for the cap.
	OnRefuse func(network string)
}

// Listener wraps ln. Wrap it outside a PROXY protocol listener (so the
// client's address is the one the header names) and inside TLS. Accept
// never waits on the count: the address is read on the connection's first
// read, where a PROXY header is read anyway, and a connection over the cap
// is closed there.
func (c ConnLimit) Listener(ln net.Listener) net.Listener {
	if c.Max <= 0 {
		return ln
	}
	c.Trusted = slices.Clone(c.Trusted)
	return &limitListener{Listener: ln, c: c, open: map[string]int{}}
}

type limitListener struct {
	net.Listener
	c    ConnLimit
	mu   sync.Mutex
	open map[string]int // connections per network key
}

func (l *limitListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &limitConn{Conn: conn, l: l}, nil
}

// take counts a connection of network; false when it is over the cap.
func (l *limitListener) take(network string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[network] >= l.c.Max {
		return false
	}
	l.open[network]++
	return true
}

func (l *limitListener) give(network string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[network] <= 1 {
		delete(l.open, network)
		return
	}
	l.open[network]--
}

// errOverConnLimit ends a connection over the cap at its first read.
var errOverConnLimit = errors.New("client network over server.max_conns_per_client")

type limitConn struct {
	net.Conn
	l       *limitListener
	once    sync.Once
	refused bool
	network string // "" when not counted
	close   sync.Once
}

func (c *limitConn) Read(p []byte) (int, error) {
	c.once.Do(c.admit)
	if c.refused {
		return 0, errOverConnLimit
	}
	return c.Conn.Read(p)
}

// admit counts the connection under its client's network, or refuses it.
func (c *limitConn) admit() {
	a, ok := netAddr(c.Conn.RemoteAddr())
	if !ok || containsAddr(c.l.c.Trusted, a) {
		return
	}
	key := NetworkKey(Network(a, c.l.c.V4Bits, c.l.c.V6Bits))
	if !c.l.take(key) {
		c.refused = true
		if c.l.c.OnRefuse != nil {
			c.l.c.OnRefuse(key)
		}
		_ = c.Conn.Close()
		return
	}
	c.network = key
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.close.Do(func() {
		c.once.Do(func() {}) // a connection closed before any read was never counted
		if c.network != "" {
			c.l.give(c.network)
		}
	})
	return err
}
