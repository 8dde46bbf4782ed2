package proxy

import (
	"github.com/waitroom/waitroom/waitroom/conf"

	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// UpstreamConfig is one entry of the `upstreams:` map: where a site lives and
// how long to wait for it.
type UpstreamConfig struct {
	// URL is the site's origin, "http://127.0.0.1:3000" or "https://shop.internal".
	// Required. It carries no path: the upstream receives the request path.
	URL string `mapstructure:"url" yaml:"url" json:"url"`
	// Timeout is how long to wait for the response headers after the request
	// is sent. Default "30s"; a slower upstream answers 504.
	Timeout string `mapstructure:"timeout" yaml:"timeout" json:"timeout"`
	// DialTimeout bounds connecting to the upstream. Default "5s".
	DialTimeout string `mapstructure:"dial_timeout" yaml:"dial_timeout" json:"dial_timeout"`
	// IdleConnTimeout closes kept-alive connections unused for this long.
	// Default "90s"; keep it below the upstream's own keep-alive timeout.
	IdleConnTimeout string `mapstructure:"idle_conn_timeout" yaml:"idle_conn_timeout" json:"idle_conn_timeout"`
	// MaxIdleConnsPerHost is how many kept-alive connections wait for reuse.
	// Default 64; net/http's own default of 2 makes a burst of admitted
	// visitors open and close a connection each.
	MaxIdleConnsPerHost int `mapstructure:"max_idle_conns_per_host" yaml:"max_idle_conns_per_host" json:"max_idle_conns_per_host"`
	// MaxConnsPerHost caps the connections to the upstream, busy and idle,
	// upgraded ones (WebSockets) included; a request past it waits for one
	// to free up rather than piling more on a site in trouble. Default
	// 2048; 0 is no cap.
	MaxConnsPerHost int `mapstructure:"max_conns_per_host" yaml:"max_conns_per_host" json:"max_conns_per_host"`
}

// DefaultUpstream returns the defaults every upstream starts from; only
// URL is left to fill in.
func DefaultUpstream() UpstreamConfig {
	return UpstreamConfig{
		Timeout:             "30s",
		DialTimeout:         "5s",
		IdleConnTimeout:     "90s",
		MaxIdleConnsPerHost: 64,
		MaxConnsPerHost:     2048,
	}
}

// UpstreamSettings is an UpstreamConfig parsed and checked, ready for
// NewUpstream.
type UpstreamSettings struct {
	target                  *url.URL
	timeout, dial, idleConn time.Duration
	maxIdle, maxConns       int
}

// Build parses and checks the upstream; the error lists every problem,
// with keys relative to it.
func (c UpstreamConfig) Build() (UpstreamSettings, error) {
	var p conf.Problems
	s := UpstreamSettings{maxIdle: c.MaxIdleConnsPerHost, maxConns: c.MaxConnsPerHost}
	s.target = parseTarget(&p, c.URL)
	// Every timeout bounds a wait, and 0 would mean "wait forever" to net/http.
	s.timeout = p.Duration("timeout", c.Timeout, time.Nanosecond)
	s.dial = p.Duration("dial_timeout", c.DialTimeout, time.Nanosecond)
	s.idleConn = p.Duration("idle_conn_timeout", c.IdleConnTimeout, time.Nanosecond)
	if c.MaxIdleConnsPerHost < 1 {
		p.Add("max_idle_conns_per_host", "must be >= 1, got %d", c.MaxIdleConnsPerHost)
	}
	if c.MaxConnsPerHost < 0 {
		p.Add("max_conns_per_host", "must be >= 0 (0: no cap), got %d", c.MaxConnsPerHost)
	}
	return s, p.Err()
}

// Origin is the upstream's address normalised (scheme, host in lower case
// and canonical form, port spelled out), so two names for one site compare
// equal: the host guard (see hostBypasses) compares these, not names. Every
// spelling of this machine's loopback that reaches one listener is one
// host, "localhost" (see loopbackHost); other names are compared as
// written, since what DNS will say at run time is not known here.
func (s UpstreamSettings) Origin() string {
	if s.target == nil {
		return ""
	}
	return originOf(s.target)
}

func originOf(u *url.URL) string {
	host, port := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), u.Port()
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.Unmap().String()
	}
	if loopbackHost(host) {
		host = "localhost"
	}
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// loopbackHost reports a host (lower case, canonical) that dials this
// machine's loopback listener on a port: "localhost" and any name under
// ".localhost" (RFC 6761 section 6.3), 127.0.0.1 and ::1, which the
// resolver gives for localhost, and the unspecified 0.0.0.0 and ::, which
// Linux dials as loopback. Another 127/8 address is another host: a server
// may listen on 127.0.0.2 alone.
func loopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || a == netip.IPv6Loopback() || a.IsUnspecified()
}

// parseTarget refuses a path, query or fragment because ProxyRequest.SetURL
// would join them with the request's, and the upstream must receive exactly
// the path that was routed; it refuses credentials because SetURL drops them
// silently.
func parseTarget(p *conf.Problems, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		shown := raw
		if err == nil && u.User != nil {
			shown = u.Redacted() // a password must not land in a log or a chat
		}
		p.Add("url", "must be an absolute http or https URL, got %q", shown)
		return nil
	}
	switch {
	case u.User != nil:
		p.Add("url", "must not carry credentials, got %q", u.Redacted())
	case u.Path != "" && u.Path != "/":
		p.Add("url", "must not have a path (the upstream receives the request path), got %q", raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		p.Add("url", "must not have a query or fragment, got %q", raw)
	default:
		return &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	return nil
}

// newTransport clones http.DefaultTransport, keeping its proxy-from-env,
// HTTP/2 and TLS handshake settings, and sets this upstream's limits. The
// global is never edited: other code in the process shares it.
func newTransport(s UpstreamSettings) (*http.Transport, error) {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("cloning http.DefaultTransport: want *http.Transport, got %T", http.DefaultTransport)
	}
	t := base.Clone()
	d := &net.Dialer{Timeout: s.dial, KeepAlive: 30 * time.Second}
	t.DialContext = d.DialContext
	t.ResponseHeaderTimeout = s.timeout
	t.IdleConnTimeout = s.idleConn
	t.MaxIdleConnsPerHost = s.maxIdle
	// One transport per upstream means one host, so the process-wide cap of
	// 100 would only get in the way of a larger per-host setting.
	t.MaxIdleConns = s.maxIdle
	t.MaxConnsPerHost = s.maxConns
	return t, nil
}

// Transport is the transport an upstream built as s gets, for tools that
// must compare against the gateway on equal terms (the benchmarks put a
// bare httputil.ReverseProxy on it).
func (s UpstreamSettings) Transport() (*http.Transport, error) {
	return newTransport(s)
}
