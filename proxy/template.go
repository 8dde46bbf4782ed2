package proxy

import (
	"fmt"
	"strings"
)

// A route's path may hold parameters, whole segments written "{name}":
// "/events/{id}/" matches "/events/123/seats" with id "123". Its room may
// then be a template that names them, "event-{id}", filled per request:
// each event gets its own room.
//
// A value is one segment of 1 to MaxParamLen bytes of [A-Za-z0-9_-], taken
// in lower case, since routes match ASCII case-insensitively: a site that
// serves /events/ABC/ and /events/abc/ alike must not get two rooms, each
// with its own max_active, for one event. A path whose literal parts match
// but whose value does not (too long, another script, a dot as in
// "123.json", which suffix-matching frameworks serve as event 123) is
// refused (Route.Refused) rather than left to fall through to a route
// without the room.

// MaxParamLen bounds a path parameter's value.
const MaxParamLen = 64

// pattern is a route path split at its parameters: lits[0], a parameter
// names[0], lits[1], ... The last literal is matched as a prefix, the
// others exactly.
type pattern struct {
	lits  []string // lower case
	names []string
}

// parsePattern splits p; ok is false, with why, for a malformed parameter.
func parsePattern(p string) (pattern, string) {
	var pt pattern
	rest := p
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return pattern{}, fmt.Sprintf("has a \"}\" without its \"{\", got %q", p)
			}
			pt.lits = append(pt.lits, lowerASCII(rest))
			return pt, ""
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return pattern{}, fmt.Sprintf("has a \"{\" without its \"}\", got %q", p)
		}
		name := rest[i+1 : i+j]
		after := rest[i+j+1:]
		switch {
		case i == 0 || rest[i-1] != '/' || (after != "" && after[0] != '/'):
			return pattern{}, fmt.Sprintf("a parameter must be a whole segment such as /{id}/, got %q", p)
		case !isParamName(name):
			return pattern{}, fmt.Sprintf("a parameter name is a lower-case letter then letters, digits or _, got {%s} in %q", name, p)
		case contains(pt.names, name):
			return pattern{}, fmt.Sprintf("names {%s} twice, got %q", name, p)
		}
		pt.lits = append(pt.lits, lowerASCII(rest[:i]))
		pt.names = append(pt.names, name)
		rest = after
	}
}

func isParamName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// literal is the pattern as a plain prefix (no parameters), for the routes
// without any.
func (pt pattern) literal() bool { return len(pt.names) == 0 }

// specificity orders routes: the longer the literal text, the earlier it
// is tried, a parameter counting one byte, so "/events/vip/" is tried
// before "/events/{id}/", and that before "/events/".
func (pt pattern) specificity() int {
	n := len(pt.names)
	for _, l := range pt.lits {
		n += len(l)
	}
	return n
}

// match matches the clean path p (in MatchPath form). It returns the
// parameters' values, lower-cased, in the order of names; refused is true
// when the literals match but a value is not a valid parameter.
func (pt pattern) match(p string) (values []string, ok, refused bool) {
	if pt.literal() {
		return nil, hasPathPrefix(p, pt.lits[0]), false
	}
	rest := p
	for k := range pt.names {
		lit := pt.lits[k]
		if len(rest) < len(lit) || !equalFoldLower(rest[:len(lit)], lit) {
			return nil, false, false
		}
		rest = rest[len(lit):]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		v := rest[:end]
		if v == "" {
			return nil, false, false // no segment there: /events/ itself
		}
		if !validParam(v) {
			refused = true
		}
		values = append(values, lowerASCII(v))
		rest = rest[end:]
	}
	if !hasPathPrefix(rest, pt.lits[len(pt.lits)-1]) {
		return nil, false, false
	}
	if refused {
		return nil, true, true
	}
	return values, true, false
}

// validParam reports a value a room name may carry.
func validParam(v string) bool {
	if len(v) == 0 || len(v) > MaxParamLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// IsTemplate reports a room name that holds a parameter, "event-{id}".
func IsTemplate(room string) bool { return strings.ContainsRune(room, '{') }

// TemplateParams lists the parameters a room template names, in order;
// ok is false when a brace is unbalanced or a name malformed.
func TemplateParams(room string) ([]string, bool) {
	var names []string
	rest := room
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return names, strings.IndexByte(rest, '}') < 0
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 || strings.IndexByte(rest[:i], '}') >= 0 {
			return nil, false
		}
		name := rest[i+1 : i+j]
		if !isParamName(name) {
			return nil, false
		}
		names = append(names, name)
		rest = rest[i+j+1:]
	}
}

// Fill replaces each {name} of template with its value; names and values
// pair up by position.
func Fill(template string, names, values []string) string {
	if !IsTemplate(template) {
		return template
	}
	var b strings.Builder
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		name := rest[i+1 : i+j]
		for k, n := range names {
			if n == name && k < len(values) {
				b.WriteString(values[k])
			}
		}
		rest = rest[i+j+1:]
	}
}
