package metrics_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
)

const room = "concert"

// lim lets three in at once; the token bucket never limits the scenario.
var lim = waitroom.Limits{
	MaxActive:    3,
	AdmitRate:    waitroom.Rate{N: 100, Per: time.Second},
	AdmitBurst:   100,
	SessionTTL:   10 * time.Minute,
	AbandonAfter: time.Minute,
}

// tally is what the scenario did, counted as it went; the scrape must say
// the same.
type tally struct {
	requests   map[string]int // by decision, in room
	admissions int
	abandoned  int
	expired    int
	ops        map[string]int // by "op/result"
}

func (tl *tally) tick(m *metrics.Metrics, a waitroom.Admitted) {
	m.Tick(room, a)
	tl.admissions += a.Admitted
	tl.abandoned += a.Abandoned
	tl.expired += a.Expired
}

// TestMetrics_ScenarioMatchesScrape plays a morning at the gate through a
// real memstore behind the timing wrapper, recording what the application
// would, then checks every series of the scrape against what was done.
func TestMetrics_ScenarioMatchesScrape(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := metrics.New()
	clk := newClock()
	st := metrics.Store(memstore.New(memstore.WithClock(clk.now)), m)
	t.Cleanup(func() { _ = st.Close() })
	tl := &tally{requests: map[string]int{}, ops: map[string]int{}}
	m.StoreUp(true)

	ids := arrive(t, st, m, tl)
	m.Request("", "bypass") // a health check on a route without a room
	m.Request("", "bypass")

	// One leaves; releasing somebody unknown is an answer, not a failure.
	if err := st.Release(ctx, room, ids[0]); err != nil {
		t.Fatalf("Release: %v", err)
	}
	m.Released(room, "leave")
	if err := st.Release(ctx, room, "ghost"); !errors.Is(err, waitroom.ErrNotFound) {
		t.Fatalf("Release(ghost) = %v, want ErrNotFound through the wrapper", err)
	}
	tl.ops["release/ok"] += 2

	// A tick fills the freed slot.
	a, err := st.Admit(ctx, room, lim)
	if err != nil || a.Admitted != 1 {
		t.Fatalf("Admit = %+v, %v; want 1 admitted", a, err)
	}
	tl.ops["admit/ok"]++
	tl.tick(m, a)

	adminSteps(t, st, m, tl, ids)

	// The admitter's snapshot sets the gauges: two inside, one waiting.
	snap, err := st.Stats(ctx, room)
	if err != nil || snap.Waiting == 0 || snap.Active == 0 || snap.AdmittedLastMinute == 0 {
		t.Fatalf("Stats = %+v, %v; scenario assumes someone waiting and inside", snap, err)
	}
	tl.ops["stats/ok"]++
	m.Room(room, snap)

	// Two minutes on, the last one in line stopped polling and the sessions
	// from the tick and the admin admit, never used, ran out.
	clk.advance(2 * time.Minute)
	if a, err = st.Admit(ctx, room, lim); err != nil {
		t.Fatalf("Admit: %v", err)
	}
	tl.ops["admit/ok"]++
	tl.tick(m, a)
	if tl.abandoned == 0 || tl.expired == 0 {
		t.Fatalf("scenario assumes an abandonment and an expiry, got %+v", tl)
	}

	final, err := st.Stats(ctx, room)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	tl.ops["stats/ok"]++

	// A room a reload removed leaves nothing behind.
	m.Request("expo", "queued")
	m.Room("expo", waitroom.Stats{Waiting: 7, Active: 2})
	m.Forget("expo")

	troubleSteps(t, st, m, tl)
	edgeSteps(m)

	s := scrapeOf(t, m.Handler())
	checkRooms(t, s, tl, snap, final)
	checkEdges(t, s)
	checkStoreOps(t, s, tl)
}

// arrive brings six visitors to the gate: three go straight in, three wait.
func arrive(t testing.TB, st waitroom.Store, m *metrics.Metrics, tl *tally) []string {
	t.Helper()
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = waitroom.NewVisitorID()
		v := waitroom.Visitor{ID: ids[i], Issued: time.Now()}
		d, err := st.Decide(t.Context(), room, lim, v, waitroom.JoinTicket)
		if err != nil {
			t.Fatalf("Decide %d: %v", i, err)
		}
		tl.ops["decide/ok"]++
		if d.State == waitroom.StateWaiting && !d.Placed { // its page's first poll takes the place
			v.Ticket = d.Ticket
			if d, err = st.Decide(t.Context(), room, lim, v, waitroom.JoinNone); err != nil {
				t.Fatalf("Decide %d: %v", i, err)
			}
			tl.ops["decide/ok"]++
		}
		switch d.State {
		case waitroom.StateAdmitted:
			m.Request(room, "admitted")
			tl.requests["admitted"]++
			m.Admitted(room)
			tl.admissions++
		case waitroom.StateWaiting:
			m.Request(room, "queued")
			tl.requests["queued"]++
		}
	}
	if tl.requests["admitted"] != 3 || tl.requests["queued"] != 3 {
		t.Fatalf("scenario assumes 3 admitted and 3 queued, got %v", tl.requests)
	}
	return ids
}

// adminSteps does what the admin API would: an override set, read and
// cleared, a release, an admit of one, and a release the upstream asked for.
func adminSteps(t testing.TB, st waitroom.Store, m *metrics.Metrics, tl *tally, ids []string) {
	t.Helper()
	ctx := t.Context()
	if err := st.SetOverride(ctx, room, waitroom.Override{Mode: waitroom.ModePaused}); err != nil {
		t.Fatalf("SetOverride: %v", err)
	}
	if o, err := st.Override(ctx, room); err != nil || o.Mode != waitroom.ModePaused {
		t.Fatalf("Override = %+v, %v; want paused", o, err)
	}
	if err := st.ClearOverride(ctx, room); err != nil {
		t.Fatalf("ClearOverride: %v", err)
	}
	tl.ops["set_override/ok"]++
	tl.ops["override/ok"]++
	tl.ops["clear_override/ok"]++

	if err := st.Release(ctx, room, ids[1]); err != nil {
		t.Fatalf("Release: %v", err)
	}
	m.Released(room, "admin")
	a, err := st.AdmitN(ctx, room, lim, 1)
	if err != nil || a.Admitted != 1 {
		t.Fatalf("AdmitN = %+v, %v; want 1 admitted", a, err)
	}
	tl.tick(m, a)
	if err := st.Release(ctx, room, ids[2]); err != nil {
		t.Fatalf("Release: %v", err)
	}
	m.Released(room, "upstream")
	tl.ops["release/ok"] += 2
	tl.ops["admit_n/ok"]++
}

// troubleSteps: a visitor gone mid-call, a ping, and the store going away.
func troubleSteps(t testing.TB, st waitroom.Store, m *metrics.Metrics, tl *tally) {
	t.Helper()
	ctx := t.Context()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Decide(gone, room, lim, waitroom.Visitor{ID: waitroom.NewVisitorID()}, waitroom.JoinTicket); !errors.Is(err, context.Canceled) {
		t.Fatalf("Decide(canceled) = %v, want context.Canceled through the wrapper", err)
	}
	tl.ops["decide/canceled"]++
	m.Request(room, "error")
	tl.requests["error"]++

	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	tl.ops["ping/ok"]++

	down := metrics.Store(memstore.New(), m)
	_ = down.Close()
	if err := down.Ping(ctx); !errors.Is(err, waitroom.ErrClosed) {
		t.Fatalf("Ping(closed) = %v, want ErrClosed through the wrapper", err)
	}
	tl.ops["ping/error"]++
	m.Outage()
	m.StoreUp(false)
}

// edgeSteps records what happens at the edges: tickets, upstreams, reloads.
func edgeSteps(m *metrics.Metrics) {
	m.TicketRejected("invalid")
	m.TicketRejected("invalid")
	m.TicketRejected("expired")
	m.TicketRejected("made-up") // folds into other
	for range 3 {
		m.Upstream("shop", 200, 30*time.Millisecond)
	}
	m.Upstream("shop", 502, 2*time.Second)       // the proxy's own 502
	m.Upstream("shop", 499, 10*time.Millisecond) // client went away
	m.Upstream("api", 0, time.Millisecond)       // no status at all
	m.Reload("ok")
	m.Reload("error")
}

// checkRooms compares the room series with the tally, the gauges with the
// snapshot given to Room, and the admissions with the store's final total.
func checkRooms(t testing.TB, s scrape, tl *tally, snap, final waitroom.Stats) {
	t.Helper()
	for _, d := range []string{"admitted", "queued", "bypass", "error"} {
		if got := s.counter(t, "waitroom_requests_total", "room", room, "decision", d); got != float64(tl.requests[d]) {
			t.Errorf("requests{decision=%q} = %v, want %d", d, got, tl.requests[d])
		}
	}
	if got := s.counter(t, "waitroom_requests_total", "room", "-", "decision", "bypass"); got != 2 {
		t.Errorf(`requests{room="-",decision="bypass"} = %v, want 2`, got)
	}
	for name, want := range map[string]int{
		"waitroom_admissions_total":   tl.admissions,
		"waitroom_abandonments_total": tl.abandoned,
		"waitroom_expiries_total":     tl.expired,
	} {
		if got := s.counter(t, name, "room", room); got != float64(want) {
			t.Errorf("%s = %v, want %d", name, got, want)
		}
	}
	// One instance did everything, so its count is the store's total.
	if got := s.counter(t, "waitroom_admissions_total", "room", room); got != float64(final.AdmittedTotal) {
		t.Errorf("admissions = %v, store's AdmittedTotal = %d", got, final.AdmittedTotal)
	}
	for _, how := range []string{"upstream", "leave", "admin"} {
		if got := s.counter(t, "waitroom_releases_total", "room", room, "how", how); got != 1 {
			t.Errorf("releases{how=%q} = %v, want 1", how, got)
		}
	}
	for name, want := range map[string]int64{
		"waitroom_queue_length":         snap.Waiting,
		"waitroom_active_sessions":      snap.Active,
		"waitroom_admitted_last_minute": snap.AdmittedLastMinute,
	} {
		if got := s.gauge(t, name, "room", room); got != float64(want) {
			t.Errorf("%s = %v, want %d", name, got, want)
		}
	}
	if left := s.roomSeries("expo"); len(left) > 0 {
		t.Errorf("Forget left series of expo in %v", left)
	}
}

func checkEdges(t testing.TB, s scrape) {
	t.Helper()
	for reason, want := range map[string]float64{"invalid": 2, "expired": 1, "other": 1} {
		if got := s.counter(t, "waitroom_ticket_rejections_total", "reason", reason); got != want {
			t.Errorf("ticket_rejections{reason=%q} = %v, want %v", reason, got, want)
		}
	}
	const up = "waitroom_upstream_duration_seconds"
	ok := s.histogram(t, up, "upstream", "shop", "class", "2xx")
	if ok.GetSampleCount() != 3 || math.Abs(ok.GetSampleSum()-0.09) > 1e-9 {
		t.Errorf("upstream{shop,2xx}: count %d sum %v, want 3 and 0.09", ok.GetSampleCount(), ok.GetSampleSum())
	}
	if lo, hi := bucket(t, ok, .025), bucket(t, ok, .05); lo != 0 || hi != 3 {
		t.Errorf("upstream{shop,2xx}: le=0.025 %d, le=0.05 %d; want 0 and 3", lo, hi)
	}
	bad := s.histogram(t, up, "upstream", "shop", "class", "5xx")
	if bad.GetSampleCount() != 1 || bucket(t, bad, 1) != 0 || bucket(t, bad, 2.5) != 1 {
		t.Errorf("upstream{shop,5xx}: %v, want one sample between 1s and 2.5s", bad)
	}
	for _, c := range [][2]string{{"shop", "4xx"}, {"api", "error"}} {
		if n := s.histogram(t, up, "upstream", c[0], "class", c[1]).GetSampleCount(); n != 1 {
			t.Errorf("upstream{%s,%s}: count %d, want 1", c[0], c[1], n)
		}
	}
	for result, want := range map[string]float64{"ok": 1, "error": 1, "unchanged": 0} {
		if got := s.counter(t, "waitroom_config_reloads_total", "result", result); got != want {
			t.Errorf("config_reloads{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got := s.counter(t, "waitroom_store_outages_total"); got != 1 {
		t.Errorf("store_outages = %v, want 1", got)
	}
	if got := s.gauge(t, "waitroom_store_up"); got != 0 {
		t.Errorf("store_up = %v, want 0 after the outage", got)
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds", "promhttp_metric_handler_requests_total"} {
		if s[name] == nil {
			t.Errorf("%s missing: the runtime, process and handler collectors belong on the page", name)
		}
	}
}

// checkStoreOps compares every op and result, those that never happened
// included: they must be there with a count of 0.
func checkStoreOps(t testing.TB, s scrape, tl *tally) {
	t.Helper()
	ops := []string{"decide", "admit", "admit_n", "release", "stats", "ping", "set_override", "clear_override", "override", "shuffle",
		"socket", "allow", "use_room", "definitions_version", "load_definitions", "put_definition", "delete_definition", "touch",
		"reserve", "place"}
	for _, op := range ops {
		for _, result := range []string{"ok", "error", "canceled"} {
			h := s.histogram(t, "waitroom_store_duration_seconds", "op", op, "result", result)
			if want := tl.ops[op+"/"+result]; h.GetSampleCount() != uint64(want) {
				t.Errorf("store_duration{op=%q,result=%q}: count %d, want %d", op, result, h.GetSampleCount(), want)
			}
		}
	}
	if t.Failed() {
		t.Logf("scenario's store calls: %v", tl.ops)
	}
}
