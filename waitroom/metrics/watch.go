package metrics

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web"
)

// The closed label sets of the watch series (waitroom.Watcher). Every
// value comes from these lists, never from a request, so a flood of
// made-up User-Agents, paths or headers adds no series.
var (
	pageKinds   = [...]string{"waiting", "challenge"}
	accessTypes = [...]string{"browser", "app", "api", "challenged", "refused"}
)

const (
	pageWaiting = iota
	pageChallenge
)

const (
	accessBrowser = iota
	accessApp
	accessAPI
	accessChallenged
	accessRefused
)

// watchSeries are the vectors of what the gate sees of the event as it
// runs: arrivals, waiting-page views, access types, device classes and
// distinct visitors, by room.
type watchSeries struct {
	arrivals, pages, access, devices, regions *prometheus.CounterVec
	visitors                                  *prometheus.GaugeVec
	// geo is the database regions are read from (SetGeo); nil for none.
	geo atomic.Pointer[Geo]
}

func (m *Metrics) defineWatch() []prometheus.Collector {
	m.watch = watchSeries{
		arrivals: counterVec("waitroom_arrivals_total",
			"Newcomers: first requests that got a ticket or went straight in.", "room"),
		pages: counterVec("waitroom_page_views_total",
			"Waiting pages shown (page exposure): HTML waiting and challenge pages the gate served, by page (waiting, challenge).", "room", "page"),
		access: counterVec("waitroom_access_total",
			"How newcomers came: arrivals by client (browser, app, api), and newcomers challenged or refused by a guard.", "room", "type"),
		devices: counterVec("waitroom_devices_total",
			"Newcomers (arrivals, challenged, refused) by device class from the User-Agent (phone, tablet, desktop, bot, unknown).", "room", "class"),
		regions: counterVec("waitroom_regions_total",
			"Newcomers (arrivals, challenged, refused) by the country geo.db_file gives their address (ISO 3166 code, other, unknown; all unknown without the file).", "room", "country"),
		visitors: gaugeVec("waitroom_visitors_last_minute",
			"Distinct visitors whose ticket a request of the room carried in the last whole minute, on this instance (HyperLogLog, about 3% error)."),
	}
	return []prometheus.Collector{m.watch.arrivals, m.watch.pages, m.watch.access, m.watch.devices, m.watch.regions, m.watch.visitors}
}

// roomWatch is a room's watch series, resolved once with its roomSeries.
type roomWatch struct {
	arrivals prometheus.Counter
	pages    [len(pageKinds)]prometheus.Counter
	access   [len(accessTypes)]prometheus.Counter
	devices  [len(deviceClasses)]prometheus.Counter
	// regions are the room's countries seen so far, "unknown" from the
	// start (a newcomer's region without geo.db_file, or one the file
	// lacks): at most 678 keys (Geo.Country).
	regions  index[prometheus.Counter]
	visitors visitors
}

func (m *Metrics) newWatch(room string) *roomWatch {
	rw := &roomWatch{arrivals: m.watch.arrivals.WithLabelValues(room)}
	for i, p := range pageKinds {
		rw.pages[i] = m.watch.pages.WithLabelValues(room, p)
	}
	for i, a := range accessTypes {
		rw.access[i] = m.watch.access.WithLabelValues(room, a)
	}
	for i, d := range deviceClasses {
		rw.devices[i] = m.watch.devices.WithLabelValues(room, d)
	}
	rw.region(m, room, "unknown")
	m.watch.visitors.WithLabelValues(room)
	return rw
}

// Seen counts what the gate decided of one of room's requests
// (waitroom.Watcher): an arrival, by access type and device class; a
// newcomer challenged or refused, likewise; and a waiting or challenge
// page when one was served as HTML.
func (m *Metrics) Seen(room string, s waitroom.Sighting) {
	if m == nil || s.Request == nil {
		return
	}
	rw := m.room(label(room)).watch
	r := s.Request
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	// The gate's answer is a page when the door shows pages and the
	// responder would send HTML (web.Pages.Waiting, by Accept).
	json := web.WantsJSON(r)
	page := s.Pages && read && !json
	access := -1
	switch {
	case s.Challenged:
		access = accessChallenged
		if page {
			rw.pages[pageChallenge].Inc()
		}
	case s.Refused:
		access = accessRefused
	case s.Arrival:
		access = accessOf(r, read, json)
		rw.arrivals.Inc()
		rw.visitors.roll(time.Now().Unix() / 60).arrivals.Add(1)
	}
	if page && (s.Outcome == waitroom.OutcomeJoined || s.Outcome == waitroom.OutcomeQueued) {
		rw.pages[pageWaiting].Inc()
	}
	if access >= 0 {
		rw.access[access].Inc()
		rw.devices[deviceOf(r.Header.Get("User-Agent"))].Inc()
		country := "unknown"
		if g := m.watch.geo.Load(); g != nil {
			country = g.Country(clientOf(r))
		}
		rw.region(m, label(room), country).Inc()
	}
}

// region is the room's counter of country; room is already labelled.
func (rw *roomWatch) region(m *Metrics, room, country string) prometheus.Counter {
	if c, ok := rw.regions.load(country); ok {
		return c
	}
	return rw.regions.get(country, func(country string) prometheus.Counter {
		return m.watch.regions.WithLabelValues(room, country)
	})
}

// accessOf is an arrival's client: "app" when it asks for JSON or carries
// its ticket in Waitroom-Token (an app without a cookie jar, client.js);
// "browser" for a read that names HTML in Accept (a browser's navigation
// always does); "api" for anything else: a write, or a client that names
// neither (curl's "*/*", an SDK's default).
func accessOf(r *http.Request, read, json bool) int {
	switch {
	case json || r.Header.Get(waitroom.TokenHeader) != "":
		return accessApp
	case read && namesHTML(r.Header.Get("Accept")):
		return accessBrowser
	}
	return accessAPI
}

// namesHTML reports whether an Accept header names an HTML type, in its
// first 1 KiB (browsers put it first).
func namesHTML(accept string) bool {
	if len(accept) > 1024 {
		accept = accept[:1024]
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		mt = strings.TrimSpace(mt)
		if strings.EqualFold(mt, "text/html") || strings.EqualFold(mt, "application/xhtml+xml") {
			return true
		}
	}
	return false
}

// Present adds a visitor id one of room's requests named to the room's
// distinct-visitor sketch of the minute (waitroom.Watcher).
func (m *Metrics) Present(room, visitor string) {
	if m == nil || visitor == "" {
		return
	}
	rw := m.room(label(room)).watch
	rw.visitors.roll(time.Now().Unix() / 60).add(visitorHash(visitor))
}

// publishVisitors rolls room's sketch over if its minute is past and sets
// waitroom_visitors_last_minute; Room calls it every tick, so the gauge
// moves on even when nobody comes.
func (m *Metrics) publishVisitors(room string) {
	rw := m.room(room).watch
	rw.visitors.roll(time.Now().Unix() / 60)
	m.watch.visitors.WithLabelValues(room).Set(rw.visitors.lastMinute())
}

// watchVectors are the watch series Forget deletes for a removed room.
func (m *Metrics) watchVectors() []deleter {
	return []deleter{m.watch.arrivals, m.watch.pages, m.watch.access, m.watch.devices, m.watch.regions, m.watch.visitors}
}

// SetGeo makes Seen count newcomers by country from g (nil: stop). The
// application sets it once, at start (geo.db_file needs a restart), and
// closes g only when no request runs any more.
func (m *Metrics) SetGeo(g *Geo) {
	if m != nil {
		m.watch.geo.Store(g)
	}
}

// Watched is what this instance counted of room (a template's name for
// the rooms it fills); false for a room it has no series of.
func (m *Metrics) Watched(room string) (waitroom.Watched, bool) {
	if m == nil {
		return waitroom.Watched{}, false
	}
	rs, ok := m.rooms.load(label(room))
	if !ok {
		return waitroom.Watched{}, false
	}
	rw := rs.watch
	w := waitroom.Watched{
		Arrivals:           value(rw.arrivals),
		ArrivalsLastMinute: rw.visitors.lastArrivals.Load(),
		VisitorsLastMinute: int64(rw.visitors.lastMinute()),
		Pages:              counts(pageKinds[:], rw.pages[:]),
		Access:             counts(accessTypes[:], rw.access[:]),
		Devices:            counts(deviceClasses[:], rw.devices[:]),
		Regions:            map[string]int64{},
	}
	if p := rw.regions.m.Load(); p != nil {
		for country, c := range *p {
			w.Regions[country] = value(c)
		}
	}
	return w, true
}

func counts(names []string, cs []prometheus.Counter) map[string]int64 {
	out := make(map[string]int64, len(names))
	for i, n := range names {
		out[n] = value(cs[i])
	}
	return out
}

// value reads a counter, for the dashboard: a few a room every few
// seconds, so the allocation of Write does not matter.
func value(c prometheus.Counter) int64 {
	var d dto.Metric
	if c.Write(&d) != nil || d.Counter == nil {
		return 0
	}
	return int64(d.Counter.GetValue())
}

var _ waitroom.Watcher = (*Metrics)(nil)
