package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// visitor is one browser in the spike: its own cookie jar, the shared pool.
type visitor struct {
	r      *runner
	n      int
	gw     int // target's index in the run's targets
	rec    *record
	c      *http.Client
	target *url.URL // this visitor's gateway; with -spread request, do sends each request to the next
	page   string   // the waiting page's URL: the Referer of what the page does
	room   string
}

// turn is where a visitor stands after a join or a wait.
type turn struct {
	admitted bool
	lost     bool   // the gateway forgot the ticket: the page reloads to join again
	next     string // where an admitted visitor goes; "" for the target
	status   string // the URL the page polls
	refresh  time.Duration
}

func (r *runner) newVisitor(n int) *visitor {
	jar, _ := cookiejar.New(nil) // cannot fail without options
	c := &http.Client{Transport: r.transport, Jar: jar,
		// A site's redirect is its answer; following it would also let a
		// remote Location walk around the loopback check.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// Round robin by arrival, as a balancer spreads new connections.
	gw := n % len(r.cfg.targets)
	return &visitor{r: r, n: n, gw: gw, rec: &r.stats.records[n], c: c, target: r.cfg.targets[gw]}
}

// live is the visitor's whole visit: join, wait as the page does, use the
// site, then leave or stay.
func (v *visitor) live() {
	st := v.r.stats
	st.arrived.Add(1)
	var t turn
	for reloads := 0; ; reloads++ {
		var ok bool
		if t, ok = v.join(reloads > 0); !ok {
			return
		}
		if !t.admitted {
			st.waiting.Add(1)
			t, ok = v.wait(t)
			st.waiting.Add(-1)
			if !ok {
				return
			}
		}
		if !t.lost {
			break
		}
		if reloads == 2 {
			v.rec.failed = true // a person would have given up by now
			return
		}
	}
	if v.browse(t.next) && v.r.cfg.after == "leave" && !v.r.over() {
		v.leave()
	}
}

// join asks for the guarded page as a person typing its address would.
func (v *visitor) join(again bool) (turn, bool) {
	if again {
		*v.rec = record{} // a new ticket starts a new story; the old one was dropped
	}
	v.page = v.target.String()
	a, ok := v.do(kindJoin, http.MethodGet, v.page, typed, "", nil)
	if !again {
		v.r.stats.firstAnswer(a, ok)
	}
	if !ok {
		v.rec.failed = v.r.hard.Err() == nil // a join cut off by the end is not a failure
		return turn{}, false
	}
	if a.state() == "" {
		if a.status >= 400 {
			v.r.stats.fail(kindJoin, "status "+strconv.Itoa(a.status))
			v.rec.failed = true
			return turn{}, false
		}
		v.rec.straight = true
		v.admit(a)
		return turn{admitted: true}, true
	}
	t, err := v.joinAnswer(a)
	if err != nil {
		v.r.stats.fail(kindJoin, err.Error())
		v.rec.failed = true
		return turn{}, false
	}
	return t, true
}

// joinAnswer reads the gateway's own answer to a join: the waiting page's
// seed for a browser, the JSON for an app.
func (v *visitor) joinAnswer(a *answer) (turn, error) {
	if a.status != http.StatusOK && a.status != http.StatusAccepted && a.status != http.StatusTooManyRequests {
		return turn{}, fmt.Errorf("status %d (Waitroom-State %s)", a.status, a.state())
	}
	if a.state() == "hold" {
		// The gateway could not reach its store in time: the person sees
		// the "hold" page, not a place in line (no ticket, no cookie).
		return turn{}, fmt.Errorf("state hold (the gateway's store is unreachable)")
	}
	if len(v.c.Jar.Cookies(v.target)) == 0 {
		return turn{}, fmt.Errorf("unexpected answer: no cookie kept (status %d, Waitroom-State %s; cookie.secure on plain HTTP?)", a.status, a.state())
	}
	state, room, t := a.state(), "", turn{}
	if v.r.cfg.accept == "html" {
		d, err := pageSeed(a.body)
		if err != nil {
			return turn{}, fmt.Errorf("unexpected answer: %v", err)
		}
		if t.status, room = v.local(d.Status); t.status == "" {
			return turn{}, fmt.Errorf("unexpected answer: status URL %q is not on this site", d.Status)
		}
		v.ticket(d.Ticket)
		t.refresh, t.next, t.admitted = seconds(d.Refresh), d.Next, d.State == "admitted"
	} else {
		s, err := decodeStatus(a.body)
		if err != nil {
			return turn{}, err
		}
		v.ticket(s.Ticket)
		room, t.refresh, t.next, t.admitted = s.Room, seconds(s.RefreshAfter), s.Next, s.State == "admitted"
		q := url.Values{"room": {room}, "return_to": {v.target.RequestURI()}}
		t.status = v.target.ResolveReference(&url.URL{Path: "/.waitroom/status", RawQuery: q.Encode()}).String()
	}
	v.room = room
	v.observe(kindJoin, state, room, a)
	if t.admitted {
		v.admit(a)
	}
	return t, nil
}

// wait polls the status endpoint the way the page's script does: first
// after the page's refresh, then after each answer's refresh_after, backing
// off with jitter on trouble, until admitted, the ticket is lost, or the
// run ends (false).
func (v *visitor) wait(t turn) (turn, bool) {
	base := t.refresh
	d, fails := base, 0
	for {
		if !v.r.sleep(d) {
			return turn{}, false
		}
		a, ok := v.do(kindPoll, http.MethodGet, t.status, fetched, v.page, nil)
		var s statusJSON
		var err error
		if ok {
			// As the page: 2xx and 429 are answers to read, anything else is trouble.
			if (a.status < 200 || a.status > 299) && a.status != http.StatusTooManyRequests {
				err = fmt.Errorf("status %d", a.status)
			} else {
				s, err = decodeStatus(a.body)
			}
			if err != nil {
				v.r.stats.fail(kindPoll, err.Error())
			}
		}
		if !ok || err != nil {
			if v.r.over() {
				return turn{}, false
			}
			fails++
			d = backoff(base, fails)
			continue
		}
		v.ticket(s.Ticket)
		v.observe(kindPoll, s.State, s.Room, a)
		switch s.State {
		case "admitted":
			v.admit(a)
			return turn{admitted: true, next: s.Next}, true
		case "none":
			v.r.stats.fail(kindPoll, "state none (ticket lost; the page reloads)")
			return turn{lost: true}, true
		}
		d, fails = seconds(s.RefreshAfter), 0
		if s.RefreshAfter < 1 {
			d = base
		}
	}
}

// backoff is the page's retry delay after fails failures in a row: doubling
// up to a minute, spread by ±25%.
func backoff(base time.Duration, fails int) time.Duration {
	d := math.Min(60, base.Seconds()*math.Pow(2, float64(fails)))
	return time.Duration(d * (0.75 + rand.Float64()*0.5) * float64(time.Second))
}

// observe notes an answer's state: counted, and for the order check, when
// this visitor's place existed and the last time it was provably in line.
func (v *visitor) observe(k kind, state, room string, a *answer) {
	v.r.stats.state(state, room)
	if k == kindPoll && v.rec.placed == 0 {
		v.rec.placed = a.recv // the first poll presented the ticket: it holds a place now
	}
	switch state {
	case "waiting", "paused":
		// A join's "waiting" holds no place yet, so only a poll's proves
		// the visitor was in line.
		if k == kindPoll {
			v.rec.waited, v.rec.lastWait = true, max(v.rec.lastWait, a.sent)
		}
	case "hold":
		v.r.stats.fail(k, "state hold (the gateway's store is unreachable)")
	}
}

// admit notes the first answer that said admitted; a is the request that
// got it.
func (v *visitor) admit(a *answer) {
	if !v.rec.isIn {
		v.rec.isIn, v.rec.admitted, v.rec.inSent = true, a.recv, a.sent
		v.r.stats.admitted.Add(1)
	}
}

func (v *visitor) ticket(t int64) {
	switch {
	case t <= 0:
	case v.rec.ticket == 0:
		v.rec.ticket = t
	case v.rec.ticket != t:
		v.r.stats.fail(kindPoll, fmt.Sprintf("unexpected answer: ticket changed from %d to %d", v.rec.ticket, t))
	}
}

// local resolves a same-site path ("/x?y", not "//host") against the
// target, with the room it names; "" when it is not same-site.
func (v *visitor) local(p string) (string, string) {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, `/\`) {
		return "", ""
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", ""
	}
	return v.target.ResolveReference(u).String(), u.Query().Get("room")
}

// seconds turns a refresh in whole seconds into a delay; the page uses 5s
// when the server gives none.
func seconds(s int64) time.Duration {
	if s < 1 {
		return 5 * time.Second
	}
	return time.Duration(s) * time.Second
}

// do sends one request and reads the answer to its end. Failures are
// counted here, except requests the end of the grace cut off.
func (v *visitor) do(k kind, method, u string, a action, referer string, edit func(*http.Request)) (*answer, bool) {
	ctx, cancel := context.WithTimeout(v.r.hard, v.r.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		v.r.stats.fail(k, "bad URL")
		return nil, false
	}
	setHeaders(req, a, v.r.cfg.accept, referer)
	req.Header.Set(clientHeader, strconv.Itoa(v.n))
	if edit != nil {
		edit(req)
	}
	gw := v.gw
	if v.r.cfg.spread == "request" {
		gw = v.r.spreadRequest(req)
	}
	v.r.stats.byTarget[gw].Add(1)
	sent := v.r.since()
	resp, err := v.c.Do(req)
	var body []byte
	if err == nil {
		if k == kindAdmitted {
			_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		} else {
			body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		}
		_ = resp.Body.Close()
	}
	recv := v.r.since()
	if err != nil {
		if v.r.hard.Err() != nil {
			v.r.stats.cutOff.Add(1)
		} else {
			v.r.stats.requests[k].Add(1)
			v.r.stats.fail(k, netError(err))
		}
		return nil, false
	}
	v.r.stats.requests[k].Add(1)
	v.r.stats.lat[k].add(recv - sent)
	return &answer{status: resp.StatusCode, header: resp.Header, body: body, sent: sent, recv: recv}, true
}
