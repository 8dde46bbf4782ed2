package waitroom

import "net/http"

// Sighting is what a room's gate saw of one request it decided, for the
// watch series of an Observer that is also a Watcher (metrics.Metrics):
// who arrives, how, on what, and which waiting pages were shown.
type Sighting struct {
	// Outcome is the request's Outcome, as Record heard it.
	Outcome Outcome
	// Arrival: a first request that got a ticket (OutcomeJoined) or went
	// straight in (OutcomeAdmitted, the store's Decision.Joined).
	Arrival bool
	// Challenged: answered with a proof of work to solve; Refused: turned
	// away by a guard (quota, full line, identity, session_clients).
	Challenged, Refused bool
	// Pages: the door answers a visitor not let in with the gate's own
	// page or JSON (Serve, ServeFilled, Forward); false for an auth check
	// (Check), whose answer is a bare 401 and shows nothing.
	Pages bool
	// Request is the request; Seen reads its method and headers while
	// the call lasts and keeps nothing of it.
	Request *http.Request
}

// Watcher is an Observer that watches the event as it runs: Seen hears
// every request a room's gate decided (once, after Record), Present every
// visitor id a room's request named (the gate's and the visitor
// endpoints'), for a count of distinct visitors. Like Declarer, it is
// optional: an Observer without it hears nothing of this.
type Watcher interface {
	Seen(room string, s Sighting)
	Present(room, visitor string)
}

// watch tells the room's Watcher, if the observer is one, what the gate
// decided of r. Outcomes that are not a room's decision (a preflight, a
// store failure, a visitor gone) are not sightings.
func (g *Gate) watch(r *http.Request, lr *liveRoom, vt visit, o Outcome, m mode) {
	w, ok := g.rooms.obs.(Watcher)
	if !ok {
		return
	}
	s := Sighting{Outcome: o, Request: r, Pages: m.join != JoinNone}
	switch o {
	case OutcomeJoined:
		s.Arrival = true
	case OutcomeAdmitted:
		s.Arrival = vt.d.Joined
	case OutcomeRefused:
		s.Challenged = vt.challenge != nil && vt.refused == ""
		s.Refused = !s.Challenged
	case OutcomeQueued:
	default:
		return
	}
	w.Seen(lr.label(), s)
}

// Watched is what one instance's Watcher counted of a room (a template's
// rooms together, under the template's name) since it started, for the
// dashboard; Prometheus has the same counts as series.
type Watched struct {
	Arrivals int64 `json:"arrivals"`
	// ArrivalsLastMinute and VisitorsLastMinute are of the last whole
	// minute: arrivals counted, and distinct visitors estimated.
	ArrivalsLastMinute int64 `json:"arrivals_last_minute"`
	VisitorsLastMinute int64 `json:"visitors_last_minute"`
	// Pages, Access and Devices are by label value: pages "waiting" and
	// "challenge"; access "browser", "app", "api", "challenged",
	// "refused"; devices "phone", "tablet", "desktop", "bot", "unknown".
	Pages   map[string]int64 `json:"page_views"`
	Access  map[string]int64 `json:"access"`
	Devices map[string]int64 `json:"devices"`
	// Regions are by country (geo.db_file's ISO code, "other",
	// "unknown"): the countries seen so far, "unknown" always.
	Regions map[string]int64 `json:"regions"`
}
