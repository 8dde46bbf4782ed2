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
// first "admitted" answer, and i was still in line when it sent a request
// that was answered "waiting". If j's ticket is higher than i's and j's
// admitted answer arrived before i sent that request, the gateway let j in
// while i, who came first, was still waiting: a provable inversion. A
// gateway that admits in ticket order never has one; a loaded client can
// hide one, but never invent one.

// orderEntry is one ticket holder's view of its wait.
type orderEntry struct {
	visitor  int
	ticket   int64
	lastWait time.Duration // sent: the last request answered "waiting"
	waited   bool
	admitted time.Duration // received: the first "admitted" answer
	isIn     bool
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
// in a Fenwick tree, so n visitors cost O(n log n).
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
	first := make([]int, len(times))    // rank -> a later visitor admitted then, for examples
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
			if c := prefix(tree, n); c > 0 {
				rep.Inversions += c
				rep.Overtaken++
				// The sweep meets lower tickets last; keep the lowest three.
				rep.Examples = append(rep.Examples, example(e, es[first[firstSet(tree, n)]]))
				if len(rep.Examples) > 3 {
					rep.Examples = append(rep.Examples[:0], rep.Examples[1:]...)
				}
			}
		}
		for i, e := range es[lo:hi] {
			if e.isIn {
				r, _ := slices.BinarySearch(times, e.admitted)
				if prefix(tree, r+1)-prefix(tree, r) == 0 {
					first[r] = lo + i
				}
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

// firstSet is the 0-based rank of the earliest value counted below rank n;
// the caller knows there is one.
func firstSet(tree []int64, n int) int {
	lo, hi := 1, n
	for lo < hi {
		mid := (lo + hi) / 2
		if prefix(tree, mid) > 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo - 1
}
