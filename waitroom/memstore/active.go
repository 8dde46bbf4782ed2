package memstore

import (
	"container/heap"
	"time"
)

// session is an admitted visitor.
type session struct {
	id     string
	ticket int64
	until  time.Time
	index  int // place in the expiry heap, kept up to date by the heap
	// started is the session's first use (zero until then), for
	// SessionMax; nets are the client networks that used it, for
	// SessionClients.
	started time.Time
	nets    []string
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
