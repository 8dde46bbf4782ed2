package memstore

import (
	"math/bits"
	"math/rand/v2"
	"time"
)

// maxLevel caps the skip list's height. With p = 1/4 a list of 4^maxLevel
// entries would be needed before the cap costs anything.
const maxLevel = 20

// waiter is one visitor in line. It is a node of two lists at once: the
// queue, in ticket order, and the seen list, in last-seen order.
type waiter struct {
	id     string
	ticket int64
	seen   time.Time

	links        []link  // queue: one forward link per level
	older, newer *waiter // seen list
}

// link is a forward pointer of the skip list. span counts the entries it
// jumps, its target included, which is what lets rank run in O(log n); the
// last link of a level spans to one past the end.
type link struct {
	next *waiter
	span int
}

// before orders the queue by ticket. A tie can only come from two restored
// cookies that claim the same number; the id breaks it so the order stays
// total.
func (w *waiter) before(o *waiter) bool {
	return w.ticket < o.ticket || (w.ticket == o.ticket && w.id < o.id)
}

// queue is the line in ticket order: a skip list with spans (as Redis keeps
// a sorted set), so insertion anywhere, removal and "how many are ahead" are
// all O(log n). Restored tickets land in front of later ones, which is why an
// append-only structure would not do.
type queue struct {
	head  waiter // sentinel; its links have maxLevel entries
	level int
	n     int
}

func newQueue() *queue {
	q := &queue{level: 1}
	q.head.links = make([]link, maxLevel)
	return q
}

func (q *queue) len() int { return q.n }

// front is the next visitor to go in, nil when the line is empty.
func (q *queue) front() *waiter { return q.head.links[0].next }

// insert puts w at the place its ticket gives.
func (q *queue) insert(w *waiter) {
	var update [maxLevel]*waiter
	var rank [maxLevel]int // entries from the head up to update[i]
	x := &q.head
	for i := q.level - 1; i >= 0; i-- {
		if i < q.level-1 {
			rank[i] = rank[i+1]
		}
		for next := x.links[i].next; next != nil && next.before(w); next = x.links[i].next {
			rank[i] += x.links[i].span
			x = next
		}
		update[i] = x
	}
	lvl := randomLevel()
	for i := q.level; i < lvl; i++ {
		update[i] = &q.head
		q.head.links[i].span = q.n
	}
	q.level = max(q.level, lvl)
	w.links = make([]link, lvl)
	for i := range lvl {
		prev := &update[i].links[i]
		w.links[i] = link{next: prev.next, span: prev.span - (rank[0] - rank[i])}
		*prev = link{next: w, span: rank[0] - rank[i] + 1}
	}
	for i := lvl; i < q.level; i++ {
		update[i].links[i].span++
	}
	q.n++
}

// remove takes w, which must be in the queue, out of it.
func (q *queue) remove(w *waiter) {
	x := &q.head
	for i := q.level - 1; i >= 0; i-- {
		for next := x.links[i].next; next != nil && next.before(w); next = x.links[i].next {
			x = next
		}
		if prev := &x.links[i]; prev.next == w {
			prev.span += w.links[i].span - 1
			prev.next = w.links[i].next
		} else {
			prev.span--
		}
	}
	for q.level > 1 && q.head.links[q.level-1].next == nil {
		q.level--
	}
	w.links = nil
	q.n--
}

// rank is w's position in line, 1 for the front; 0 if w is not in the queue.
func (q *queue) rank(w *waiter) int {
	x, rank := &q.head, 0
	for i := q.level - 1; i >= 0; i-- {
		for next := x.links[i].next; next != nil && !w.before(next); next = x.links[i].next {
			rank += x.links[i].span
			x = next
		}
		if x == w {
			return rank
		}
	}
	return 0
}

// at is the visitor at position k (1 for the front), nil when k is outside
// 1..len: the spans lead there in O(log n), which is what lets a random
// admission pick anyone in line without walking to it.
func (q *queue) at(k int) *waiter {
	x, rank := &q.head, 0
	for i := q.level - 1; i >= 0; i-- {
		for next := x.links[i].next; next != nil && rank+x.links[i].span <= k; next = x.links[i].next {
			rank += x.links[i].span
			x = next
		}
		if rank == k && x != &q.head {
			return x
		}
	}
	return nil
}

// below counts the visitors whose ticket is lower than ticket, in O(log n).
func (q *queue) below(ticket int64) int {
	x, rank := &q.head, 0
	for i := q.level - 1; i >= 0; i-- {
		for next := x.links[i].next; next != nil && next.ticket < ticket; next = x.links[i].next {
			rank += x.links[i].span
			x = next
		}
	}
	return rank
}

// randomLevel draws a height with P(level > k) = 4^-k: two random bits per
// level, taken from one draw.
func randomLevel() int {
	return min(1+bits.TrailingZeros64(rand.Uint64())/2, maxLevel)
}

// seenList holds the waiting visitors from least to most recently seen. A
// poll moves its visitor to the back, so the stale ones gather at the front
// and pruning never looks at anyone who is still polling.
type seenList struct {
	oldest, newest *waiter
}

func (l *seenList) pushBack(w *waiter, now time.Time) {
	w.seen = now
	w.older, w.newer = l.newest, nil
	if l.newest != nil {
		l.newest.newer = w
	} else {
		l.oldest = w
	}
	l.newest = w
}

func (l *seenList) remove(w *waiter) {
	if w.older != nil {
		w.older.newer = w.newer
	} else {
		l.oldest = w.newer
	}
	if w.newer != nil {
		w.newer.older = w.older
	} else {
		l.newest = w.older
	}
	w.older, w.newer = nil, nil
}

// touch records that w was seen at now. The room's clock never runs
// backwards, so the list stays in last-seen order.
func (l *seenList) touch(w *waiter, now time.Time) {
	if l.newest == w {
		w.seen = now
		return
	}
	l.remove(w)
	l.pushBack(w, now)
}
