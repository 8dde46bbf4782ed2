package main

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// A client sees its admission only at its next poll, so admission times as
// seen are late by up to a poll interval and cannot be compared directly.
// What can be proved is this: j was admitted no later than it received its
// first "admitted" answer, and i was still in line when it sent a poll
// that was answered "waiting". A join's answer proves nothing: its ticket
// takes a place only when it comes back, so j, who came back first, may
// rightly go in before i returns. So the pair also needs i's place to
// exist before j could have been admitted: i received the answer to its
// first poll (placed) no later than j sent the last request that j was
// provably not yet in at (low). If j's ticket is higher than i's, the
// gateway then let j in while i, who came first, was in line and waiting:
// a provable inversion. A gateway that admits in ticket order never has
// one; a loaded client can hide one, but never invent one.

// orderEntry is one ticket holder's view of its wait.
type orderEntry struct {
	visitor  int
	ticket   int64
	lastWait time.Duration // sent: the last poll answered "waiting"
	waited   bool
	admitted time.Duration // received: the first "admitted" answer
	isIn     bool
	placed   time.Duration // received: the answer to the first poll, which took the place
	low      time.Duration // sent: a request before which this visitor was not in; admitted is later
}

// inversion is one pair that proves the order was broken.
type inversion struct {
	EarlierTicket    int64   `json:"earlier_ticket"`
	LaterTicket      int64   `json:"later_ticket"`
	LaterAdmittedAt  float64 `json:"later_admitted_at_seconds"`
	EarlierWaitingAt float64 `json:"earlier_still_waiting_at_seconds"`
	EarlierVisitor   int     `json:"earlier_visitor"`
	LaterVisitor     int     `json:"later_visitor"`
}

// orderReport is the result of checkOrder.
type orderReport struct {
	Checked    int         `json:"checked"`    // visitors with a ticket
	Inversions int64       `json:"inversions"` // provable pairs; 0 means the order held
	Overtaken  int         `json:"overtaken"`  // visitors passed by at least one later ticket
	Examples   []inversion `json:"examples"`   // the three lowest earlier tickets, lowest first
}

// checkOrder counts provable inversions: it sorts by ticket and sweeps from
// the back of the line, keeping the admission times of every later ticket
// in a Fenwick tree, so n visitors in a line that held cost O(n log n).
// Only a visitor some later ticket went in before is looked at closer, by
// overtakers.
func checkOrder(es []orderEntry) orderReport {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b orderEntry) int { return cmp.Compare(a.ticket, b.ticket) })
	var times []time.Duration
	for _, e := range es {
		if e.isIn {
			times = append(times, e.admitted)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	tree := make([]int64, len(times)+1) // Fenwick tree over the ranks of times
	var byIn []orderEntry               // the admitted, earliest first, for overtakers
	for _, e := range es {
		if e.isIn {
			byIn = append(byIn, e)
		}
	}
	slices.SortStableFunc(byIn, func(a, b orderEntry) int { return cmp.Compare(a.admitted, b.admitted) })
	rep := orderReport{Checked: len(es), Examples: []inversion{}}
	for hi := len(es); hi > 0; {
		lo := hi - 1
		for lo > 0 && es[lo-1].ticket == es[hi-1].ticket {
			lo-- // equal tickets do not order each other
		}
		for _, e := range es[lo:hi] {
			if !e.waited {
				continue
			}
			n := sort.Search(len(times), func(i int) bool { return times[i] >= e.lastWait }) // ranks before lastWait
			if prefix(tree, n) == 0 {
				continue // the common case, in O(log n)
			}
			// Some later ticket went in before e's last wait; only those
			// admitted after e's place existed count.
			c, j := overtakers(e, byIn)
			if c == 0 {
				continue
			}
			rep.Inversions += c
			rep.Overtaken++
			// The sweep meets lower tickets last; keep the lowest three.
			rep.Examples = append(rep.Examples, example(e, j))
			if len(rep.Examples) > 3 {
				rep.Examples = append(rep.Examples[:0], rep.Examples[1:]...)
			}
		}
		for _, e := range es[lo:hi] {
			if e.isIn {
				r, _ := slices.BinarySearch(times, e.admitted)
				add(tree, r+1)
			}
		}
		hi = lo
	}
	slices.Reverse(rep.Examples)
	return rep
}

func example(earlier, later orderEntry) inversion {
	return inversion{EarlierTicket: earlier.ticket, LaterTicket: later.ticket,
		LaterAdmittedAt: later.admitted.Seconds(), EarlierWaitingAt: earlier.lastWait.Seconds(),
		EarlierVisitor: earlier.visitor, LaterVisitor: later.visitor}
}

// add counts one more value at 1-based rank i.
func add(tree []int64, i int) {
	for ; i < len(tree); i += i & -i {
		tree[i]++
	}
}

// prefix counts values at ranks 1..n.
func prefix(tree []int64, n int) int64 {
	var c int64
	for ; n > 0; n -= n & -n {
		c += tree[n]
	}
	return c
}

// overtakers counts the later tickets admitted while e provably held its
// place and waited, and names the earliest of them. byIn is sorted by
// admission; admitted >= low, so only those admitted from e.placed on can
// count.
func overtakers(e orderEntry, byIn []orderEntry) (int64, orderEntry) {
	var c int64
	var first orderEntry
	k := sort.Search(len(byIn), func(k int) bool { return byIn[k].admitted >= e.placed })
	for _, j := range byIn[k:] {
		if j.admitted >= e.lastWait {
			break
		}
		if j.ticket > e.ticket && j.low >= e.placed {
			if c == 0 {
				first = j
			}
			c++
		}
	}
	return c, first
}
