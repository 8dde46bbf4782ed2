package pattern

// Set is a set of names, some of them templates: Has reports a name that
// is one of them or fills one. The gateway claims its cookies with it, so
// a site cookie that only shares the prefix still reaches the site.
type Set struct {
	names     map[string]bool
	templates []Template
}

// NewSet holds names; one that holds a parameter is read as a template,
// and one that does not parse as a template is held as it is.
func NewSet(names ...string) *Set {
	s := &Set{names: make(map[string]bool, len(names))}
	for _, n := range names {
		if IsTemplate(n) {
			if t, err := ParseTemplate(n); err == nil {
				s.templates = append(s.templates, t)
				continue
			}
		}
		s.names[n] = true
	}
	return s
}

// Has reports name being one of the set's names or filling one of its
// templates.
func (s *Set) Has(name string) bool {
	if s.names[name] {
		return true
	}
	for _, t := range s.templates {
		if t.Matches(name) {
			return true
		}
	}
	return false
}
