package proxy

import (
	"fmt"
	"strings"
)

// maxDecodeRounds is how many more times CleanPath percent-decodes a
// segment looking for a dot segment or a separator in disguise: an upstream
// behind a decoding filter may decode twice, and three rounds cover every
// stack seen in the wild ("%25252e" is "." after three).
const maxDecodeRounds = 3

// checkSegments refuses a decoded request path (raw, from CleanPath) that a
// servlet container or a decoding upstream would resolve to another page
// than Go does. Tomcat, Jetty and Spring MVC cut each segment's ";"
// parameters before resolving dot segments, so "/static/..;/events" is
// "/events" to them and "/static/events" never: a segment whose part before
// the first ";" is empty, "." or ".." is refused. A segment that, decoded
// once more (up to maxDecodeRounds times), turns into "." or "..", or holds
// a "/", "\", ";" or control byte it did not hold before, is refused too:
// an upstream that decodes again would read another path.
func checkSegments(raw string) error {
	for seg := range strings.SplitSeq(raw[1:], "/") {
		if !strings.ContainsAny(seg, ";%") {
			continue
		}
		if head, _, params := strings.Cut(seg, ";"); params && (head == "" || head == "." || head == "..") {
			return fmt.Errorf("%w: path parameters on an empty or dot segment %q in %q", ErrBadPath, seg, raw)
		}
		s := seg
		for range maxDecodeRounds {
			d, changed := unescapeOnce(s)
			if !changed {
				break
			}
			if d == "." || d == ".." || strings.ContainsAny(d, "/\\;") || hasControl(d) {
				return fmt.Errorf("%w: segment %q decodes to %q in %q", ErrBadPath, seg, d, raw)
			}
			s = d
		}
	}
	return nil
}

// unescapeOnce decodes every valid %XX in s once, leaving a "%" that
// starts no valid escape as it is; changed is false, and s returned
// without allocating, when there was none.
func unescapeOnce(s string) (string, bool) {
	i := 0
	for ; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			break
		}
	}
	if i+2 >= len(s) {
		return s, false
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// MatchPath is the form of a clean path (from CleanPath) that routes and
// bypass rules are matched against: every segment without its ";"
// parameters, which is how servlet containers read the path before they
// route it, so "/events;x/checkout" is inside "/events/" as it is to
// Spring. For an upstream that does not read parameters this is only more
// careful. The path is returned as is, without allocating, when it holds
// no ";". CleanPath has refused every path in which cutting parameters
// would leave an empty or dot segment, so the result is clean too.
func MatchPath(clean string) string {
	if strings.IndexByte(clean, ';') < 0 {
		return clean
	}
	b := make([]byte, 0, len(clean))
	for i := 0; i < len(clean); i++ {
		if clean[i] != ';' {
			b = append(b, clean[i])
			continue
		}
		j := strings.IndexByte(clean[i:], '/')
		if j < 0 {
			break
		}
		i += j - 1
	}
	return string(b)
}
