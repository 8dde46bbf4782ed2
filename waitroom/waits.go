package waitroom

import (
	"slices"
	"strconv"
	"sync"
	"time"
)

// The wait people had: from the ticket's issue (its cookie says when, so
// the figure is right whichever instance let the visitor in) to the first
// request that found it inside. A visitor let in at once waited 0. It is
// the first admitted request, not the tick, that tells, so a wait includes
// up to one poll interval of the waiting page; tickets carry seconds.

// noteAdmission records the wait of a visitor who just went inside: the
// Waited observation and the room's recent waits for the dashboard.
func (g *Gate) noteAdmission(lr *liveRoom, vt visit, d Decision, now time.Time) {
	p := vt.p
	if d.State != StateAdmitted || d.Restored != RestoreNone || (p.Valid && p.Ticket.Until != 0) {
		return // not a new admission, or one put back after a data loss
	}
	var wait time.Duration
	if p.Valid && p.Ticket.Issued > 0 {
		wait = max(now.Sub(time.Unix(p.Ticket.Issued, 0)), 0)
	}
	g.rooms.obs.Waited(lr.label(), wait)
	lr.waits.add(now, wait)
	if vt.account != "" {
		ticket := d.Ticket
		if ticket == 0 {
			ticket = p.Ticket.Number
		}
		// The visitor and its ticket name this admission alike everywhere.
		g.rooms.notify.VisitorAdmitted(lr.name, vt.v.ID, vt.account, d.Until, vt.v.ID+":"+strconv.FormatInt(ticket, 10))
	}
}

// waitSpan is how far back the dashboard's wait figures look, and
// maxWaits how many admissions they keep at most.
const (
	waitSpan = 15 * time.Minute
	maxWaits = 1024
)

// waitRing keeps a room's recent waits on this instance.
type waitRing struct {
	mu    sync.Mutex
	at    [maxWaits]time.Time
	waits [maxWaits]time.Duration
	n     int // samples written, ever
}

func (r *waitRing) add(at time.Time, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.n % maxWaits
	r.at[i], r.waits[i] = at, d
	r.n++
}

// quantiles returns the median and 90th percentile of the waits of the
// last waitSpan (or of the last maxWaits admissions, when there were more);
// ok is false without any.
func (r *waitRing) quantiles(now time.Time) (p50, p90 time.Duration, ok bool) {
	r.mu.Lock()
	var recent []time.Duration
	for i := range min(r.n, maxWaits) {
		if now.Sub(r.at[i]) <= waitSpan {
			recent = append(recent, r.waits[i])
		}
	}
	r.mu.Unlock()
	if len(recent) == 0 {
		return 0, 0, false
	}
	slices.Sort(recent)
	at := func(q float64) time.Duration { return recent[int(q*float64(len(recent)-1)+0.5)] }
	return at(0.5), at(0.9), true
}

// Admission is what the gate knows of an admitted request, carried in its
// Scope to what serves it: the pass signer (who it is for) and whoever
// ends the session on its behalf (a release; its Entered for
// Rooms.Release).
type Admission struct {
	Room    string
	Visitor string
	// Account is the site's signed account the visitor brought, "" for
	// none (an identity room's visitor id is derived from it).
	Account string
	Ticket  int64
	// Entered is when the session began (unix seconds), 0 when unknown.
	Entered int64
}
