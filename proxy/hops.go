package proxy

import (
	"net/netip"
	"net/textproto"
	"strings"
)

// hopList keeps the last maxHops entries of a forwarding list, as
// substrings of the header lines: reading a list costs one pass over its
// bytes and no allocation, however long it is. An entry is "" when it could
// not be read, which parseNode refuses like any other bad entry.
type hopList struct {
	hops [maxHops]string
	n    int // entries added in all; the last maxHops of them are kept
}

func (l *hopList) add(s string) {
	l.hops[l.n%maxHops] = s
	l.n++
}

// len is the number of entries kept.
func (l *hopList) len() int { return min(l.n, maxHops) }

// fromRight is the i-th kept entry counting from the right, 0 the last.
func (l *hopList) fromRight(i int) string { return l.hops[(l.n-1-i)%maxHops] }

// addXFF adds the entries of one X-Forwarded-For line. Empty entries are
// skipped, as RFC 9110 has recipients of a list do.
func (l *hopList) addXFF(line string) {
	for line != "" {
		var item string
		item, line, _ = strings.Cut(line, ",")
		if item = textproto.TrimString(item); item != "" {
			l.add(item)
		}
	}
}

// addForwarded adds, for each element of one Forwarded line, the value of
// its for= parameter, unquoted; "" for an element without exactly one for=,
// with a bad quoted string, or when a quote is left open (which makes the
// rest of the line one bad element).
func (l *hopList) addForwarded(line string) {
	for line != "" {
		elem, rest, ok := cutOutsideQuotes(line, ',')
		line = rest
		if !ok {
			l.add("")
			return
		}
		if elem = textproto.TrimString(elem); elem != "" {
			l.add(forValue(elem))
		}
	}
}

// forValue is the for= value of one Forwarded element ("for=x;proto=https"),
// or "" when there is not exactly one or the element does not parse.
// Parameter names match without case (RFC 7239, section 4).
func forValue(elem string) string {
	var node string
	seen := false
	for elem != "" {
		pair, rest, ok := cutOutsideQuotes(elem, ';')
		elem = rest
		if !ok {
			return ""
		}
		if pair = textproto.TrimString(pair); pair == "" {
			continue
		}
		name, value, found := strings.Cut(pair, "=")
		switch {
		case !found:
			return ""
		case !equalFoldLower(name, "for"):
			continue
		case seen:
			return ""
		}
		seen, node = true, value
	}
	return unquote(node)
}

// cutOutsideQuotes is strings.Cut on the first sep outside a quoted string,
// where a backslash escapes the next byte. ok is false when a quote is left
// open; before is then all of s.
func cutOutsideQuotes(s string, sep byte) (before, after string, ok bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", !quoted
}

// unquote returns a token as is and a quoted string without its quotes;
// quoted-pairs are refused (""), since no address needs one.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if strings.ContainsAny(v, "\"\\") {
		return ""
	}
	return v
}

// parseNode reads one forwarding entry: an IP address, an IPv4 address with
// a port ("192.0.2.1:8080") or a bracketed IPv6 address with or without one
// ("[2001:db8::1]:443"). A Forwarded port may be obfuscated ("_p1"). Zones,
// an unbracketed IPv6 address with a port, names and obfuscated nodes
// ("unknown", "_hidden") are refused. IPv4-mapped addresses come back as
// IPv4.
func parseNode(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	host, port := s, ""
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}, false
		}
		host, port = s[1:end], s[end+1:]
	} else if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), a.Zone() == ""
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i:]
	}
	a, err := netip.ParseAddr(host)
	switch {
	case err != nil || a.Zone() != "":
		return netip.Addr{}, false
	case s[0] == '[' && !a.Is6(), s[0] != '[' && !a.Is4():
		// "[192.0.2.1]" is no IPv6 literal, and "2001:db8::1:80" would
		// be read as either an address or an address and a port.
		return netip.Addr{}, false
	case port != "" && !validPort(port):
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// validPort reports whether p is ":" and a port: up to five digits, or an
// RFC 7239 obfuscated port ("_" and letters, digits, ".", "_" or "-").
func validPort(p string) bool {
	if len(p) < 2 || p[0] != ':' {
		return false
	}
	p = p[1:]
	if p[0] == '_' {
		return len(p) > 1 && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
	}
	return len(p) <= 5 && strings.Trim(p, "0123456789") == ""
}
