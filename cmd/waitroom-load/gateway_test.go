package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// These tests run the real gateway binary in front of the load generator's
// own counting upstream, then the whole command against it.

func TestSpike_MemoryStore(t *testing.T) {
	t.Parallel()
	upstream := freeAddr(t)
	g := startGateway(t, "http://"+upstream, "{kind: memory}")
	code, s, stderr := runJSON(t, spikeArgs(g, upstream)...)
	checkSpike(t, code, s, stderr, false)
}

func TestSpike_RedisStore(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t) // skips without redis-server, fails so in CI
	upstream := freeAddr(t)
	g := startGateway(t, "http://"+upstream, fmt.Sprintf("{kind: redis, redis: {addrs: [%q]}}", srv.Addr()))
	code, s, stderr := runJSON(t, append(spikeArgs(g, upstream), "-accept", "json")...)
	checkSpike(t, code, s, stderr, true)
}

// Three gateways on one Redis behind a balancer without stickiness and
// with a pool of 8 connections to each: every
// request of a visitor goes to the next gateway, its cookies with it, and
// the line is still one line, in order, with never more inside than
// max_active.
func TestSpike_ThreeGatewaysNoStickiness(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	upstream := freeAddr(t)
	store := fmt.Sprintf("{kind: redis, redis: {addrs: [%q]}}", srv.Addr())
	var targets []string
	var first gateway
	for i := range 3 {
		g := startGateway(t, "http://"+upstream, store)
		if i == 0 {
			first = g
		}
		targets = append(targets, g.url+"/tickets?show=1")
	}
	// Through a balancer's pool of 8 connections to each gateway.
	args := append(spikeArgs(first, upstream), "-target", strings.Join(targets, ","), "-spread", "request", "-accept", "json", "-conns", "8")
	code, s, stderr := runJSON(t, args...)
	checkSpike(t, code, s, stderr, true)
	if len(s.Targets) != 3 || s.Spread != "request" || len(s.ByTarget) != 3 {
		t.Fatalf("targets %v, spread %q, by target %v; want the three, request", s.Targets, s.Spread, s.ByTarget)
	}
	// Round robin over every request: each gateway gets a third, give or
	// take the requests in flight at once.
	for i, n := range s.ByTarget {
		if n < s.Requests/3-50 || n > s.Requests/3+50 {
			t.Errorf("gateway %d got %d of %d requests, want about a third", i, n, s.Requests)
		}
	}
}

// checkSpike holds what a correct gateway must show for spikeArgs: every
// visitor in, in ticket order, never more inside than max_active, and no
// error anywhere. An app (-accept json) learns its ticket when it joins, so
// every one is checked; a browser learns it from a waiting poll, which one
// let in at its first poll never sees.
func checkSpike(t *testing.T, code int, s summary, stderr string, app bool) {
	t.Helper()
	t.Logf("%d admitted (%d from the line) in %.1fs, line pace %v/min, at most %d inside, join p99 %.2fms",
		s.Visitors.Admitted, s.Visitors.FromLine, s.DurationSeconds, deref(s.Admissions.LinePace), s.Upstream.MaxInside,
		s.Kinds["join"].Latency.P99)
	if code != 0 || !s.OK {
		t.Errorf("exit %d, ok %v; errors %v; stderr:\n%s", code, s.OK, s.Errors, stderr)
	}
	if s.ErrorCount != 0 || len(s.Errors) != 0 {
		t.Errorf("errors: %d %v", s.ErrorCount, s.Errors)
	}
	f := s.FirstAnswer
	if !f.AllOK || f.Answered != 300 || f.Unanswered != 0 || f.Latency.Samples != 300 || f.Latency.P50 <= 0 ||
		f.Latency.P99 < f.Latency.P50 || f.Latency.Max < f.Latency.P99 || f.PerSecond <= 0 {
		t.Errorf("first answer: %+v, want all 300 arrivals answered with their latencies", f)
	}
	v := s.Visitors
	if v.Arrived != 300 || v.Admitted != 300 || v.StillWaiting != 0 || v.Failed != 0 || v.Left != 300 {
		t.Errorf("visitors: %+v, want all 300 arrived, admitted and left", v)
	}
	if v.FromLine < 200 {
		t.Errorf("only %d of 300 came through the line: the room did not make a line", v.FromLine)
	}
	if s.Order.Inversions != 0 || s.Order.Checked > v.FromLine || s.Order.Checked < v.FromLine/2 ||
		(app && s.Order.Checked != v.FromLine) {
		t.Errorf("order: %+v, want no inversion and up to %d checked (all for apps)", s.Order, v.FromLine)
	}
	u := s.Upstream
	if !u.Enabled || u.Visitors != 300 || u.MaxInside < 1 || u.MaxInside > 20 || u.OverLimit {
		t.Errorf("upstream: %+v, want 300 visitors and 1 to 20 inside at once", u)
	}
	if u.WithoutVisitor != 0 || u.Requests != int64(300*2+v.StraightIn) {
		t.Errorf("upstream: %d requests (%d without a visitor), want %d", u.Requests, u.WithoutVisitor, 300*2+v.StraightIn)
	}
	lim := s.Admissions.Limits
	if lim.Source != "admin API" || lim.MaxActive == nil || *lim.MaxActive != 20 || lim.AdmitRate != "3000/m" {
		t.Errorf("limits: %+v, want max_active 20 and 3000/m from the admin API", lim)
	}
	if s.Admissions.LinePace == nil || *s.Admissions.LinePace <= 0 {
		t.Errorf("line pace not measured: %+v", s.Admissions)
	}
	for _, k := range []string{"join", "poll", "admitted", "leave"} {
		kv := s.Kinds[k]
		if kv.Requests == 0 || kv.Latency.Samples != kv.Requests || kv.Latency.P50 <= 0 || kv.Latency.Max < kv.Latency.P99 {
			t.Errorf("%s: %+v, want requests with their latencies", k, kv)
		}
	}
	if s.Kinds["join"].Requests != 300 || s.Kinds["admitted"].Requests != 600 || s.Kinds["leave"].Requests != 300 {
		t.Errorf("requests: %+v", s.Kinds)
	}
}

// A gateway that is not there is a failed run: every join is a connect
// error, and the exit status says so.
func TestRun_ErrorsExitOne(t *testing.T) {
	t.Parallel()
	code, s, _ := runJSON(t, "-target", "http://"+freeAddr(t)+"/", "-visitors", "5", "-ramp", "0s", "-duration", "3s")
	if code != 1 || s.OK || s.ErrorCount != 5 || s.Errors["join: connect: refused"] != 5 || s.Visitors.Failed != 5 {
		t.Errorf("exit %d, ok %v, errors %v, visitors %+v; want 1 and five refused joins", code, s.OK, s.Errors, s.Visitors)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
