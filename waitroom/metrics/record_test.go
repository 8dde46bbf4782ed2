package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/metrics"
)

func TestMetrics_UpstreamClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		class  string
	}{
		{101, "1xx"}, {200, "2xx"}, {304, "3xx"}, {404, "4xx"},
		{499, "4xx"},               // the client went away: what it got, not the upstream's fault
		{502, "5xx"}, {504, "5xx"}, // written by the proxy, counted like the upstream's own
		{0, "error"}, {99, "error"}, {600, "error"}, {-1, "error"},
	} {
		t.Run(http.StatusText(tc.status)+"_"+tc.class, func(t *testing.T) {
			t.Parallel()
			m := metrics.New()
			m.Upstream("shop", tc.status, time.Millisecond)
			s := scrapeOf(t, m.Handler())
			for _, f := range s["waitroom_upstream_duration_seconds"].GetMetric() {
				var class string
				for _, lp := range f.GetLabel() {
					if lp.GetName() == "class" {
						class = lp.GetValue()
					}
				}
				want := uint64(0)
				if class == tc.class {
					want = 1
				}
				if got := f.GetHistogram().GetSampleCount(); got != want {
					t.Errorf("status %d: class %q has %d samples, want %d", tc.status, class, got, want)
				}
			}
		})
	}
}

// TestMetrics_UnknownLabelValues: a value outside a closed set shows up under
// its own name (a typo must be visible), except ticket reasons, which fold
// into "other".
func TestMetrics_UnknownLabelValues(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.Request(room, "teleported")
	m.Released(room, "magic")
	m.Reload("sideways")
	m.StoreOp("flush", time.Millisecond, nil)
	m.TicketRejected("gremlins")

	s := scrapeOf(t, m.Handler())
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"waitroom_requests_total", []string{"room", room, "decision", "teleported"}},
		{"waitroom_releases_total", []string{"room", room, "how", "magic"}},
		{"waitroom_config_reloads_total", []string{"result", "sideways"}},
		{"waitroom_ticket_rejections_total", []string{"reason", "other"}},
	} {
		if got := s.counter(t, c.name, c.labels...); got != 1 {
			t.Errorf("%s%v = %v, want 1", c.name, c.labels, got)
		}
	}
	if n := s.histogram(t, "waitroom_store_duration_seconds", "op", "flush", "result", "ok").GetSampleCount(); n != 1 {
		t.Errorf("store_duration{op=flush}: count %d, want 1", n)
	}
	if s.find("waitroom_ticket_rejections_total", "reason", "gremlins") != nil {
		t.Error(`ticket reason "gremlins" got a series of its own`)
	}
}

// TestMetrics_ForgetThenReturn: a room removed and added back by two
// reloads starts its counters over, which rate() reads as a reset.
func TestMetrics_ForgetThenReturn(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.Request(room, "queued")
	m.Request(room, "queued")
	m.Tick(room, waitroom.Admitted{Admitted: 4})
	m.Room(room, waitroom.Stats{Waiting: 9})
	m.Request("other", "queued")

	m.Forget(room)
	if left := scrapeOf(t, m.Handler()).roomSeries(room); len(left) > 0 {
		t.Fatalf("series left after Forget: %v", left)
	}
	m.Request(room, "queued")
	s := scrapeOf(t, m.Handler())
	if got := s.counter(t, "waitroom_requests_total", "room", room, "decision", "queued"); got != 1 {
		t.Errorf("requests after return = %v, want 1", got)
	}
	if got := s.counter(t, "waitroom_requests_total", "room", "other", "decision", "queued"); got != 1 {
		t.Errorf("another room's requests = %v, want 1 (untouched)", got)
	}
	if s.find("waitroom_queue_length", "room", room) != nil {
		t.Error("queue gauge back before the store said anything")
	}
}

// TestMetrics_NilRecordsNothing: a component given no Metrics runs as usual.
func TestMetrics_NilRecordsNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.Request(room, "queued")
	m.TicketRejected("invalid")
	m.Upstream("shop", 200, time.Millisecond)
	m.StoreOp("decide", time.Millisecond, nil)
	m.Tick(room, waitroom.Admitted{Admitted: 1})
	m.Admitted(room)
	m.Released(room, "leave")
	m.Room(room, waitroom.Stats{})
	m.Forget(room)
	m.Reload("ok")
	m.Outage()
	m.StoreUp(true)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Handler: status %d, want 404", rec.Code)
	}
}

// TestMetrics_ConcurrentUse records from many goroutines while rooms come
// and go and scrapes run; under -race this is the test that matters, and no
// increment of a room that stays may be lost.
func TestMetrics_ConcurrentUse(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 500
	m := metrics.New()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range each {
				m.Request(room, "queued")
				m.Upstream("shop", 200+i%4*100, time.Millisecond)
				m.Tick(room, waitroom.Admitted{Admitted: 1})
				m.Request("flaky", "admitted")
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			m.Room("flaky", waitroom.Stats{Waiting: 1})
			m.Forget("flaky")
		}
	})
	wg.Go(func() {
		for range 3 {
			scrapeOf(t, m.Handler())
		}
	})
	wg.Wait()

	s := scrapeOf(t, m.Handler())
	if got := s.counter(t, "waitroom_requests_total", "room", room, "decision", "queued"); got != workers*each {
		t.Errorf("requests = %v, want %d", got, workers*each)
	}
	if got := s.counter(t, "waitroom_admissions_total", "room", room); got != workers*each {
		t.Errorf("admissions = %v, want %d", got, workers*each)
	}
}
