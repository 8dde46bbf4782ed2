package pattern

import (
	"fmt"
	"slices"
	"strings"
)

// Path is a route's path split at its parameters: lits[0], a parameter
// names[0], lits[1], ... The last literal is matched as a prefix, the
// others exactly, all ASCII case-insensitively.
type Path struct {
	lits  []string // lower case
	names []string
}

// ParsePath splits a route's path, "/events/{id}/". Each parameter must be
// a whole segment with a valid name, named once; the error says which rule
// p breaks. Whether p is a clean path is the router's to check.
func ParsePath(p string) (Path, error) {
	var pt Path
	rest := p
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return Path{}, fmt.Errorf("has a \"}\" without its \"{\", got %q", p)
			}
			pt.lits = append(pt.lits, lower(rest))
			return pt, nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return Path{}, fmt.Errorf("has a \"{\" without its \"}\", got %q", p)
		}
		name, after := rest[i+1:i+j], rest[i+j+1:]
		switch {
		case i == 0 || rest[i-1] != '/' || (after != "" && after[0] != '/'):
			return Path{}, fmt.Errorf("a parameter must be a whole segment such as /{id}/, got %q", p)
		case !ValidName(name):
			return Path{}, fmt.Errorf("a parameter name is a lower-case letter then letters, digits or _, got {%s} in %q", name, p)
		case slices.Contains(pt.names, name):
			return Path{}, fmt.Errorf("names {%s} twice, got %q", name, p)
		}
		pt.lits = append(pt.lits, lower(rest[:i]))
		pt.names = append(pt.names, name)
		rest = after
	}
}

// Names lists the path's parameters in order.
func (pt Path) Names() []string { return pt.names }

// Literal reports a path without parameters, a plain prefix.
func (pt Path) Literal() bool { return len(pt.names) == 0 }

// Specificity orders routes: the longer the literal text, the earlier a
// route is tried, a parameter counting one byte, so "/events/vip/" is
// tried before "/events/{id}/", and that before "/events/".
func (pt Path) Specificity() int {
	n := len(pt.names)
	for _, l := range pt.lits {
		n += len(l)
	}
	return n
}

// Match matches the clean request path p. It returns the parameters'
// values, lower-cased, in the order of Names; refused is true, with no
// values, when the literals match but a segment is not a valid value
// (too long, another script, a dot as in "123.json", which
// suffix-matching frameworks serve as event 123).
func (pt Path) Match(p string) (values []string, ok, refused bool) {
	if pt.Literal() {
		return nil, hasPathPrefix(p, pt.lits[0]), false
	}
	rest := p
	for k := range pt.names {
		lit := pt.lits[k]
		if !hasPrefixFold(rest, lit) {
			return nil, false, false
		}
		rest = rest[len(lit):]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return nil, false, false // no segment there: /events/ itself
		}
		v := lower(rest[:end])
		refused = refused || !ValidValue(v)
		values = append(values, v)
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

// hasPathPrefix reports p inside prefix (lower case): starting with it, or,
// for a prefix ending in "/", p being the prefix without that slash.
func hasPathPrefix(p, prefix string) bool {
	if len(p) >= len(prefix) {
		return hasPrefixFold(p, prefix)
	}
	return len(p)+1 == len(prefix) && prefix[len(p)] == '/' && hasPrefixFold(p, prefix[:len(p)])
}
