package pattern

import "strings"

// Match reads s as the template filled: each parameter one ValidValue, the
// literals exactly. It returns the values by name, in the order of Names;
// ok is false when no values fill the template as s. Where several would
// (two parameters side by side), each value is the shortest that lets the
// rest match, as Fill of the result gives s again either way.
func (t Template) Match(s string) ([]Param, bool) {
	vals, ok := t.match(s)
	if !ok {
		return nil, false
	}
	var params []Param
	for k, name := range t.names {
		if t.first[k] == k {
			params = append(params, Param{Name: name, Value: vals[k]})
		}
	}
	return params, true
}

// Matches reports whether some values fill the template as s.
func (t Template) Matches(s string) bool {
	_, ok := t.match(s)
	return ok
}

// maxSteps bounds the values one match tries. It is reached only by a
// template that repeats a parameter around several others, whose
// failures cannot be remembered, and then only on a name made to.
const maxSteps = 1 << 20

// matcher is one match of s: the values taken so far, by position in
// names, and the (parameter, position) pairs known to fail.
type matcher struct {
	t      *Template
	s      string
	vals   []string
	failed []bool // nil while one parameter or two cannot repeat work
	steps  int
}

func (t Template) match(s string) ([]string, bool) {
	if len(t.lits) == 0 || len(s) > t.maxLen || !strings.HasPrefix(s, t.lits[0]) {
		return nil, false // the zero Template matches nothing
	}
	if len(t.names) == 0 {
		return nil, s == t.lits[0]
	}
	m := matcher{t: &t, s: s, vals: make([]string, len(t.names))}
	if len(t.names) > 2 {
		m.failed = make([]bool, len(t.names)*(len(s)+1))
	}
	return m.vals, m.from(0, len(t.lits[0]))
}

// from matches names[k] at byte pos of s and all that follows it.
func (m *matcher) from(k, pos int) bool {
	key := k*(len(m.s)+1) + pos
	remember := m.failed != nil && m.t.fresh[k]
	if remember && m.failed[key] {
		return false
	}
	if m.try(k, pos) {
		return true
	}
	if remember {
		m.failed[key] = true
	}
	return false
}

// try takes each value names[k] may have at pos, shortest first; a repeat
// has only the value its first occurrence took.
func (m *matcher) try(k, pos int) bool {
	if j := m.t.first[k]; j != k {
		v := m.vals[j]
		return strings.HasPrefix(m.s[pos:], v) && m.then(k, pos, len(v))
	}
	n := valueRun(m.s[pos:])
	for l := 1; l <= n; l++ {
		if m.then(k, pos, l) {
			return true
		}
	}
	return false
}

// then takes s[pos:pos+l] as names[k] and matches the literal after it and
// the rest.
func (m *matcher) then(k, pos, l int) bool {
	m.steps++
	if m.steps > maxSteps {
		return false
	}
	end := pos + l
	lit := m.t.lits[k+1]
	if !strings.HasPrefix(m.s[end:], lit) {
		return false
	}
	m.vals[k] = m.s[pos:end]
	if k == len(m.t.names)-1 {
		return end+len(lit) == len(m.s)
	}
	return m.from(k+1, end+len(lit))
}
