package waitroom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// switchable is a real store that can be made unreachable, as a Redis
// outage would make it.
type switchable struct {
	waitroom.Store
	down atomic.Bool
}

func (s *switchable) Decide(ctx context.Context, room string, lim waitroom.Limits, v waitroom.Visitor, join waitroom.Join) (waitroom.Decision, error) {
	if s.down.Load() {
		return waitroom.Decision{}, fmt.Errorf("deciding: %w", waitroom.ErrUnavailable)
	}
	return s.Store.Decide(ctx, room, lim, v, join)
}

type gateFixture struct {
	gate     *waitroom.Gate
	rooms    *waitroom.Rooms
	tickets  *waitroom.Tickets
	store    *switchable
	logs     *observer.ObservedLogs
	outages  *outageCount
	upstream atomic.Int64
	srv      *httptest.Server
}

// recorder is the gate tests' Responder: it writes each answer as a small
// JSON of its own, so these tests read the gate's decisions and never
// depend on a template.
type recorder struct{}

type recorded struct {
	State    waitroom.AnswerState `json:"state"`
	Position int64                `json:"position"`
	Token    string               `json:"token,omitempty"`
}

func (recorder) write(w http.ResponseWriter, status int, a waitroom.Answer) {
	w.Header().Set(waitroom.StateHeader, string(a.State))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(recorded{State: a.State, Position: a.Decision.Position, Token: a.Token})
}

func (rc recorder) Waiting(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	rc.write(w, max(a.StatusCode, http.StatusOK), a)
}
func (rc recorder) Status(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	rc.write(w, http.StatusOK, a)
}
func (rc recorder) NotForwarded(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	rc.write(w, http.StatusServiceUnavailable, a)
}
func (rc recorder) Left(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	rc.write(w, http.StatusOK, a)
}
func (rc recorder) Refused(w http.ResponseWriter, _ *http.Request, a waitroom.Answer) {
	rc.write(w, http.StatusTooManyRequests, a)
}
func (recorder) Error(w http.ResponseWriter, _ *http.Request, status int) {
	http.Error(w, http.StatusText(status), status)
}

// outageCount is an Observer that counts store outages and hears nothing
// else.
type outageCount struct {
	n atomic.Int64
}

func (*outageCount) Request(string, waitroom.Outcome)   {}
func (*outageCount) TicketRejected(string)              {}
func (*outageCount) Admitted(string)                    {}
func (*outageCount) Released(string, string)            {}
func (*outageCount) Tick(string, waitroom.Admitted)     {}
func (*outageCount) Room(string, waitroom.Stats)        {}
func (*outageCount) Forget(string)                      {}
func (o *outageCount) Outage()                          { o.n.Add(1) }
func (*outageCount) StoreUp(bool)                       {}
func (*outageCount) JoinRefused(string, string)         {}
func (*outageCount) SessionRefused(string, string)      {}
func (*outageCount) Challenge(string, string)           {}
func (*outageCount) Restored(string, string)            {}
func (*outageCount) Failover()                          {}
func (*outageCount) TemplateRooms(string, int)          {}
func (*outageCount) Waited(string, time.Duration)       {}
func (*outageCount) SessionEnded(string, time.Duration) {}

func newGateFixture(t *testing.T, onError waitroom.OutagePolicy, maxActive int) *gateFixture {
	t.Helper()
	f := &gateFixture{store: &switchable{Store: memstore.New()}, outages: &outageCount{}}
	core, logs := observer.New(zapcore.InfoLevel)
	f.logs = logs
	tickets, err := waitroom.NewTickets(waitroom.Cookie{Name: "waitroom", MaxAge: time.Hour}, []waitroom.KeyPair{waitroom.GenerateKeyPair()})
	if err != nil {
		t.Fatal(err)
	}
	room := waitroom.Room{Name: "concert", Tick: time.Second, StatusCode: 200, Refresh: 5 * time.Second,
		Limits: waitroom.Limits{MaxActive: maxActive, SessionTTL: time.Minute, AbandonAfter: time.Minute}}
	f.tickets = tickets
	f.rooms = waitroom.NewRooms(waitroom.RoomsOptions{Store: f.store, Observer: f.outages, Log: zap.New(core)})
	f.rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}, OnOutage: onError})
	f.gate = waitroom.NewGate(waitroom.GateOptions{Rooms: f.rooms, Tickets: tickets, Responder: recorder{}, Log: zap.New(core)})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.upstream.Add(1)
		fmt.Fprint(w, "site")
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.gate.Serve(w, r, "concert", next)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// get sends a request with the given cookie header and returns status, body
// and the cookie the answer set, if any.
func (f *gateFixture) get(t *testing.T, method, cookie string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+"/events/1", nil)
	req.Header.Set("Accept", "application/json")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	set := ""
	for _, c := range resp.Cookies() {
		set = c.Name + "=" + c.Value
	}
	return resp.StatusCode, string(b), set
}

func state(body string) string {
	var v struct{ State string }
	_ = json.Unmarshal([]byte(body), &v)
	return v.State
}

func TestGate_StoreDownClosed(t *testing.T) {
	f := newGateFixture(t, waitroom.OutageClosed, 1)
	_, body, inside := f.get(t, http.MethodGet, "")
	if body != "site" || inside == "" {
		t.Fatalf("first visitor must go in: %q", body)
	}
	_, body, waiting := f.get(t, http.MethodGet, "")
	if state(body) != "waiting" {
		t.Fatalf("second visitor must wait: %q", body)
	}
	f.store.down.Store(true)
	for range 5 {
		if _, body, _ := f.get(t, http.MethodGet, inside); body != "site" {
			t.Fatalf("an admitted ticket must keep working while the store is down, got %q", body)
		}
	}
	if code, body, _ := f.get(t, http.MethodGet, ""); code != 200 || state(body) != "hold" {
		t.Fatalf("a new visitor must be asked to hold: %d %q", code, body)
	}
	if code, body, _ := f.get(t, http.MethodGet, waiting); state(body) != "hold" {
		t.Fatalf("a waiting visitor must be asked to hold: %d %q", code, body)
	}
	if code, _, _ := f.get(t, http.MethodPost, waiting); code != http.StatusServiceUnavailable {
		t.Fatalf("a waiting POST during an outage: %d", code)
	}
	if n := f.logs.FilterMessage("store unreachable; following store.on_error").Len(); n != 1 || f.outages.n.Load() != 1 {
		t.Fatalf("an outage must be logged and counted once, got %d lines, %d outages", n, f.outages.n.Load())
	}
	f.store.down.Store(false)
	if _, body, _ := f.get(t, http.MethodGet, waiting); state(body) != "waiting" {
		t.Fatalf("after the outage the waiting visitor keeps its place: %q", body)
	}
	if f.logs.FilterMessage("store reachable again").Len() != 1 || f.rooms.StoreDown() {
		t.Fatal("the end of the outage must be logged once")
	}
	if got := f.upstream.Load(); got != 6 {
		t.Fatalf("the site saw %d requests, want the 6 of the admitted visitor", got)
	}
}

func TestGate_StoreDownOpen(t *testing.T) {
	f := newGateFixture(t, waitroom.OutageOpen, 0)
	f.store.down.Store(true)
	if _, body, _ := f.get(t, http.MethodGet, ""); body != "site" {
		t.Fatalf("on_error: open must let a new visitor through, got %q", body)
	}
}

func TestGate_PreflightTakesNoTicket(t *testing.T) {
	f := newGateFixture(t, waitroom.OutageClosed, 0)
	req, _ := http.NewRequest(http.MethodOptions, f.srv.URL+"/events/1", nil)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 0 || f.upstream.Load() != 1 {
		t.Fatalf("a preflight must pass without a ticket: cookies %v", resp.Cookies())
	}
	st, _ := f.store.Stats(context.Background(), "concert")
	if st.Joined != 0 {
		t.Fatalf("a preflight joined the line: %+v", st)
	}
	// Without Origin it is no browser's preflight: a waiting visitor's
	// OPTIONS is not forwarded.
	req.Header.Del("Origin")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || f.upstream.Load() != 1 {
		t.Fatalf("OPTIONS without Origin from a new visitor in a full room: %d, upstream saw %d", resp.StatusCode, f.upstream.Load())
	}
}

// A browser's ticket stays in its HttpOnly cookie: neither the JSON nor a
// header hands it to page scripts. An app without cookies gets it.
func TestGate_TokenOnlyForCookielessClients(t *testing.T) {
	f := newGateFixture(t, waitroom.OutageClosed, 0)
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/events/1", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Token string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if body.Token == "" || resp.Header.Get(waitroom.TokenHeader) != body.Token {
		t.Fatalf("an app client must get its token: body %q header %q", body.Token, resp.Header.Get(waitroom.TokenHeader))
	}
	_, b, _ := f.get(t, http.MethodGet, "waitroom_concert="+body.Token)
	if strings.Contains(b, "token") {
		t.Fatalf("a browser's answer shows the token: %s", b)
	}
}

// A ticket whose admission ran out belongs to a finished session: after the
// store lost its data it buys a place at the back, not the old one. A
// ticket still waiting gets its old place back.
func TestGate_FinishedSessionsDoNotRetakePlaces(t *testing.T) {
	f := newGateFixture(t, waitroom.OutageClosed, 0)
	for range 2 { // two visitors come back with their tickets and wait
		_, _, cookie := f.get(t, http.MethodGet, "")
		f.get(t, http.MethodGet, cookie)
	}
	old := waitroom.Ticket{Visitor: waitroom.NewVisitorID(), Room: "concert", Number: 1, Issued: 1}
	served := old
	served.Visitor, served.Until = waitroom.NewVisitorID(), time.Now().Add(-time.Minute).Unix()
	cases := []struct {
		tk   waitroom.Ticket
		want int
	}{{served, 3}, {old, 1}}
	for _, c := range cases {
		v, err := f.tickets.Encode(c.tk)
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := f.get(t, http.MethodGet, "waitroom_concert="+v)
		var got struct{ Position int }
		_ = json.Unmarshal([]byte(body), &got)
		if got.Position != c.want {
			t.Errorf("ticket %+v: position %d, want %d", c.tk, got.Position, c.want)
		}
	}
}
