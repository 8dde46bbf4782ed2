package pattern

import (
	"fmt"
	"strings"
)

// Template is a name split at its parameters, "event-{id}": lits[0], a
// parameter names[0], lits[1], ... A parameter may stand anywhere and
// repeat; a repeat is filled with the same value.
type Template struct {
	lits  []string
	names []string
	// first[k] is the index of names[k]'s first occurrence, k itself for
	// a first one.
	first []int
	// fresh[k] reports that no parameter at k or after occurs before k, so
	// whether the rest matches from a position does not depend on the
	// values taken so far, and a failure there can be remembered.
	fresh []bool
	// maxLen bounds a filled name's length.
	maxLen int
}

// ParseTemplate splits a room template's name (or a cookie name made from
// one). Literal text is taken as it is; the error says which brace is
// unbalanced or which name is malformed.
func ParseTemplate(s string) (Template, error) {
	var t Template
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return Template{}, fmt.Errorf("has a \"}\" without its \"{\", got %q", s)
			}
			t.lits = append(t.lits, rest)
			t.index()
			return t, nil
		}
		j := strings.IndexByte(rest[i:], '}')
		switch {
		case j < 0:
			return Template{}, fmt.Errorf("has a \"{\" without its \"}\", got %q", s)
		case strings.IndexByte(rest[:i], '}') >= 0:
			return Template{}, fmt.Errorf("has a \"}\" without its \"{\", got %q", s)
		case !ValidName(rest[i+1 : i+j]):
			return Template{}, fmt.Errorf("a parameter name is a lower-case letter then letters, digits or _, got %s in %q", rest[i:i+j+1], s)
		}
		t.lits = append(t.lits, rest[:i])
		t.names = append(t.names, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
}

// index fills first, fresh and maxLen once the template is split.
func (t *Template) index() {
	n := len(t.names)
	t.first, t.fresh = make([]int, n), make([]bool, n)
	for k, name := range t.names {
		t.first[k] = k
		for j := range k {
			if t.names[j] == name {
				t.first[k] = j
				break
			}
		}
	}
	minFirst := n // the smallest first occurrence among names[k:]
	for k := n - 1; k >= 0; k-- {
		minFirst = min(minFirst, t.first[k])
		t.fresh[k] = minFirst >= k
	}
	t.maxLen = n * MaxValueLen
	for _, l := range t.lits {
		t.maxLen += len(l)
	}
}

// Names lists the template's parameters in the order they first appear,
// each once.
func (t Template) Names() []string {
	var out []string
	for k, name := range t.names {
		if t.first[k] == k {
			out = append(out, name)
		}
	}
	return out
}

// Fill writes the template with each parameter replaced by the value of
// the first param of its name; one without a param is left as "{name}".
func (t Template) Fill(params []Param) string {
	if len(t.names) == 0 {
		return strings.Join(t.lits, "") // "" for the zero Template
	}
	var b strings.Builder
	for k, name := range t.names {
		b.WriteString(t.lits[k])
		if v, ok := lookup(params, name); ok {
			b.WriteString(v)
		} else {
			b.WriteString("{" + name + "}")
		}
	}
	b.WriteString(t.lits[len(t.names)])
	return b.String()
}

func lookup(params []Param, name string) (string, bool) {
	for _, p := range params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// FillText replaces each "{name}" in s that names one of params by its
// value and leaves all else, braces included: a page's title or message is
// free text, not a template.
func FillText(s string, params []Param) string {
	if len(params) == 0 || strings.IndexByte(s, '{') < 0 {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if j := strings.IndexByte(s[i:], '}'); j > 0 {
			if v, ok := lookup(params, s[i+1:i+j]); ok {
				b.WriteString(v)
				s = s[i+j+1:]
				continue
			}
		}
		b.WriteByte('{')
		s = s[i+1:]
	}
}
