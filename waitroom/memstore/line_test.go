package memstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// checkQueue holds the skip list to a sorted slice of the same waiters:
// length, front, every rank, and the spans behind them at every level.
func checkQueue(t *testing.T, q *queue, want []*waiter) {
	t.Helper()
	if q.len() != len(want) {
		t.Fatalf("len = %d, want %d", q.len(), len(want))
	}
	if len(want) > 0 && q.front() != want[0] {
		t.Fatalf("front = %v, want ticket %d", q.front().ticket, want[0].ticket)
	}
	for i, w := range want {
		if r := q.rank(w); r != i+1 {
			t.Fatalf("rank(ticket %d) = %d, want %d", w.ticket, r, i+1)
		}
		if got := q.at(i + 1); got != w {
			t.Fatalf("at(%d) = %v, want ticket %d", i+1, got, w.ticket)
		}
		lower, _ := slices.BinarySearchFunc(want, w.ticket, func(x *waiter, t int64) int { return cmp.Compare(x.ticket, t) })
		if got := q.below(w.ticket); got != lower {
			t.Fatalf("below(%d) = %d, want %d", w.ticket, got, lower)
		}
	}
	if q.at(0) != nil || q.at(len(want)+1) != nil {
		t.Fatalf("at(0) or at(len+1) found a visitor")
	}
	for lvl := range q.level {
		pos := 0
		for x := &q.head; x.links[lvl].next != nil; x = x.links[lvl].next {
			pos += x.links[lvl].span
			if next := x.links[lvl].next; want[pos-1] != next {
				t.Fatalf("level %d: span sum %d reaches ticket %d, want %d", lvl, pos, next.ticket, want[pos-1].ticket)
			}
		}
	}
}

func TestQueue_MatchesSortedSlice(t *testing.T) {
	q := newQueue()
	var want []*waiter
	insert := func(w *waiter) {
		q.insert(w)
		i, _ := slices.BinarySearchFunc(want, w, func(a, b *waiter) int {
			if a.before(b) {
				return -1
			}
			return 1
		})
		want = slices.Insert(want, i, w)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	maxLevelSeen := 0
	for step := range 5000 {
		switch op := rng.IntN(10); {
		case op < 6 || len(want) == 0: // arrive; tickets mostly grow, some land in front
			ticket := int64(step) + 1000
			if op == 0 {
				ticket = rng.Int64N(1000)
			}
			insert(&waiter{id: fmt.Sprint(step), ticket: ticket})
		case op < 7: // the front goes in
			q.remove(want[0])
			want = want[1:]
		default: // someone anywhere leaves
			i := rng.IntN(len(want))
			q.remove(want[i])
			want = slices.Delete(want, i, i+1)
		}
		if step%50 == 0 || len(want) < 5 {
			checkQueue(t, q, want)
		}
		maxLevelSeen = max(maxLevelSeen, q.level)
	}
	if len(want) < 500 || maxLevelSeen < 4 {
		t.Fatalf("the walk reached %d entries and %d levels; too small to test spans", len(want), maxLevelSeen)
	}
	for len(want) > 0 {
		q.remove(want[len(want)-1])
		want = want[:len(want)-1]
	}
	checkQueue(t, q, want)
	if q.level != 1 {
		t.Errorf("empty queue keeps %d levels, want 1", q.level)
	}
}

func TestQueue_EqualTicketsOrderedByID(t *testing.T) {
	q := newQueue()
	b, a, c := &waiter{id: "b", ticket: 5}, &waiter{id: "a", ticket: 5}, &waiter{id: "c", ticket: 4}
	for _, w := range []*waiter{b, a, c} {
		q.insert(w)
	}
	checkQueue(t, q, []*waiter{c, a, b})
	if r := q.rank(&waiter{id: "z", ticket: 5}); r != 0 {
		t.Errorf("rank of a waiter not in the queue = %d, want 0", r)
	}
}

func TestRandomLevel_Distribution(t *testing.T) {
	counts := make([]int, maxLevel+1)
	const n = 100_000
	for range n {
		counts[randomLevel()]++
	}
	// P(level 1) = 3/4, P(level 2) = 3/16.
	if got := float64(counts[1]) / n; got < 0.74 || got > 0.76 {
		t.Errorf("level 1 drawn %.3f of the time, want 0.75", got)
	}
	if got := float64(counts[2]) / n; got < 0.18 || got > 0.195 {
		t.Errorf("level 2 drawn %.3f of the time, want 0.1875", got)
	}
}

func seenOrder(l *seenList) []string {
	var ids []string
	for w := l.oldest; w != nil; w = w.newer {
		ids = append(ids, w.id)
	}
	var back []string
	for w := l.newest; w != nil; w = w.older {
		back = append([]string{w.id}, back...)
	}
	if !slices.Equal(ids, back) {
		return []string{"broken links", fmt.Sprint(ids), fmt.Sprint(back)}
	}
	return ids
}

func TestSeenList_TouchMovesToBack(t *testing.T) {
	var l seenList
	t0 := time.Unix(1000, 0)
	a, b, c := &waiter{id: "a"}, &waiter{id: "b"}, &waiter{id: "c"}
	for i, w := range []*waiter{a, b, c} {
		l.pushBack(w, t0.Add(time.Duration(i)*time.Second))
	}
	steps := []struct {
		do   func()
		want []string
	}{
		{func() { l.touch(a, t0.Add(5*time.Second)) }, []string{"b", "c", "a"}},
		{func() { l.touch(a, t0.Add(6*time.Second)) }, []string{"b", "c", "a"}},
		{func() { l.touch(c, t0.Add(7*time.Second)) }, []string{"b", "a", "c"}},
		{func() { l.remove(a) }, []string{"b", "c"}},
		{func() { l.remove(b) }, []string{"c"}},
		{func() { l.remove(c) }, nil},
	}
	for i, s := range steps {
		s.do()
		if got := seenOrder(&l); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: order %v, want %v", i, got, s.want)
		}
	}
	if !a.seen.Equal(t0.Add(6 * time.Second)) {
		t.Errorf("a.seen = %v, want the last touch", a.seen)
	}
}
