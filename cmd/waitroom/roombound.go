package main

import (
	"fmt"
	"math"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// A room lives in one hash slot ({wr:R}), so one Redis core serves all of
// its line, however many nodes a Cluster has. Once the joins are done,
// what that core spends on a waiting visitor is its polls' marks: every
// poll, wherever in line, is answered by the gateway and marked in the
// tick's one touch script, a BITFIELD field per poll: 1.1 to 2.2 µs a
// mark in touch.lua (docs/scale.md), and 2.3 µs of Redis CPU a poll all
// in, ticks and Redis's idle included, measured again by
// BenchmarkPollsAtScale with 100,000 waiting (docs/scale.md); markCost
// takes 2 µs, toward the measured. Re-anchors cost nothing while a visitor polls more
// often than half abandon_after, which every valid room does (abandon_after
// is at least twice page.refresh_max); the ticks cost the same whatever
// the line's length. So the room's share of its core is
//
//	waiting × markCost / (farBackInterval × page.refresh_max)
//
// and roomBound warns past roomCoreShare of it. The front of the line
// polls faster (from page.refresh), but only the visitors within ten
// refresh_max of the admission rate's pace, a few thousand at most: left
// out, as the ticks are.
const (
	markCost = 2 * time.Microsecond
	// farBackInterval is the mean far-back poll interval as a share of
	// refresh_max: the hint spreads it by ±20% and caps it at refresh_max,
	// so half the polls come at 0.8–1.0 of it, half at 1.0: 0.95 on average.
	farBackInterval = 0.95
	// roomCoreShare is the most of a core a room's line should take: the
	// rest is the joins of a spike, failover headroom and other rooms.
	roomCoreShare = 0.5
	// maxExpectedWaiting bounds the key: ten times a country.
	maxExpectedWaiting = 1_000_000_000
)

// roomCoreUse is the share of a Redis core (1 is a whole core) that
// waiting visitors' polls take with the page's refreshMax.
func roomCoreUse(waiting int64, refreshMax time.Duration) float64 {
	if waiting <= 0 || refreshMax <= 0 {
		return 0
	}
	return float64(waiting) * markCost.Seconds() / (farBackInterval * refreshMax.Seconds())
}

// waitingPerCore is how many may wait in one room for their polls to take
// share of a Redis core with the page's refreshMax.
func waitingPerCore(refreshMax time.Duration, share float64) int64 {
	// The most that stay at or under share; the 1e-6 absorbs float error (0.95 is not exact).
	return int64(math.Floor(share*farBackInterval*refreshMax.Seconds()/markCost.Seconds() + 1e-6))
}

// roomBound checks rooms.<name>.expected_waiting and returns the warning
// for a room whose expected line would take more than roomCoreShare of its
// Redis node's core, "" for none. The memory store has no Redis: its line
// costs the one gateway's CPU, which docs/performance.md measures.
func roomBound(p *conf.Problems, store, name string, waiting int64, refreshMax time.Duration) string {
	if waiting < 0 || waiting > maxExpectedWaiting {
		p.Add("rooms."+name+".expected_waiting", "must be from 0 (no estimate) to %d, got %d", maxExpectedWaiting, waiting)
		return ""
	}
	use := roomCoreUse(waiting, refreshMax)
	if store != "redis" || use <= roomCoreShare {
		return ""
	}
	return fmt.Sprintf("rooms.%s.expected_waiting (%s) would take about %.0f%% of its Redis node's core in polls alone "+
		"(%s × %s a poll's mark / %s between polls at page.refresh_max %s), over the %.0f%% a room should stay under: "+
		"one room is one hash slot, one core (docs/scale.md). At refresh_max %s a room holds %s at %.0f%%; "+
		"raise page.refresh_max (and abandon_after, at least twice it), or split the line into rooms (a room template)",
		name, thousands(waiting), 100*use, thousands(waiting), markCost, conf.Short(time.Duration(farBackInterval*float64(refreshMax))),
		conf.Short(refreshMax), 100*roomCoreShare, conf.Short(refreshMax), thousands(waitingPerCore(refreshMax, roomCoreShare)), 100*roomCoreShare)
}

// thousands writes n with comma separators, as the docs do.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
