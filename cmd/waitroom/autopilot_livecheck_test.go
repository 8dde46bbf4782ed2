package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestSimRecord_OverLimitRaisedBeforeSample is the live-admissions check's
// reading of a raise (simRecord.overLimit): a gateway raises the limit
// from 12 to 14 at its tick and admits under it in the same tick, and the
// admitted visitor's first request reaches the site before the next
// sample shows 14. With 13 live then, the check must take the limit in
// effect at that request (14, the site reads it) and pass; when the limit
// in effect then is 12 too, 13 live is over it and the check must count
// it.
func TestSimRecord_OverLimitRaisedBeforeSample(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	samples := [][]simSample{{{at: t0, limit: 12}, {at: t0.Add(250 * time.Millisecond), limit: 12}, {at: t0.Add(5 * time.Second), limit: 14}}}
	limit := func(from, to time.Time) int { return highestLimit(samples, from, to) }
	for _, c := range []struct {
		atFirst int // the limit in effect at the 13th visit's first request
		want    int // admissions found over the limit
	}{{14, 0}, {12, 1}} {
		var r simRecord
		// Twelve live from the start, within 12; the 13th comes at 4s,
		// after its last waiting poll at 1s, before the sample showing 14.
		for id := int64(1); id <= 12; id++ {
			r.visit(id, t0.Add(time.Duration(id)*time.Millisecond), false)
			r.since(id, t0)
			r.limitAtFirst(id, 12)
		}
		r.visit(13, t0.Add(4*time.Second), false)
		r.since(13, t0.Add(time.Second))
		r.limitAtFirst(13, c.atFirst)
		for id := int64(1); id <= 13; id++ {
			r.visit(id, t0.Add(10*time.Second), true) // all released later
		}
		if n, worst := r.overLimit(500*time.Millisecond, limit); n != c.want {
			t.Errorf("limit %d in effect at the first request: %d admissions over the limit (worst %s), want %d", c.atFirst, n, worst, c.want)
		}
	}
}

// TestAutopilot_LiveCheckCatchesHigherLimit shows the live-admissions
// check (simRecord.overLimit) can fail on real gateways: two gateways on
// one Redis serve room shop, one with max_active 4 and one given 10, and
// a crowd larger than both. Told both gateways' limits the check passes
// (the store never holds more than the 10 the second one carries); told
// only the first's, it must find admissions over 4.
func TestAutopilot_LiveCheckCatchesHigherLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store := fmt.Sprintf("store: { kind: redis, redis: { addrs: [%q], key_prefix: lc } }", srv.Addr())
	site, url := newSimSite(t, 20, 10*time.Millisecond, simQueue)
	low, lowBase := startGateway(t, autopilotConfig(url, 4, false, store))
	high, highBase := startGateway(t, autopilotConfig(url, 10, false, store))
	site.limitNow = highestNow([]*App{low}) // the first gateway's only
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	crowd := &simCrowd{gateways: []string{lowBase, highBase}, prefix: "/shop/", room: "shop",
		period: 500 * time.Millisecond, session: 3 * time.Second, poll: time.Second}
	samples := watch(ctx, []*App{low, high}, crowd)
	wg := crowd.run(ctx, 24)
	// Long enough for a few sessions to turn over; the counts are
	// checked whatever the machine's speed, and the second gateway fills
	// the room to 10 at its first ticks.
	time.Sleep(12 * time.Second)
	cancel()
	wg.Wait()
	ss := samples()
	slack := time.Second + simTick + 250*time.Millisecond
	if n, worst := site.rec.overLimit(slack, func(from, to time.Time) int { return highestLimit(ss, from, to) }); n > 0 {
		t.Errorf("told both gateways' limits, %d admissions found more live than the limit: the worst %s", n, worst)
	}
	n, worst := site.rec.overLimit(slack, func(from, to time.Time) int { return highestLimit(ss[:1], from, to) })
	if n == 0 {
		t.Errorf("told only the limit 4 while a gateway admits up to 10, the check found nothing (at most %d live)", site.rec.maxLive(time.Time{}, time.Now()))
	}
	t.Logf("told only the first gateway's limit 4: %d admissions over it, the worst %s", n, worst)
}
