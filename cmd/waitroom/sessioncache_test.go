package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// decideCalls is how many Decide calls the gateway made to its store, from
// its own /metrics.
func decideCalls(t *testing.T, app *App) uint64 {
	t.Helper()
	_, _, text := newAdmin(t, app).do("GET", "/metrics", "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	var n uint64
	for _, m := range families["waitroom_store_duration_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "op" && lp.GetValue() == "decide" {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

// A visitor inside loading a page and its assets costs the store one call
// per session_cache interval, not one per request; with the cache off,
// one per request.
func TestSessionCache_BurstCostsOneStoreCall(t *testing.T) {
	for _, tt := range []struct {
		cache     string
		maxDecide uint64
	}{{"10s", 1}, {"0s", 50}} {
		t.Run(tt.cache, func(t *testing.T) {
			up, srv := newUpstream(t)
			app, base := startGateway(t, gwConfig(srv.URL, twoInside)+"store: { session_cache: "+tt.cache+" }\n")
			v := newVisitor(t, base)
			v.get("/events/1") // in at once: the room is empty
			before := decideCalls(t, app)
			for i := range 50 {
				if r := v.get(fmt.Sprintf("/events/asset%d", i)); r.body != fmt.Sprintf("site:/events/asset%d", i) {
					t.Fatalf("request %d: %d %q", i, r.status, r.body)
				}
			}
			if got := decideCalls(t, app) - before; got > tt.maxDecide || (tt.maxDecide == 50 && got != 50) {
				t.Errorf("50 requests inside made %d store calls, want at most %d", got, tt.maxDecide)
			}
			if up.count() != 51 {
				t.Errorf("the site saw %d requests, want 51", up.count())
			}
		})
	}
}

// A release through one instance takes effect there at once, and on
// another instance, which may have the visitor in its cache, within
// session_cache.
func TestRedis_ReleaseElsewhereWithinSessionCache(t *testing.T) {
	const cache = 400 * time.Millisecond
	srv := redistest.Start(t)
	up, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 1\n    tick: 50ms", srv.Addr(), "closed", "") +
		fmt.Sprintf("  session_cache: %s\n", cache)
	appA, a := startGateway(t, cfg)
	_, b := startGateway(t, cfg)
	v := newVisitor(t, a)
	if r := v.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("first visitor through A: %d %q", r.status, r.body)
	}
	newVisitor(t, a).get("/events/1") // waits behind v, so v cannot walk back in
	v.base = b
	if r := v.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("v through B: %d %q", r.status, r.body) // B now has v in its cache
	}
	var id string
	up.mu.Lock()
	for k := range up.visitors {
		id = k // only v reached the site
	}
	up.mu.Unlock()
	// From here on v sends the cookie it has, which says "inside", whatever
	// the answers set: as a burst of requests already on their way would.
	ticket := "waitroom_concert=" + v.cookieValue("concert")
	stale := func(base string) reply {
		w := newVisitor(t, base)
		return w.do("GET", "/events/1", "Cookie", ticket)
	}
	released := time.Now()
	if code, _, body := newAdmin(t, appA).do("POST", "/admin/api/rooms/concert/release", `{"visitor":"`+id+`"}`); code != 200 {
		t.Fatalf("release through A: %d %s", code, body)
	}
	if r := stale(a); r.header.Get("Waitroom-State") != "waiting" {
		t.Fatalf("through A, right after A released v: %d %q", r.status, r.body)
	}
	// B believes v's cookie until its cache entry is older than
	// session_cache, then asks Redis.
	servedByB := 0
	for {
		r := stale(b)
		if r.header.Get("Waitroom-State") != "" {
			break
		}
		servedByB++
		if since := time.Since(released); since > cache+300*time.Millisecond {
			t.Fatalf("B still let v in %v after the release (session_cache %v)", since, cache)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("B let v in %d more times, for %v after the release", servedByB, time.Since(released))
}
