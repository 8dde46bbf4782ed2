package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// problems collects "key: rule, got value" errors so that Validate can report
// all of them at once through errors.Join.
type problems []error

func (p *problems) add(key, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
}

// nest adds every problem of err under prefix ("routes[2]."), keeping each
// one a separate line of the joined error.
func (p *problems) nest(prefix string, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		*p = append(*p, fmt.Errorf("%s%w", prefix, e))
	}
}

func (p problems) err() error { return errors.Join(p...) }

// parseDuration reads a Go duration that carries a unit ("30s", "2m"). A bare
// number is refused with a hint, since YAML would otherwise make 30 mean 30ns.
// It mirrors waitroom.ParseDuration, which this package must not import.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New(`want a duration such as "30s" or "2m", got ""`)
	}
	if strings.Trim(s, "0123456789.") == "" {
		return 0, fmt.Errorf(`want a duration with a unit such as "%ss", got %q`, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`want a duration such as "30s" or "2m", got %q`, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
	}
	return d, nil
}

// positiveDuration parses a duration that must be greater than zero: every
// timeout here bounds a wait, and zero would mean "wait forever" to net/http.
func positiveDuration(p *problems, key, raw string) time.Duration {
	d, err := parseDuration(raw)
	switch {
	case err != nil:
		p.add(key, "%v", err)
	case d == 0:
		p.add(key, "must be greater than 0, got %q", raw)
	}
	return d
}

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

// isToken reports whether s is an RFC 9110 token, the grammar of header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
