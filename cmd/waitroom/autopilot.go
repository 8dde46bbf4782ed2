package main

import (
	"net/http"
	"time"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
)

// measure hands the site's answer to an admitted request to its room's
// autopilot (waitroom.Rooms.Measure): only a request the gate let in
// carries an admission, so the site's answers to anyone else (an outage's
// open door, a bypass) are not the room's to judge.
func measure(rooms *waitroom.Rooms) proxy.OnFirstByteFunc {
	return func(r *http.Request, t proxy.Timing) {
		sc := waitroom.ScopeOf(r.Context())
		if sc == nil || sc.Admission == nil {
			return
		}
		var entered time.Time
		if sc.Admission.Entered > 0 {
			entered = time.Unix(sc.Admission.Entered, 0)
		}
		rooms.Measure(waitroom.Measurement{Room: sc.Admission.Room, Visitor: sc.Admission.Visitor, Path: r.URL.Path,
			Status: t.Status, FirstByte: t.FirstByte, Timed: t.Timed, Entered: entered})
	}
}

// measures says whether a request is the autopilot's to time
// (proxy.Options.Measures): one the gate let into a room with an
// autopilot, on a path it does not exclude.
func measures(rooms *waitroom.Rooms) func(*http.Request) bool {
	return func(r *http.Request) bool {
		sc := waitroom.ScopeOf(r.Context())
		return sc != nil && sc.Admission != nil && rooms.Measures(sc.Admission.Room, r.URL.Path)
	}
}
