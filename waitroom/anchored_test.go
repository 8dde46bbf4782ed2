package waitroom

import (
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
		{"a view behind the anchor", nil, nil, func(v *progressView) { v.progress.Admitted = 99 }, 0},
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
			d, ok := fromAnchor(lr, Presented{Valid: true, Ticket: tk}, lim, ph, now, 60)
			if got := map[bool]int64{true: d.Position, false: 0}[ok]; got != tt.want {
				t.Fatalf("got %v %+v, want position %d", ok, d, tt.want)
			}
			if ok && (d.State != StateWaiting || d.Ticket != 42 || !d.Placed || d.Line != 6000) {
				t.Errorf("decision %+v", d)
			}
		})
	}
}
