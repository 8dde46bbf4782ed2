package main

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Resolution is how late the checker may see admissions resume. It only
// counts an admission as decided after a moment M when the visitor's last
// "waiting" poll was sent after M (a poll answered "hold" proves nothing),
// and visitors at the front poll every page.refresh (1 s, spread by ±20%
// by the gateway). So an admission made at M+d is recognised only if it
// comes a poll after M (up to 1.2 s), and is seen at the visitor's next
// poll (up to 1.2 s more), plus a loaded loopback request. The bounds on
// time held are the issue's; only this observation slack is added to
// them, never to the other invariants.
const Resolution = 3 * time.Second

// Window is what a fault did and when, on the run's clock.
type Window struct {
	At       time.Duration // the fault
	Promoted time.Duration // the promotion's announcement (+switch-master; the replica serving the slot); At when nothing is promoted
	// Bound is the limit on time held after the fault:
	// down-after-milliseconds (Sentinel) or cluster-node-timeout (Cluster)
	// plus 3 s; 3 s for a gateway killed, which stops no store.
	Bound time.Duration
	End   time.Duration // the run's end
}

// Verdict is what held in one run. Every count is of definite
// violations: the checker's view can hide one (a visitor learns of its
// admission late), never invent one.
type Verdict struct {
	Visitors, Admitted int
	MaxActive          int
	MaxInside          int           // the most admissions the site saw live at once
	MaxInsideAt        time.Duration // when
	Inversions         int           // pairs: a later joiner admitted while an earlier one, placed before it joined, still waited
	Overtaken          int           // visitors passed by at least one such later joiner
	InversionExample   string
	PlacesLost         int // visitors whose position grew, or whose ticket was forgotten
	MaxGrowth          int // the most a position grew
	PlaceExample       string
	Forgotten          int // of PlacesLost: tickets answered "none"
	SentBack           int // admitted visitors whose site request was answered by the line
	Twice              int // visitors the site saw in two admissions
	HeldAfterFault     time.Duration
	HeldAfterPromotion time.Duration
	Resumed            bool // admissions were seen after the fault at all
	FiveXX             int  // answers >= 500 from the gateways
	Refused            int  // failed answers (errors, no answer from a live gateway) while held
	LetThrough         int  // admissions decided while no master was announced
	DeadGateway        int  // requests lost with a killed gateway (the balancer's, not counted above)
	Anonymous          int  // site requests without a visitor's header
	// ReleasesNoMaster: releases the site sent between the fault and the
	// promotion, when no gateway could write them; not a violation by
	// itself (the issue wants them kept and retried), but what holds
	// slots, and so admissions, afterwards when they are dropped.
	ReleasesNoMaster int
}

// check reads the visitors and the site after a run.
func check(vs []*Visitor, visits []visit, anonymous int, room Room, w Window) Verdict {
	v := Verdict{Visitors: len(vs), MaxActive: room.MaxActive, Anonymous: anonymous}
	v.MaxInside, v.MaxInsideAt = maxInside(visits)
	v.Twice = twice(visits)
	for _, x := range visits {
		if x.released > w.At && x.released < w.Promoted {
			v.ReleasesNoMaster++
		}
	}
	v.Inversions, v.Overtaken, v.InversionExample = inversions(vs, room)
	// The allowance is for a new master only: a fault that promotes
	// nothing (a gateway killed) gets none.
	slack := 0
	if w.Promoted > w.At {
		slack = settleSlack(room)
	}
	for _, x := range vs {
		if len(x.admits) > 0 {
			v.Admitted++
		}
		if g := growth(x, w.At, settled(w, room), slack); g > 0 || x.lost {
			v.PlacesLost++
			v.MaxGrowth = max(v.MaxGrowth, g)
			if v.PlaceExample == "" {
				v.PlaceExample = story(x)
			}
		}
		if x.lost {
			v.Forgotten++
		}
		if x.sentBack > 0 {
			v.SentBack++
		}
	}
	var resumed time.Duration
	resumed, v.Resumed = firstAdmission(vs, w.At)
	if !v.Resumed {
		resumed = w.End
	}
	v.HeldAfterFault = resumed - w.At
	if p, ok := firstAdmission(vs, w.Promoted); ok {
		v.HeldAfterPromotion = p - w.Promoted
	} else {
		v.HeldAfterPromotion = w.End - w.Promoted
	}
	for _, x := range vs {
		for _, f := range x.failures {
			switch {
			case f.dead:
				v.DeadGateway++
				continue
			case f.status >= 500:
				v.FiveXX++
			}
			if f.at >= w.At && f.at <= resumed {
				v.Refused++
			}
		}
		for _, a := range x.admits {
			// Decided after the fault and known before the promotion: there
			// was no master to write the admission to.
			if a.lo >= w.At && a.hi < w.Promoted {
				v.LetThrough++
			}
		}
	}
	return v
}

// maxInside sweeps the site's visits. An admission counts as inside from
// its first request at the site until the site answered the release (or,
// unreleased, its last request). The gateway's session began before the
// first request (the visitor learnt of it first) and ends after the release
// reaches the gateway, and session_ttl (20 s) is far longer than the gaps
// between one visitor's requests, so each interval lies within a live
// session: more than max_active intervals at once is more than max_active
// sessions at once, a definite overshoot.
func maxInside(visits []visit) (int, time.Duration) {
	type event struct {
		at   time.Duration
		step int
	}
	ev := make([]event, 0, 2*len(visits))
	for _, x := range visits {
		end := x.last
		if x.released > 0 {
			end = x.released
		}
		ev = append(ev, event{x.first, +1}, event{end, -1})
	}
	// At equal times an end goes first: both inside at once is not proved.
	slices.SortFunc(ev, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.step, b.step)) })
	n, most, at := 0, 0, time.Duration(0)
	for _, e := range ev {
		if n += e.step; n > most {
			most, at = n, e.at
		}
	}
	return most, at
}

// twice counts visitors the site saw in more than one admission: each
// visitor stops after the site releases it, so a second admission is one
// the gateway sent back to the line (its first lost) and let in again,
// taking two admissions for one place.
func twice(visits []visit) int {
	epochs := map[int]int{}
	for _, x := range visits {
		epochs[x.visitor]++
	}
	n := 0
	for _, e := range epochs {
		if e > 1 {
			n++
		}
	}
	return n
}

// keptPolling: the visitor never lost its ticket and never went quiet
// for abandon_after, so the gateway owed it its place throughout.
func keptPolling(x *Visitor, room Room) bool {
	return !x.lost && x.maxGap < room.AbandonAfter
}

// placed is when the visitor's place surely existed: the answer to its
// first poll said "waiting" (a join's answer holds no place yet; the ticket
// takes it when it comes back). ok false if it was never seen waiting.
func placed(x *Visitor) (time.Duration, bool) {
	for _, p := range x.polls {
		if p.state == "waiting" && !p.join {
			return p.recv, true
		}
	}
	return 0, false
}

// waitedUntil is the send time of the last poll answered "waiting" before
// the visitor's first admission: at some moment after it, the visitor was
// still in line.
func waitedUntil(x *Visitor) time.Duration {
	var last time.Duration
	for _, p := range x.polls {
		if len(x.admits) > 0 && p.sent > x.admits[0].lo {
			break
		}
		if p.state == "waiting" && !p.join {
			last = p.sent
		}
	}
	return last
}

// inversions counts definite inversions of admission order. A pair (A,
// B) is one when A was placed (seen waiting) strictly before B sent its
// join, so A's place existed before B asked for one and A is ahead; B was
// admitted no later than B.admits[0].hi (it received the answer saying
// so); and A was still waiting at a moment after that (a poll sent later
// was answered "waiting"). Both kept polling, so the gateway owed A its
// place all along. A gateway that admits in order never shows one.
func inversions(vs []*Visitor, room Room) (pairs, overtaken int, example string) {
	for _, a := range vs {
		at, ok := placed(a)
		if !ok || !keptPolling(a, room) {
			continue
		}
		until, passed := waitedUntil(a), 0
		for _, b := range vs {
			if b == a || len(b.admits) == 0 || !keptPolling(b, room) || b.joinSent <= at {
				continue
			}
			if b.admits[0].hi <= until {
				passed++
				if example == "" {
					example = fmt.Sprintf("visitor %d (placed at %.2fs) still waiting at %.2fs; visitor %d (joined at %.2fs) in by %.2fs",
						a.ID, at.Seconds(), until.Seconds(), b.ID, b.joinSent.Seconds(), b.admits[0].hi.Seconds())
				}
			}
		}
		if passed > 0 {
			pairs += passed
			overtaken++
		}
	}
	return pairs, overtaken, example
}

// growth is the most a visitor's position grew over the smallest it had
// been told before, while it waited for its first admission. In a line
// that only admits from the head and never lets anyone cut in, the places
// ahead can only empty: a position that grows was lost, whatever the
// cause (the store forgot places ahead and put them back, or put this one
// further back).
//
// One view is not a place the visitor had: the answers received between
// the fault and settle come from a new master that may lack places ahead
// which the failover lost and their holders bring back by number at their
// next poll. Such an answer must still be within slack of the best place
// told before the fault, so nobody is sent back; but it does not lower
// the mark that later answers are held to. Every other answer does.
func growth(x *Visitor, fault, settle time.Duration, slack int) int {
	low, most := 0, 0
	for _, p := range x.polls {
		if len(x.admits) > 0 && p.sent > x.admits[0].lo || p.state == "none" {
			break
		}
		if p.state != "waiting" || p.join || p.position <= 0 {
			continue // a join's position is of a ticket not yet placed
		}
		unsettled := p.recv > fault && p.recv < settle
		if low > 0 && p.position > low && !(unsettled && p.position-low <= slack) {
			most = max(most, p.position-low)
		}
		if !unsettled && (low == 0 || p.position < low) {
			low = p.position
		}
	}
	return most
}

// settleSlack is how far above the best place told before the fault an
// answer of the settling view may be (docs/reliability.md, "What a
// failover costs"). A new master that lost admissions puts them back when
// an instance tells it the highest ticket admitted (readmit), and each
// instance knows the room's as of its last tick (Stats.HighestAdmitted)
// and its own since; the admissions the other instances made after that
// tick reach the new master only with their next call. Until then they
// stand in line ahead of everyone, and they are at most the room's slots:
// max_active.
func settleSlack(room Room) int { return room.MaxActive }

// settled is when a failover's view has settled: every holder of a place
// the new master lost has polled again (page.refresh_max apart at most),
// and a tick has run on what they brought back, after the promotion's
// announcement.
func settled(w Window, room Room) time.Duration {
	return w.Promoted + room.RefreshMax + 2*room.Tick
}

// firstAdmission is when admissions were first seen after from: the
// earliest answer announcing an admission that was surely decided after
// from (the visitor's last "waiting" poll was sent at or after from).
func firstAdmission(vs []*Visitor, from time.Duration) (time.Duration, bool) {
	var first time.Duration
	ok := false
	for _, x := range vs {
		for _, a := range x.admits {
			if a.lo >= from && (!ok || a.hi < first) {
				first, ok = a.hi, true
			}
		}
	}
	return first, ok
}

// Problems lists the invariants a verdict breaks, with the figures.
func (v Verdict) Problems(w Window, tick time.Duration) []string {
	var p []string
	add := func(bad bool, format string, args ...any) {
		if bad {
			p = append(p, fmt.Sprintf(format, args...))
		}
	}
	add(v.MaxInside > v.MaxActive, "max_active exceeded: %d inside at %.2fs, max_active %d", v.MaxInside, v.MaxInsideAt.Seconds(), v.MaxActive)
	add(v.Inversions > 0, "%d definite inversions (%d visitors overtaken), e.g. %s", v.Inversions, v.Overtaken, v.InversionExample)
	add(v.PlacesLost > 0, "%d visitors lost places (positions grew by up to %d; %d tickets forgotten), e.g. %s", v.PlacesLost, v.MaxGrowth, v.Forgotten, v.PlaceExample)
	add(v.SentBack > 0, "%d admitted visitors sent back to the line", v.SentBack)
	add(v.Twice > 0, "%d visitors admitted twice", v.Twice)
	add(v.FiveXX > 0, "%d answers 5xx from the gateways", v.FiveXX)
	add(v.Refused > 0, "%d requests refused while held (errors, not the line's answer)", v.Refused)
	add(v.LetThrough > 0, "%d visitors let in while there was no master", v.LetThrough)
	// The bound after the fault assumes the store promotes in its usual
	// time; a promotion the store itself made late (Sentinel retrying an
	// election after failover-timeout, seen once in 60 runs on a loaded
	// machine: +12.9 s with down-after 1 s) moves it along, since nothing
	// can be admitted before there is a master. The bound after the
	// promotion, below, is the gateways' own.
	bound := max(w.Bound, w.Promoted-w.At+2*tick)
	add(!v.Resumed || v.HeldAfterFault > bound+Resolution,
		"admissions resumed %.2fs after the fault (seen: %v), bound %s + %s resolution", v.HeldAfterFault.Seconds(), v.Resumed, bound, Resolution)
	if w.Promoted > w.At {
		add(v.HeldAfterPromotion > 2*tick+Resolution,
			"admissions resumed %.2fs after the promotion, bound 2 ticks (%s) + %s resolution", v.HeldAfterPromotion.Seconds(), 2*tick, Resolution)
	}
	return p
}

// story is a visitor's answers in line, for a failure's message:
// "visitor 7: 2.10s waiting 40 #1795766586110510, 3.11s hold, ...".
func story(x *Visitor) string {
	s := fmt.Sprintf("visitor %d:", x.ID)
	for i, p := range x.polls {
		if i == 12 {
			return s + " ..."
		}
		s += fmt.Sprintf(" %.2fs %s", p.sent.Seconds(), p.state)
		if p.state == "waiting" {
			s += fmt.Sprintf(" %d #%d", p.position, p.ticket)
		}
		s += ","
	}
	return s
}
