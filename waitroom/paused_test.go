package waitroom_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// etaRecorder is a Responder that writes the state and whether the answer
// carries an estimate, the two facts the waiting page words.
type etaRecorder struct{ recorder }

func (etaRecorder) Status(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"state": a.State, "eta_known": a.ETAKnown, "stopped": a.Stopped})
}

// A room that lets nobody in (paused, or max_active 0 from the file or an
// override) gives its line no estimate and says it is stopped, however fast
// it let people in just before; the admin view's wait at the back goes
// too. A max_active of 0 keeps the state "waiting" (clients switch on it).
func TestAnswer_NoEstimateWhileNobodyIsAdmitted(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store := memstore.New(memstore.WithClock(clock))
	t.Cleanup(func() { _ = store.Close() })
	tickets, err := waitroom.NewTickets(waitroom.Cookie{Name: "waitroom", MaxAge: time.Hour}, []waitroom.KeyPair{waitroom.GenerateKeyPair()})
	if err != nil {
		t.Fatal(err)
	}
	room := waitroom.Room{Name: "concert", Tick: time.Second, StatusCode: 200, Refresh: 5 * time.Second, Mode: waitroom.ModeFIFO,
		Limits: waitroom.Limits{MaxActive: 2, SessionTTL: time.Hour, AbandonAfter: time.Hour}}
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}})
	gate := waitroom.NewGate(waitroom.GateOptions{Rooms: rooms, Tickets: tickets, Responder: etaRecorder{}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == waitroom.StatusPath {
			gate.Status(w, r)
			return
		}
		gate.Serve(w, r, "concert", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("site")) }))
	}))
	t.Cleanup(srv.Close)

	ask := func(path, cookie string) (map[string]any, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		for _, c := range resp.Cookies() {
			cookie = c.Name + "=" + c.Value
		}
		return m, cookie
	}
	for range 2 { // two go in at once: a measured rate
		ask("/events/1", "")
	}
	_, third := ask("/events/1", "")
	ask("/events/1", third) // back with its ticket: its place
	mu.Lock()
	now = now.Add(20 * time.Second) // measured long enough to mean something
	mu.Unlock()
	ctx := context.Background()
	status := func() map[string]any {
		t.Helper()
		if err := rooms.Refresh(ctx, "concert"); err != nil {
			t.Fatal(err)
		}
		m, _ := ask(waitroom.StatusPath+"?room=concert", third)
		return m
	}
	if m := status(); m["state"] != "waiting" || m["eta_known"] != true {
		t.Fatalf("a line that moves has an estimate: %v", m)
	}
	if info, _ := rooms.Info("concert"); !info.BackETAOK {
		t.Fatalf("the admin view's wait at the back: %+v", info)
	}
	if m := status(); m["stopped"] != false {
		t.Fatalf("a line that moves is not stopped: %v", m)
	}
	zero := 0
	for _, c := range []struct {
		o     waitroom.Override
		state string
	}{{waitroom.Override{MaxActive: &zero}, "waiting"}, {waitroom.Override{Mode: waitroom.ModePaused, By: "admin"}, "paused"}} {
		o := c.o
		if err := rooms.ClearOverride(ctx, "concert"); err != nil {
			t.Fatal(err)
		}
		if err := rooms.SetOverride(ctx, "concert", o); err != nil {
			t.Fatal(err)
		}
		if m := status(); m["state"] != c.state || m["eta_known"] != false || m["stopped"] != true {
			t.Fatalf("override %+v: the line is told %v, want %s, stopped, with no estimate", o, m, c.state)
		}
		if info, _ := rooms.Info("concert"); info.BackETAOK {
			t.Fatalf("override %+v: the admin view still estimates %v at the back", o, info.BackETA)
		}
	}
}

// The limits as set survive a pause: the admin view shows, and a client
// writing back what it read stores, the operator's max_active, not the 0
// the store is handed while nobody may go in.
func TestOverride_SetKeepsMaxActiveWhilePaused(t *testing.T) {
	t.Parallel()
	room := waitroom.Room{Name: "r", Mode: waitroom.ModeFIFO, Limits: waitroom.Limits{MaxActive: 300}}
	seven := 7
	for _, c := range []struct {
		o    waitroom.Override
		want int
	}{
		{waitroom.Override{Mode: waitroom.ModePaused}, 300},
		{waitroom.Override{Mode: waitroom.ModeReject}, 300},
		{waitroom.Override{Mode: waitroom.ModePassthrough}, 300},
		{waitroom.Override{Mode: waitroom.ModePaused, MaxActive: &seven}, 7},
	} {
		if got := c.o.Set(room).MaxActive; got != c.want {
			t.Errorf("%+v: set max_active %d, want %d", c.o, got, c.want)
		}
		if lim, mode := c.o.Apply(room); mode != waitroom.ModePassthrough && lim.MaxActive != 0 {
			t.Errorf("%+v: the store must still be handed 0, got %d", c.o, lim.MaxActive)
		}
	}
}
