package main

import (
	"strings"
	"testing"
	"time"
)

const s = time.Second

func waiting(sent time.Duration, pos int) poll {
	return poll{sent: sent, recv: sent + s/10, state: "waiting", position: pos, ticket: 1}
}

// An admission counts as inside from its first site request to the site's
// release; one ending when another starts is not proof of both at once.
func TestCheck_MaxInside(t *testing.T) {
	t.Parallel()
	visits := []visit{
		{visitor: 1, epoch: 1, first: 0, last: 1 * s, released: 2 * s},
		{visitor: 2, epoch: 1, first: 1 * s, last: 3 * s},
		{visitor: 3, epoch: 1, first: 2 * s, last: 4 * s, released: 4 * s},
	}
	if n, at := maxInside(visits); n != 2 || at != 1*s {
		t.Errorf("maxInside = %d at %s, want 2 at 1s", n, at)
	}
	visits = append(visits, visit{visitor: 4, epoch: 1, first: 2500 * time.Millisecond, last: 2600 * time.Millisecond})
	if n, _ := maxInside(visits); n != 3 {
		t.Errorf("maxInside = %d, want 3", n)
	}
}

// An inversion is only definite when A was placed before B joined, both
// kept polling, and A was seen waiting after B was surely in.
func TestCheck_Inversions(t *testing.T) {
	t.Parallel()
	room := DefaultRoom()
	a := func() *Visitor { return &Visitor{ID: 0, joinSent: 0, polls: []poll{waiting(1*s, 5), waiting(5*s, 3)}} }
	b := func() *Visitor {
		return &Visitor{ID: 1, joinSent: 2 * s, polls: []poll{waiting(2*s, 6)}, admits: []admission{{lo: 2 * s, hi: 3 * s}}}
	}
	for _, tc := range []struct {
		name string
		edit func(a, b *Visitor)
		want int
	}{
		{"B in while A waited", func(a, b *Visitor) {}, 1},
		{"B joined before A was placed", func(a, b *Visitor) { b.joinSent = 1 * s }, 0},
		{"A's last wait before B was surely in", func(a, b *Visitor) { a.polls[1].sent = 2900 * time.Millisecond }, 0},
		{"A's ticket was forgotten", func(a, b *Visitor) { a.lost = true }, 0},
		{"A's first waiting answer was its join's", func(a, b *Visitor) { a.polls[0].join = true }, 0},
		{"B stopped polling", func(a, b *Visitor) { b.maxGap = room.AbandonAfter }, 0},
		{"A went in first", func(a, b *Visitor) {
			a.polls = a.polls[:1]
			a.admits = []admission{{lo: 1 * s, hi: 2 * s}}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			va, vb := a(), b()
			tc.edit(va, vb)
			if n, _, ex := inversions([]*Visitor{va, vb}, room); n != tc.want {
				t.Errorf("inversions = %d (%s), want %d", n, ex, tc.want)
			}
		})
	}
}

// A position may only shrink while the visitor waits for its admission.
func TestCheck_Growth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		x    Visitor
		want int
	}{
		{"shrinks", Visitor{polls: []poll{waiting(1*s, 10), waiting(2*s, 8), waiting(3*s, 7)}}, 0},
		{"grows back", Visitor{polls: []poll{waiting(1*s, 10), waiting(2*s, 8), waiting(3*s, 9)}}, 1},
		{"hold in between", Visitor{polls: []poll{waiting(1*s, 10), {sent: 2 * s, state: "hold"}, waiting(3*s, 12)}}, 2},
		{"a join's estimate", Visitor{polls: []poll{{sent: 1 * s, state: "waiting", position: 5, join: true}, waiting(2*s, 8)}}, 0},
		{"after its admission", Visitor{polls: []poll{waiting(1*s, 3), waiting(4*s, 50)}, admits: []admission{{lo: 1 * s, hi: 2 * s}}}, 0},
		// The fault is at 10 s and the view settles at 15 s.
		{"the new master's view before a lost place comes back", Visitor{polls: []poll{waiting(9*s, 10), waiting(11*s, 8), waiting(16*s, 9)}}, 0},
		{"sent back past its place before the fault", Visitor{polls: []poll{waiting(9*s, 10), waiting(11*s, 15)}}, 5},
		{"high by lost admissions not put back yet", Visitor{polls: []poll{waiting(9*s, 10), waiting(11*s, 12), waiting(16*s, 9)}}, 0},
		{"grew once settled", Visitor{polls: []poll{waiting(9*s, 10), waiting(16*s, 7), waiting(17*s, 8)}}, 1},
	} {
		if g := growth(&tc.x, 10*s, 15*s, 2); g != tc.want {
			t.Errorf("%s: growth = %d, want %d", tc.name, g, tc.want)
		}
	}
}

// The verdict names each broken invariant; a clean run breaks none.
func TestCheck_Problems(t *testing.T) {
	t.Parallel()
	room := DefaultRoom()
	w := Window{At: 10 * s, Promoted: 12 * s, Bound: 4 * s, End: 30 * s}
	in := func(id int, lo, hi time.Duration) *Visitor {
		return &Visitor{ID: id, joinSent: lo - s, polls: []poll{waiting(lo, 1)}, admits: []admission{{lo: lo, hi: hi}}, released: true}
	}
	clean := []*Visitor{in(0, 9*s, 9500*time.Millisecond), in(1, 12*s, 12500*time.Millisecond)}
	visits := []visit{{visitor: 0, epoch: 1, first: 9600 * time.Millisecond, last: 10 * s, released: 10 * s}}
	v := check(clean, visits, 0, room, w)
	if p := v.Problems(w, room.Tick); len(p) != 0 || v.HeldAfterFault != 2500*time.Millisecond || v.HeldAfterPromotion != 500*time.Millisecond {
		t.Errorf("a clean run: problems %q, held %s and %s after the promotion", p, v.HeldAfterFault, v.HeldAfterPromotion)
	}
	// A promotion the store made late moves the bound after the fault.
	slow := Window{At: 10 * s, Promoted: 20 * s, Bound: 4 * s, End: 40 * s}
	resumed := []*Visitor{in(0, 9*s, 9500*time.Millisecond), in(1, 20*s, 20600*time.Millisecond)}
	if p := check(resumed, visits, 0, room, slow).Problems(slow, room.Tick); len(p) != 0 {
		t.Errorf("resumed 0.6s after a promotion the store made 10s after the fault: problems %q", p)
	}
	late := []*Visitor{in(0, 9*s, 9500*time.Millisecond), in(1, 20*s, 20500*time.Millisecond)}
	late[1].failures = []failure{{at: 11 * s, status: 502}, {at: 11 * s, dead: true}}
	twice := append(visits, visit{visitor: 0, epoch: 2, first: 21 * s, last: 21 * s})
	p := strings.Join(check(late, twice, 0, room, w).Problems(w, room.Tick), "\n")
	for _, want := range []string{"resumed 10.50s after the fault", "after the promotion", "1 answers 5xx", "1 requests refused while held", "1 visitors admitted twice"} {
		if !strings.Contains(p, want) {
			t.Errorf("problems do not say %q:\n%s", want, p)
		}
	}
}
