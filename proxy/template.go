package proxy

// A route's path may hold parameters, whole segments written "{name}":
// "/events/{id}/" matches "/events/123/seats" with id "123". Its room may
// then be a template that names them, "event-{id}", filled per request:
// each event gets its own room. Package pattern holds the grammar, which
// the rooms, the pages and the cookie claim share.
//
// A value is one segment of 1 to pattern.MaxValueLen bytes of
// [A-Za-z0-9_-], taken in lower case, since routes match ASCII
// case-insensitively: a site that serves /events/ABC/ and /events/abc/
// alike must not get two rooms, each with its own max_active, for one
// event. A path whose literal parts match but whose value does not (too
// long, another script, a dot as in "123.json", which suffix-matching
// frameworks serve as event 123) is refused (Route.Refused) rather than
// left to fall through to a route without the room.

// matchParams matches the route, whose path has parameters, against the
// clean path p (in MatchPath form): the route with its room filled from
// the values, or refused.
func (r *Route) matchParams(p string) (Route, bool) {
	values, ok, refused := r.pat.Match(p)
	if !ok {
		return Route{}, false
	}
	m := *r
	if refused {
		m.Room, m.Refused = "", true
		return m, true
	}
	names := r.pat.Names()
	m.Params = make([]Param, len(values))
	for k, v := range values {
		m.Params[k] = Param{Name: names[k], Value: v}
	}
	m.Room = r.room.Fill(m.Params)
	return m, true
}
