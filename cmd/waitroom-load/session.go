package main

import (
	"cmp"
	"net/http"
	"net/url"
	"strconv"
)

// browse makes an admitted visitor's requests to the site: the first where
// the waiting page sends it (next), at once, as location.replace does; the
// rest to the target, -think apart, as clicks. False when the run ended or
// the gateway stopped treating the visitor as admitted.
func (v *visitor) browse(next string) bool {
	target := v.target.String()
	u, ref := target, v.page
	if n, _ := v.local(next); n != "" {
		u = n
	}
	for i := range v.r.cfg.requests {
		if i > 0 && !v.r.sleep(v.r.cfg.think) {
			return false
		}
		a, ok := v.do(kindAdmitted, http.MethodGet, u, followed, ref, nil)
		if !ok {
			return false
		}
		if s := a.state(); s != "" {
			v.r.stats.fail(kindAdmitted, "unexpected answer: sent back to the line (Waitroom-State "+s+")")
			return false
		}
		if a.status >= 400 {
			v.r.stats.fail(kindAdmitted, "status "+strconv.Itoa(a.status))
		}
		ref, u = u, target
	}
	return true
}

// leave gives the place up as the site's "leave" form would: a same-origin
// POST, so the gateway's cross-site refusal lets it through. A browser
// sends Origin and Fetch Metadata; an app (-accept json) sends neither.
func (v *visitor) leave() {
	target := v.target
	room := cmp.Or(v.r.cfg.room, v.room, v.r.stats.room())
	var q string
	if room != "" {
		// Without it the gateway finds the room from the Referer or the
		// only ticket the visitor holds.
		q = url.Values{"room": {room}}.Encode()
	}
	u := target.ResolveReference(&url.URL{Path: "/.waitroom/leave", RawQuery: q}).String()
	html := v.r.cfg.accept == "html"
	// Sent before the request: the gateway releases the session after this,
	// so it is a time the visitor was surely still inside.
	v.rec.left, v.rec.leaveSent = true, v.r.since()
	a, ok := v.do(kindLeave, http.MethodPost, u, followed, target.String(), func(req *http.Request) {
		if html {
			req.Header.Set("Origin", target.Scheme+"://"+target.Host)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	})
	switch {
	case !ok:
	case html && a.status == http.StatusSeeOther:
		// The form's answer: on to the "you left" page, a GET that changes
		// nothing, which a browser would load and this visitor skips.
	case a.status != http.StatusOK:
		v.r.stats.fail(kindLeave, "status "+strconv.Itoa(a.status))
	case !html:
		if s, err := decodeStatus(a.body); err != nil {
			v.r.stats.fail(kindLeave, err.Error())
		} else if s.State != "left" {
			v.r.stats.fail(kindLeave, "unexpected answer: state "+s.State)
		}
	}
}
