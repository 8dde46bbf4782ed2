package waitroom

import (
	"net/http/httptest"
	"testing"
	"time"
)

// fromAnchor answers only inside its bound: a fresh view of the same
// incarnation, a recent anchor, a placed ticket waiting beyond the first
// places, departures within the slack, a room admitting from the head.
func TestFromAnchor(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	base := Room{Name: "r", Mode: ModeFIFO, Tick: time.Second, Limits: Limits{MaxActive: 10, AbandonAfter: 2 * time.Minute}}
	anchor := Anchor{Position: 5000, At: now.Unix() - 10, Progress: Progress{Epoch: 7, Admitted: 100, Departed: 3}}
	ticket := Ticket{Number: 42, Anchor: anchor}
	view := progressView{progress: Progress{Epoch: 7, Admitted: 400, Departed: 40}, waiting: 6000, at: now.Add(-500 * time.Millisecond)}
	tests := []struct {
		name string
		room func(*Room)
		tk   func(*Ticket)
		view func(*progressView)
		want int64 // 0: ask the store
	}{
		{"far back, moved 300", nil, nil, nil, 4700},
		{"departures past 1%", nil, nil, func(v *progressView) { v.progress.Departed = 3 + 48 }, 0},
		{"departures and pending past 1%", nil, func(tk *Ticket) { tk.Anchor.Progress.Pending = 10 }, func(v *progressView) { v.progress.Departed = 3 + 38 }, 0},
		{"near the front", nil, nil, func(v *progressView) { v.progress.Admitted = 100 + 4900 }, 0},
		{"another incarnation", nil, nil, func(v *progressView) { v.progress.Epoch = 8 }, 0},
		// Another instance's newer view anchored it: the place it was told.
		{"a view behind the anchor", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() }, func(v *progressView) { v.progress.Admitted = 99 }, 5000},
		{"a view behind the anchor, same second", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() - 1 }, func(v *progressView) { v.progress.Admitted = 99 }, 5000},
		{"a view behind the anchor, departures", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() }, func(v *progressView) { v.progress.Departed = 2 }, 5000},
		{"a view behind an anchor near the front", nil, func(tk *Ticket) { tk.Anchor.Position, tk.Anchor.At = 90, now.Unix() }, func(v *progressView) { v.progress.Admitted = 99 }, 0},
		// The store, after a failover, anchored it with fewer admissions
		// than this view (read before) counted: nothing subtracted.
		{"an anchor minted after the view, behind it in admissions", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() }, nil, 5000},
		// An anchor older than the view yet ahead of it: the store lost
		// progress (a failover), even where no tick saw a repair
		// (mintedBy unset: this instance's first tick came after it).
		{"an older anchor ahead of the view", nil, nil, func(v *progressView) { v.progress.Admitted = 99 }, 0},
		{"an older anchor ahead of the view, departures", nil, nil, func(v *progressView) { v.progress.Departed = 2 }, 0},
		{"an anchor minted against progress a repair lost", nil, nil, func(v *progressView) { v.mintedBy = now.Unix() - 10 }, 0},
		{"an anchor minted after the repair", nil, nil, func(v *progressView) { v.mintedBy = now.Unix() - 11 }, 4700},
		{"a stale view", nil, nil, func(v *progressView) { v.at = now.Add(-4 * time.Second) }, 0},
		{"an old anchor", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() - 60 }, nil, 0},
		{"an anchor from the future", nil, func(tk *Ticket) { tk.Anchor.At = now.Unix() + 5 }, nil, 0},
		{"no anchor", nil, func(tk *Ticket) { tk.Anchor = Anchor{} }, nil, 0},
		{"pending ticket", nil, func(tk *Ticket) { tk.Pending = true }, nil, 0},
		{"admitted ticket", nil, func(tk *Ticket) { tk.Until = now.Unix() + 60 }, nil, 0},
		{"random room", func(r *Room) { r.Mode = ModeRandom }, nil, nil, 0},
		{"paused room", func(r *Room) { r.Mode = ModePaused }, nil, nil, 0},
		{"an open room that had a pre-queue", func(r *Room) {
			r.Schedule.PrequeueFrom, r.Schedule.OpensAt = now.Add(-2*time.Hour), now.Add(-time.Hour)
		}, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, tk, v := base, ticket, view
			if tt.room != nil {
				tt.room(&r)
			}
			if tt.tk != nil {
				tt.tk(&tk)
			}
			if tt.view != nil {
				tt.view(&v)
			}
			lr := newLiveRoom(r)
			lr.view.Store(&v)
			lim, ph, _ := lr.admission(now)
			d, _, ok := fromAnchor(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60)
			if got := map[bool]int64{true: d.Position, false: 0}[ok]; got != tt.want {
				t.Fatalf("got %v %+v, want position %d", ok, d, tt.want)
			}
			if ok && (d.State != StateWaiting || d.Ticket != 42 || !d.Placed || d.Line < d.Position) {
				t.Errorf("decision %+v", d)
			}
		})
	}
}

// An instance learns who left from each tick's Stats and forgets them
// after keep, evicting in place; when more left between two ticks than
// the list holds, or before its first look, it trusts no anchor minted
// before those leaves (its Departed below the store's then), and trusts
// at once every anchor minted since: no blind period.
func TestNextLeft(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	keep := time.Minute
	var a Progress // an anchor minted before any departure
	st := Stats{Epoch: 7, Left: 2}
	st.LeftTickets[0], st.LeftTickets[1] = 11, 12
	l := nextLeft(nil, Stats{Epoch: 7}, keep, now)
	l = nextLeft(l, st, keep, now)
	if !l.gone(11, a) || !l.gone(12, a) || l.gone(13, a) {
		t.Fatalf("first look: %+v", l)
	}
	if again := nextLeft(l, st, keep, now.Add(time.Second)); again != l || len(l.order) != 2 {
		t.Fatalf("a tick with nothing new: %+v", again)
	}
	st.Left, st.LeftTickets[2] = 3, 13
	l = nextLeft(l, st, keep, now.Add(30*time.Second))
	if !l.gone(13, a) || !l.gone(11, a) {
		t.Fatalf("a new leave: %+v", l)
	}
	later := now.Add(61 * time.Second)
	st = Stats{Epoch: 7, Left: 3} // the list moved on past them
	l = nextLeft(l, st, keep, later)
	if l.gone(11, a) || !l.gone(13, a) || len(l.order) != 1 || len(l.at) != 1 {
		t.Fatalf("after keep: %+v, want 11 and 12 evicted, 13 kept", l)
	}
	// 200 left within one tick: more than the list holds. Every anchor
	// minted before them asks the store (a copy of any of the 200 is among
	// them); one minted after them is trusted at once.
	st.Left = 3 + 200
	st.Abandoned = 5
	l = nextLeft(l, st, keep, later)
	before := Progress{Epoch: 7, Departed: 3 + 5 + 199}
	after := Progress{Epoch: 7, Departed: 3 + 5 + 200}
	if !l.gone(999, before) || l.gone(999, after) {
		t.Fatalf("missed leaves: %+v, want anchors before them distrusted, after them trusted", l)
	}
	l = nextLeft(l, st, keep, later.Add(keep/2))
	if !l.gone(999, before) || l.gone(999, after) {
		t.Fatalf("a tick later: %+v, want the same", l)
	}
	fresh := nextLeft(nil, Stats{Epoch: 8, Left: 100}, keep, later)
	if !fresh.gone(5, Progress{Epoch: 8, Departed: 99}) || fresh.gone(5, Progress{Epoch: 8, Departed: 100}) {
		t.Fatal("a first look at a room with more leaves than listed must distrust older anchors, and only those")
	}
}

// A tick that finds the store repaired (Stats.Repairs up) or its
// admissions gone back within one epoch (a failover rewound the room's
// Progress to the promoted replica's) distrusts every anchor minted until
// then; otherwise the last view's mark carries over. Worked example of
// what it prevents: an anchor at 117 with Admitted 500, answered 104 once
// the view read 513; after the failover the view reads 500 again and the
// same anchor would answer 117: a position that grew by the 13 admissions
// the store lost.
func TestNextMintedBy(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	before := Stats{Epoch: 7, AdmittedTotal: 513, Repairs: 2}
	last := &progressView{mintedBy: 42}
	tests := []struct {
		name  string
		last  *progressView
		st    Stats
		first bool
		want  int64
	}{
		{"nothing happened", last, Stats{Epoch: 7, AdmittedTotal: 520, Repairs: 2}, false, 42},
		{"no view yet", nil, Stats{Epoch: 7, AdmittedTotal: 520, Repairs: 2}, false, 0},
		{"a repair", last, Stats{Epoch: 7, AdmittedTotal: 520, Repairs: 3}, false, now.Unix()},
		{"admissions gone back", last, Stats{Epoch: 7, AdmittedTotal: 500, Repairs: 2}, false, now.Unix()},
		{"a new incarnation (its anchors never match)", last, Stats{Epoch: 8, Repairs: 0}, false, 42},
		{"the first look tells nothing", last, Stats{Epoch: 7, AdmittedTotal: 500, Repairs: 3}, true, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextMintedBy(tt.last, before, tt.st, tt.first, now); got != tt.want {
				t.Errorf("mintedBy %d, want %d", got, tt.want)
			}
		})
	}
}

// One holder polling far more than maxTouches times a tick is one mark:
// every other visitor's poll still finds room in the batch (else it would
// ask the store), and a failed Touch's marks come back once each.
func TestTouchesOneMarkATicket(t *testing.T) {
	var m touches
	sprayer := Visitor{ID: "sprayer", Ticket: 7}
	for range maxTouches + 10 {
		if !m.add(sprayer) {
			t.Fatal("the sprayer's own poll found the batch full")
		}
	}
	for i := range 1000 {
		if !m.add(Visitor{ID: "v", Ticket: int64(100 + i)}) {
			t.Fatalf("visitor %d of 1000 after a sprayer: batch full", i)
		}
	}
	vs := m.take()
	if len(vs) != 1001 || vs[0].Ticket != 7 {
		t.Fatalf("%d marks (first %+v), want 1001, the sprayer's once", len(vs), vs[0])
	}
	m.add(sprayer)
	m.putBack(vs)
	if got := m.take(); len(got) != 1001 {
		t.Fatalf("%d marks after a put back, want 1001", len(got))
	}
	for range maxTouches {
		m.add(Visitor{Ticket: int64(1_000_000 + len(m.vs))})
	}
	if m.add(Visitor{Ticket: 5}) {
		t.Error("a full batch of distinct tickets took one more")
	}
}

// fromHead answers from the view's head, never above the ticket's anchor
// less the admissions since; a view behind the anchor shows the anchor's
// place and keeps the ticket's anchor; an anchor minted before a repair
// this instance saw, or a view older than headMaxAge, asks the store. An
// answer that moved the visitor is anchored at the view's read second, not
// now, so one renewed from a view read before a repair is rejected by an
// instance that saw the repair.
func TestFromHead(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	base := Room{Name: "r", Mode: ModeFIFO, Tick: time.Second, Limits: Limits{MaxActive: 10, AbandonAfter: 2 * time.Minute}}
	head := map[int64]int64{42: 47}
	anchor := Anchor{Position: 50, At: now.Unix() - 3, Progress: Progress{Epoch: 7, Admitted: 100, Departed: 3}}
	ticket := Ticket{Number: 42, Sealed: now.Unix() - 3, Anchor: anchor}
	viewAt := now.Add(-800 * time.Millisecond) // read in the second before now's
	view := progressView{progress: Progress{Epoch: 7, Admitted: 103, Departed: 3}, waiting: 500, at: viewAt, head: head}
	moved := func(pos int64, p Progress) Anchor { return Anchor{Position: pos, At: viewAt.Unix(), Progress: p} }
	tests := []struct {
		name   string
		tk     func(*Ticket)
		view   func(*progressView)
		want   int64  // 0: ask the store
		anchor Anchor // the anchor the answer's ticket carries
	}{
		{"the head's place", nil, nil, 47, moved(47, view.progress)},
		{"no anchor", func(tk *Ticket) { tk.Anchor = Anchor{} }, nil, 47, moved(47, view.progress)},
		// Another instance told it 40 after 10 admissions; this view saw 3.
		{"an anchor below the head's place", func(tk *Ticket) { tk.Anchor.Position = 43 }, nil, 40, moved(40, view.progress)},
		{"a view behind the anchor", func(tk *Ticket) { tk.Anchor.Position, tk.Anchor.At = 40, now.Unix(); tk.Anchor.Progress.Admitted = 110 }, nil, 40, Anchor{}},
		{"a view behind the anchor, same second", func(tk *Ticket) {
			tk.Anchor.Position, tk.Anchor.At = 40, viewAt.Unix()
			tk.Anchor.Progress.Admitted = 110
		}, nil, 40, Anchor{}},
		{"a view behind the anchor's departures", func(tk *Ticket) { tk.Anchor.Position, tk.Anchor.At = 44, now.Unix(); tk.Anchor.Progress.Departed = 4 }, func(v *progressView) { v.progress.Admitted = 100 }, 44, Anchor{}},
		// The store, after a failover, anchored it at 40 with fewer
		// admissions than this view (read before) counted: 40, not 37.
		{"an anchor minted after the view, behind it in admissions", func(tk *Ticket) { tk.Anchor.Position, tk.Anchor.At = 40, now.Unix() }, nil, 40, Anchor{}},
		// Older than the view yet ahead of it: progress the store lost.
		{"an older anchor ahead of the view", func(tk *Ticket) { tk.Anchor.Position = 40; tk.Anchor.Progress.Admitted = 110 }, nil, 0, Anchor{}},
		{"an older anchor ahead of the view's departures", func(tk *Ticket) { tk.Anchor.Position = 44; tk.Anchor.Progress.Departed = 4 }, func(v *progressView) { v.progress.Admitted = 100 }, 0, Anchor{}},
		{"more admitted than the anchor had ahead", func(tk *Ticket) { tk.Anchor.Position = 3 }, nil, 0, Anchor{}},
		{"unmoved", func(tk *Ticket) { tk.Anchor.Position, tk.Anchor.Progress = 47, view.progress }, nil, 47, Anchor{}},
		{"unmoved, the anchor halfway to every", func(tk *Ticket) {
			tk.Anchor.Position, tk.Anchor.Progress, tk.Anchor.At = 47, view.progress, now.Unix()-30
		}, nil, 47, moved(47, view.progress)},
		{"an anchor minted before a repair this instance saw", nil, func(v *progressView) { v.mintedBy = now.Unix() - 3 }, 0, Anchor{}},
		{"another incarnation", nil, func(v *progressView) { v.progress.Epoch = 8 }, 0, Anchor{}},
		{"not among the head", func(tk *Ticket) { tk.Number = 43 }, nil, 0, Anchor{}},
		{"no head", nil, func(v *progressView) { v.head = nil }, 0, Anchor{}},
		{"a view past headMaxAge", nil, func(v *progressView) { v.at = now.Add(-headMaxAge(time.Second) - time.Millisecond) }, 0, Anchor{}},
		{"an old seal", func(tk *Ticket) { tk.Sealed = now.Unix() - 60 }, nil, 0, Anchor{}},
		{"admitted ticket", func(tk *Ticket) { tk.Until = now.Unix() + 60 }, nil, 0, Anchor{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, v := ticket, view
			if tt.tk != nil {
				tt.tk(&tk)
			}
			if tt.view != nil {
				tt.view(&v)
			}
			lr := newLiveRoom(base)
			lr.view.Store(&v)
			lim, ph, _ := lr.admission(now)
			d, a, ok := fromHead(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60)
			if got := map[bool]int64{true: d.Position, false: 0}[ok]; got != tt.want {
				t.Fatalf("got %v %+v, want position %d", ok, d, tt.want)
			}
			if !ok {
				return
			}
			want := tt.anchor
			if want == (Anchor{}) {
				want = tk.Anchor // the ticket as it is
			}
			if a != want {
				t.Errorf("anchor %+v, want %+v", a, want)
			}
			if d.State != StateWaiting || d.Ticket != tk.Number || !d.Placed || d.Line < d.Position {
				t.Errorf("decision %+v", d)
			}
		})
	}
}

// A waiting ticket is sealed again halfway to resealAfter (the age at
// which a gate's own answers would have to ask the store); an admitted one
// only at resealAfter, so admitted visitors cost no extra encoding.
func TestReissueHalfwayOnlyWhileWaiting(t *testing.T) {
	tickets, err := NewTickets(Cookie{Name: "waitroom", MaxAge: time.Hour}, []KeyPair{GenerateKeyPair()})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Rooms: NewRooms(RoomsOptions{}), Tickets: tickets})
	now := time.Now()
	every := g.resealAfter("concert") // half the cookie's hour: no such room
	v := Visitor{ID: NewVisitorID(), Ticket: 5, Placed: true}
	for _, tt := range []struct {
		name  string
		d     Decision
		tk    Ticket
		fresh bool
	}{
		{"admitted, past half", Decision{State: StateAdmitted, Ticket: 5, Placed: true, Until: now.Add(time.Minute)},
			Ticket{Until: now.Add(time.Minute).Unix(), Entered: now.Unix() - 10, Sealed: now.Unix() - every/2 - 1}, false},
		{"admitted, at resealAfter", Decision{State: StateAdmitted, Ticket: 5, Placed: true, Until: now.Add(time.Minute)},
			Ticket{Until: now.Add(time.Minute).Unix(), Entered: now.Unix() - 10, Sealed: now.Unix() - every}, true},
		{"waiting, past half", Decision{State: StateWaiting, Ticket: 5, Placed: true, Position: 3},
			Ticket{Start: 3, Sealed: now.Unix() - every/2 - 1}, true},
		{"waiting, before half", Decision{State: StateWaiting, Ticket: 5, Placed: true, Position: 3},
			Ticket{Start: 3, Sealed: now.Unix() - every/2 + 5}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tk := tt.tk
			tk.Version, tk.Visitor, tk.Room, tk.Number = ticketVersion, v.ID, "concert", 5
			p := Presented{Valid: true, Cookie: true, Ticket: tk, Raw: "sent"}
			raw, fresh := g.reissueAnchored(httptest.NewRecorder(), "concert", v, p, tt.d, Anchor{}, now)
			if fresh != tt.fresh || (raw == "sent") == fresh {
				t.Fatalf("fresh %v (%q), want %v", fresh, raw, tt.fresh)
			}
		})
	}
}

// A failover near the front never grows a position. The promoted replica
// lost admissions gateway G2's last view counted (110 there, 100 on the
// new master); another gateway's tick saw the repair, and the store
// anchored the visitor at 40 with 100 admitted. A poll that lands on G2
// before G2 ticks must not show 40 less the 10 admissions the store lost
// (30, sealed with G2's progress; the store says 38 once G2's tick
// rejects that anchor): it shows 40 and keeps the store's anchor, and
// after G2's tick the store answers.
func TestFromHeadFailoverNeverGrows(t *testing.T) {
	t0 := time.Unix(1_800_000_100, 0)
	base := Room{Name: "r", Mode: ModeFIFO, Tick: time.Second, Limits: Limits{MaxActive: 1000, AbandonAfter: 2 * time.Minute}}
	lr := newLiveRoom(base)
	old := progressView{progress: Progress{Epoch: 7, Admitted: 110}, waiting: 500, at: t0.Add(500 * time.Millisecond),
		head: map[int64]int64{42: 40}}
	lr.view.Store(&old)
	stored := t0.Add(1200 * time.Millisecond)
	tk := Ticket{Number: 42, Sealed: stored.Unix(),
		Anchor: Anchor{Position: 40, At: stored.Unix(), Progress: Progress{Epoch: 7, Admitted: 100}}}
	lim, ph, _ := lr.admission(stored)
	now := t0.Add(1400 * time.Millisecond)
	d, a, ok := fromHead(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60)
	if !ok || d.Position != 40 || a != tk.Anchor {
		t.Fatalf("G2's old view after the store said 40: ok=%v position %d anchor %+v, want 40 and the store's anchor", ok, d.Position, a)
	}
	tk.Anchor = a
	// G2 ticks on the new master and sees the repair.
	nv := progressView{progress: Progress{Epoch: 7, Admitted: 102}, waiting: 500, at: t0.Add(1500 * time.Millisecond),
		head: map[int64]int64{42: 38}, mintedBy: t0.Unix() + 1}
	lr.view.Store(&nv)
	if d, _, ok := fromHead(lr, Presented{Valid: true, Ticket: tk}, lim, ph, t0.Add(1700*time.Millisecond), 60); ok {
		t.Fatalf("after G2's tick saw the repair: %d from the view, want the store asked", d.Position)
	}
	// The same far back: the anchor's place, not 5000 less 10.
	far := progressView{progress: Progress{Epoch: 7, Admitted: 110}, waiting: 6000, at: t0.Add(500 * time.Millisecond)}
	lr.view.Store(&far)
	tk.Anchor.Position = 5000
	if d, a, ok := fromAnchor(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60); !ok || d.Position != 5000 || a != tk.Anchor {
		t.Fatalf("far back: ok=%v position %d anchor %+v, want 5000 and the store's anchor", ok, d.Position, a)
	}
}

// An instance whose first tick of the room came after a failover saw no
// repair (mintedBy unset); a ticket anchored before it, ahead of the
// promoted replica's progress, asks the store at its first poll, not
// after the anchor ages out showing its place frozen.
func TestFromAnchorFirstTickAfterFailover(t *testing.T) {
	now := time.Unix(1_800_000_100, 0)
	base := Room{Name: "r", Mode: ModeFIFO, Tick: time.Second, Limits: Limits{MaxActive: 1000, AbandonAfter: 2 * time.Minute}}
	lr := newLiveRoom(base)
	lim, ph, _ := lr.admission(now)
	tk := Ticket{Number: 42, Sealed: now.Unix() - 5,
		Anchor: Anchor{Position: 5000, At: now.Unix() - 5, Progress: Progress{Epoch: 7, Admitted: 110}}}
	var first *progressView
	st := Stats{Epoch: 7, AdmittedTotal: 100}
	v := progressView{progress: st.Progress(), waiting: 6000, at: now.Add(-100 * time.Millisecond),
		mintedBy: nextMintedBy(first, Stats{}, st, true, now), head: map[int64]int64{43: 1}}
	if v.mintedBy != 0 {
		t.Fatalf("mintedBy %d at a first tick, want unset", v.mintedBy)
	}
	lr.view.Store(&v)
	if d, _, ok := fromAnchor(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60); ok {
		t.Fatalf("far back: %d from the view, want the store asked", d.Position)
	}
	tk.Anchor.Position, v.head = 40, map[int64]int64{42: 50}
	if d, _, ok := fromHead(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60); ok {
		t.Fatalf("near the front: %d from the view, want the store asked", d.Position)
	}
}
