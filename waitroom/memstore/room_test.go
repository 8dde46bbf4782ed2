package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// checkRoom holds a room's structures to each other: the queue, the seen
// list and the waiting map hold the same visitors; positions run 1..n in
// ticket order; the seen list is in time order; the session map and heap
// agree; nobody is both waiting and inside; and the books balance.
func checkRoom(t *testing.T, r *room) {
	t.Helper()
	n := 0
	for w, prev := r.line.front(), (*waiter)(nil); w != nil; prev, w = w, w.links[0].next {
		n++
		if r.waiting[w.id] != w || r.active.get(w.id) != nil {
			t.Fatalf("ticket %d: in the queue but not (only) in the waiting map", w.ticket)
		}
		if prev != nil && !prev.before(w) {
			t.Fatalf("queue out of order: %d before %d", prev.ticket, w.ticket)
		}
		if got := r.line.rank(w); got != n {
			t.Fatalf("rank(ticket %d) = %d, want %d", w.ticket, got, n)
		}
	}
	seen := 0
	for w := r.seen.oldest; w != nil; w = w.newer {
		seen++
		if w.newer != nil && w.newer.seen.Before(w.seen) {
			t.Fatalf("seen list out of order at %s", w.id)
		}
	}
	if n != r.line.len() || n != len(r.waiting) || n != seen {
		t.Fatalf("line %d, queue walk %d, map %d, seen list %d", r.line.len(), n, len(r.waiting), seen)
	}
	h := r.active.expiry
	if len(h) != r.active.len() {
		t.Fatalf("%d sessions in the heap, %d in the map", len(h), r.active.len())
	}
	for i, s := range h {
		if s.index != i || r.active.get(s.id) != s || (i > 0 && s.until.Before(h[(i-1)/2].until)) {
			t.Fatalf("expiry heap broken at %d", i)
		}
	}
	st := r.totals
	if sum := int64(n+r.active.len()) + st.Released + st.Expired + st.Abandoned; sum != st.Joined {
		t.Fatalf("books do not balance: %d joined, %d accounted for", st.Joined, sum)
	}
}

// randomLimits varies the room's limits from call to call, as reloads do.
func randomLimits(rng *rand.Rand) waitroom.Limits {
	lim := waitroom.Limits{
		MaxActive:    rng.IntN(8),
		AdmitBurst:   1 + rng.IntN(3),
		SessionTTL:   time.Duration(1+rng.IntN(5)) * time.Minute,
		AbandonAfter: time.Duration(1+rng.IntN(3)) * time.Minute,
		// RecoveryGrace is mostly on, as configured by default.
		RecoveryGrace: time.Duration(rng.IntN(3)) * time.Minute,
		Random:        rng.IntN(3) == 0,
	}
	if rng.IntN(2) == 0 {
		lim.AdmitRate = waitroom.Rate{N: int64(1 + rng.IntN(30)), Per: time.Minute}
	}
	return lim
}

// ownInside counts the sessions on tickets of this incarnation.
func ownInside(r *room) int {
	n := 0
	for _, s := range r.active.byID {
		if s.ticket >= r.seed {
			n++
		}
	}
	return n
}

func TestRoom_RandomOperationsKeepItConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := newRoom(clock)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("v%03d", i)
	}
	maxLine := 0
	tickets := map[string]int64{} // the unplaced ticket each id's cookie holds
	for step := range 20_000 {
		clock = clock.Add(time.Duration(rng.IntN(800)-50) * time.Millisecond) // now and then backwards
		now, lim := r.now(clock), randomLimits(rng)
		id := ids[rng.IntN(len(ids))]
		switch op := rng.IntN(10); {
		case op < 6:
			v := waitroom.Visitor{ID: id, Seen: now, Issued: now, Ticket: tickets[id]}
			switch rng.IntN(8) {
			case 0:
				v.Ticket = r.seed - rng.Int64N(1000) // a ticket from before a restart
			case 1:
				v.Ticket = r.seq - rng.Int64N(4) // someone else's ticket
			}
			join := waitroom.JoinTicket
			switch rng.IntN(5) {
			case 0:
				join = waitroom.JoinNone
			case 1:
				join = waitroom.JoinNumber
			}
			d := r.decide(now, lim, v, join)
			if d.State == waitroom.StateWaiting && !d.Placed {
				tickets[id] = d.Ticket
			} else {
				delete(tickets, id)
			}
			if d.State == waitroom.StateWaiting && (d.Position < 1 || d.Position > d.Line) {
				t.Fatalf("step %d: position %d of %d", step, d.Position, d.Line)
			}
			if d.Joined && d.State == waitroom.StateAdmitted && r.active.len() > lim.MaxActive {
				t.Fatalf("step %d: immediate admission past max_active %d", step, lim.MaxActive)
			}
			if d.Joined && d.State == waitroom.StateAdmitted && r.inGrace(now) {
				t.Fatalf("step %d: immediate admission during the recovery grace", step)
			}
		case op < 8:
			grace, own := r.inGrace(now), ownInside(r)
			if a := r.tick(now, lim); a.Admitted > 0 && r.active.len() > lim.MaxActive {
				t.Fatalf("step %d: tick filled %d slots of %d", step, r.active.len(), lim.MaxActive)
			}
			if w := r.line.front(); grace && w != nil && w.ticket < r.seed && r.active.len() < lim.MaxActive && lim.AdmitRate.IsUnlimited() {
				t.Fatalf("step %d: restored ticket %d left waiting by a tick during the grace", step, w.ticket)
			}
			if grace && ownInside(r) > own {
				t.Fatalf("step %d: a tick during the grace let in a ticket of this incarnation", step)
			}
		case op < 9 && rng.IntN(2) == 0:
			r.expire(now) // what admitN does first, so free and eligible are what it finds
			r.prune(now, lim.AbandonAfter)
			eligible := r.line.len()
			if r.inGrace(now) {
				eligible = r.line.below(r.seed)
			}
			free := max(0, lim.MaxActive-r.active.len())
			n := rng.IntN(6) - 1
			if a := r.admitN(now, lim, n); a.Admitted != max(0, min(n, free, eligible)) {
				t.Fatalf("step %d: admitN(%d) with %d free, %d eligible admitted %d", step, n, free, eligible, a.Admitted)
			}
		case op < 9:
			r.release(now, id, time.Time{})
		default:
			r.stats(now)
		}
		checkRoom(t, r)
		maxLine = max(maxLine, r.line.len())
	}
	if st := r.stats(r.now(clock)); maxLine < 40 || st.Abandoned == 0 || st.Expired == 0 || st.Released == 0 || st.AdmittedTotal == 0 {
		t.Errorf("the walk missed a path: longest line %d, %+v", maxLine, st)
	}
}
