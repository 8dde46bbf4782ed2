package memstore

import (
	"container/heap"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// session is an admitted visitor.
type session struct {
	id     string
	ticket int64
	until  time.Time
	index  int // place in the expiry heap, kept up to date by the heap
	// started is the session's first use (zero until then), for
	// SessionMax; clients are the clients that use it, each with when it
	// was last heard, for SessionClients.
	started time.Time
	clients []clientUse
	// began is when the session was admitted, for ReleaseAt; for one put
	// back after a loss (restore), its cookie's Visitor.Entered, zero for
	// none: it began before the loss.
	began time.Time
}

// clientUse is one client of a session and when it was last heard.
type clientUse struct {
	key  string
	seen time.Time
}

// sessions is the active set: a map to find a visitor and a min-heap by
// expiry, so a tick finds the sessions that ran out without looking at the
// ones that did not. A heap rather than a list because the TTL comes with
// each call and may change on reload, so renewals do not always go to the
// back.
type sessions struct {
	byID   map[string]*session
	expiry expiryHeap
}

func newSessions() *sessions {
	return &sessions{byID: make(map[string]*session)}
}

func (s *sessions) len() int { return len(s.byID) }

func (s *sessions) get(id string) *session { return s.byID[id] }

func (s *sessions) add(id string, ticket int64, until time.Time) *session {
	x := &session{id: id, ticket: ticket, until: until}
	s.byID[id] = x
	heap.Push(&s.expiry, x)
	return x
}

func (s *sessions) remove(x *session) {
	heap.Remove(&s.expiry, x.index)
	delete(s.byID, x.id)
}

func (s *sessions) extend(x *session, until time.Time) {
	x.until = until
	heap.Fix(&s.expiry, x.index)
}

// expire removes every session whose time is up at now and reports how many.
// A session is over at its until instant, not after it.
func (s *sessions) expire(now time.Time) int {
	n := 0
	for len(s.expiry) > 0 && !now.Before(s.expiry[0].until) {
		s.remove(s.expiry[0])
		n++
	}
	return n
}

// expiryHeap implements heap.Interface over sessions by until.
type expiryHeap []*session

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }

func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *expiryHeap) Push(x any) {
	s := x.(*session)
	s.index = len(*h)
	*h = append(*h, s)
}

func (h *expiryHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}

// use records that client used the session at now: false, with how long
// until the quietest of the others stops counting, when SessionClients
// others were heard within ClientQuiet. Clients quiet for longer are
// forgotten. An unknown client ("") counts for nothing.
func (x *session) use(now time.Time, lim waitroom.Limits, client string) (time.Duration, bool) {
	if lim.SessionClients <= 0 || client == "" {
		return 0, true
	}
	quiet := lim.ClientQuiet()
	live := x.clients[:0]
	found := false
	for _, c := range x.clients {
		if c.key == client {
			c.seen, found = now, true
		}
		if now.Sub(c.seen) < quiet {
			live = append(live, c)
		}
	}
	x.clients = live
	if found {
		return 0, true
	}
	if len(x.clients) >= lim.SessionClients {
		oldest := x.clients[0].seen
		for _, c := range x.clients[1:] {
			if c.seen.Before(oldest) {
				oldest = c.seen
			}
		}
		return oldest.Add(quiet).Sub(now), false
	}
	x.clients = append(x.clients, clientUse{key: client, seen: now})
	return 0, true
}
