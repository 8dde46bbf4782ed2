package proxy

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrBadPath is returned by CleanPath for a path no upstream should see; the
// caller answers 400.
var ErrBadPath = errors.New("bad request path")

// CleanPath returns the canonical form of a request path, the one that is
// both matched against routes and bypass rules and forwarded upstream. raw is
// r.URL.Path, which net/http has already percent-decoded, so "%2F" arrives as
// "/" and "%2e%2e" as "..": decoding first and cleaning second is what makes
// "/static%2F..%2Fevents/1" land on "/events/1" rather than slip past a room.
//
// Paths that do not start with "/" or that hold a backslash, NUL or any other
// control byte are refused with ErrBadPath: some upstreams read "\" as "/",
// and no well-behaved client sends either. So are paths that a servlet
// container or a second decoding would resolve differently (checkSegments):
// "/static/..;/events", "/;x/events", "/static/%2e%2e/events" as decoded
// from "%252e%252e". Otherwise the result is path.Clean's, keeping
// a trailing slash. An already clean path is returned as is, without
// allocating.
func CleanPath(raw string) (string, error) {
	if raw == "" || raw[0] != '/' {
		return "", fmt.Errorf("%w: must start with \"/\", got %q", ErrBadPath, raw)
	}
	special := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20 || c == 0x7f || c == '\\':
			return "", fmt.Errorf("%w: backslash or control byte at offset %d in %q", ErrBadPath, i, raw)
		case c == ';' || c == '%':
			special = true
		}
	}
	if special {
		if err := checkSegments(raw); err != nil {
			return "", err
		}
	}
	c := path.Clean(raw)
	if raw[len(raw)-1] != '/' || c == "/" {
		return c, nil
	}
	// path.Clean returns a substring of raw when nothing changed, so this
	// comparison keeps the clean case free of allocations.
	if len(c)+1 == len(raw) && raw[:len(c)] == c {
		return raw, nil
	}
	return c + "/", nil
}

// hasPathPrefix reports whether the clean path p lies under prefix, which
// must already be ASCII lower case. The match ignores ASCII case, and a
// prefix ending in "/" also covers the path that only lacks that slash, so
// nobody walks around a room by asking for "/events" instead of "/events/".
func hasPathPrefix(p, prefix string) bool {
	if len(p) >= len(prefix) {
		return equalFoldLower(p[:len(prefix)], prefix)
	}
	return len(p)+1 == len(prefix) && prefix[len(p)] == '/' && equalFoldLower(p, prefix[:len(p)])
}

// equalFoldLower reports whether s equals lower, ignoring ASCII case; lower
// must already be lower case. Unicode folding is deliberately not used: it
// would let "\u212a" (Kelvin sign) stand for "k" and byte offsets drift.
func equalFoldLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if toLower(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// lowerASCII lower-cases ASCII letters only, leaving other bytes alone.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = toLower(b[j])
			}
			return string(b)
		}
	}
	return s
}

// checkPrefix returns why p is not usable as a configured path prefix, or ""
// when it is. A prefix must be spelled the way CleanPath spells requests, or
// it could never match one.
func checkPrefix(p string) string {
	switch {
	case p == "" || p[0] != '/':
		return fmt.Sprintf("must start with \"/\", got %q", p)
	case strings.Contains(p, "%"):
		return fmt.Sprintf("must be written decoded, without %%-escapes, got %q", p)
	case strings.Contains(p, ";"):
		return fmt.Sprintf("must not contain \";\" (path parameters are left out when matching), got %q", p)
	}
	c, err := CleanPath(p)
	switch {
	case err != nil:
		return fmt.Sprintf("must not contain a backslash or control characters, got %q", p)
	case c != p:
		return fmt.Sprintf("must be a clean path (no \"//\", \".\" or \"..\" segments; clean: %q), got %q", c, p)
	}
	return ""
}

// underPath is hasPathPrefix on whole segments, for rules that open a way
// past a room: "/healthz" covers "/healthz" and "/healthz/x" but not
// "/healthzBUY" or "/healthz.php", as a plain prefix would.
func underPath(p, prefix string) bool {
	if !hasPathPrefix(p, prefix) {
		return false
	}
	return strings.HasSuffix(prefix, "/") || len(p) == len(prefix) || p[len(prefix)] == '/'
}
