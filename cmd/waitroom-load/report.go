package main

import (
	"maps"
	"math"
	"time"
)

// summary is the run's result; -json prints it as is (docs/loadtest.md
// describes every field).
type summary struct {
	Target          string              `json:"target"`
	Targets         []string            `json:"targets"` // every gateway, the first is Target
	Spread          string              `json:"spread"`
	ByTarget        []int64             `json:"requests_by_target"` // requests sent to each of Targets
	Profile         string              `json:"profile"`
	Accept          string              `json:"accept"`
	After           string              `json:"after"`
	Planned         int                 `json:"planned"` // arrivals the profile scheduled
	DurationSeconds float64             `json:"duration_seconds"`
	Requests        int64               `json:"requests"`
	PerSecond       float64             `json:"requests_per_second"`
	Kinds           map[string]kindView `json:"kinds"`
	FirstAnswer     firstAnswer         `json:"first_answer"`
	Errors          map[string]int64    `json:"errors"`
	ErrorCount      int64               `json:"error_count"`
	CutOff          int64               `json:"cut_off"`
	States          map[string]int64    `json:"states"`
	Visitors        outcome             `json:"visitors"`
	Order           orderReport         `json:"order"`
	Admissions      admissions          `json:"admissions"`
	Upstream        upstreamReport      `json:"upstream"`
	OK              bool                `json:"ok"`
}

// kindView is one kind of request.
type kindView struct {
	Requests  int64   `json:"requests"`
	PerSecond float64 `json:"per_second"`
	Errors    int64   `json:"errors"`
	Latency   latency `json:"latency"`
}

// firstAnswer is how the arrivals' first requests were answered: the
// spike's figure, since a join that fails or waits is a person who sees
// an error page or nothing.
type firstAnswer struct {
	Answered   int64   `json:"answered"`   // any answer but a 5xx (a 429 is an answer)
	Unanswered int64   `json:"unanswered"` // a 5xx, a timeout, a refused or broken connection
	AllOK      bool    `json:"every_arrival_answered"`
	PerSecond  float64 `json:"answered_per_second"` // answered over the time from the first sent to the last answered
	Latency    latency `json:"latency"`             // of the answered
}

// outcome is where the visitors ended.
type outcome struct {
	Arrived      int `json:"arrived"`
	Admitted     int `json:"admitted"`
	StraightIn   int `json:"straight_in"`
	FromLine     int `json:"from_line"`
	StillWaiting int `json:"still_waiting"`
	Failed       int `json:"failed"`
	Left         int `json:"left"`
}

// admissions is the pace at which visitors were let in, against the room's.
type admissions struct {
	PerMinute    []int    `json:"per_minute"` // first admissions in minute 1, 2, ... of the run (the last may be partial)
	LinePace     *float64 `json:"line_pace_per_minute"`
	Limits       limits   `json:"limits"`
	RatioToLimit *float64 `json:"ratio_to_limit,omitempty"`
}

// summarize turns a finished run into its summary; s may be nil.
func summarize(r *runner, s *site, lim limits, elapsed time.Duration) summary {
	st := r.stats
	sum := summary{Target: r.cfg.target.Redacted(), Profile: r.cfg.profile, Accept: r.cfg.accept, After: r.cfg.after,
		Planned: len(st.records), DurationSeconds: round(elapsed.Seconds(), 3), Kinds: map[string]kindView{},
		CutOff: st.cutOff.Load(), Spread: r.cfg.spread}
	for _, t := range r.cfg.targets {
		sum.Targets = append(sum.Targets, t.Redacted())
	}
	for i := range st.byTarget {
		sum.ByTarget = append(sum.ByTarget, st.byTarget[i].Load())
	}
	secs := max(elapsed.Seconds(), 1e-9)
	for k := range kinds {
		n := st.requests[k].Load()
		sum.Requests += n
		sum.Kinds[k.String()] = kindView{Requests: n, PerSecond: round(float64(n)/secs, 1),
			Errors: st.failures[k].Load(), Latency: st.lat[k].latency()}
	}
	sum.PerSecond = round(float64(sum.Requests)/secs, 1)
	sum.FirstAnswer = firstAnswer{Answered: st.answered.Load(), Unanswered: st.unanswered.Load(), Latency: st.first.latency()}
	// Every planned arrival must have arrived and been answered: a
	// schedule the run could not keep is not a spike that was served.
	sum.FirstAnswer.AllOK = sum.FirstAnswer.Answered == int64(len(st.records)) && sum.FirstAnswer.Unanswered == 0
	if span := (st.firstRecv - st.firstSent).Seconds(); span > 0 {
		sum.FirstAnswer.PerSecond = round(float64(sum.FirstAnswer.Answered)/span, 1)
	}
	st.mu.Lock()
	sum.Errors, sum.States = maps.Clone(st.errors), maps.Clone(st.states)
	st.mu.Unlock()
	sum.ErrorCount = st.errorCount()
	recs := st.records[:r.launched]
	sum.Visitors = tally(recs)
	sum.Order = checkOrder(orderEntries(recs))
	sum.Admissions = pace(recs, lim)
	if s != nil {
		sum.Upstream = s.report(r.start, recs)
		if sum.Upstream.MaxActive = lim.MaxActive; lim.MaxActive != nil {
			sum.Upstream.OverLimit = sum.Upstream.MaxInside > *lim.MaxActive
		}
	}
	sum.OK = sum.FirstAnswer.AllOK && sum.ErrorCount == 0 && sum.Order.Inversions == 0 && !sum.Upstream.OverLimit
	return sum
}

func tally(recs []record) outcome {
	o := outcome{Arrived: len(recs)}
	for _, rec := range recs {
		switch {
		case rec.isIn && rec.straight:
			o.Admitted++
			o.StraightIn++
		case rec.isIn:
			o.Admitted++
			o.FromLine++
		case rec.failed:
			o.Failed++
		default:
			o.StillWaiting++
		}
		if rec.left {
			o.Left++
		}
	}
	return o
}

// orderEntries are the ticket holders; visitors let in by their join hold
// no ticket, and came before the line.
func orderEntries(recs []record) []orderEntry {
	var es []orderEntry
	for i, rec := range recs {
		if rec.ticket > 0 && !rec.straight {
			// The admission came after the last wait, or if the visitor never
			// waited in a poll, after the request that found it.
			low := rec.inSent
			if rec.waited {
				low = rec.lastWait
			}
			es = append(es, orderEntry{visitor: i, ticket: rec.ticket, lastWait: rec.lastWait, waited: rec.waited,
				admitted: rec.admitted, isIn: rec.isIn, placed: rec.placed, low: low})
		}
	}
	return es
}

// pace buckets first admissions by minute of the run, and measures the
// line's pace: admissions from the line over the time between the first
// and the last of them. Admissions are seen at the next poll, so the pace
// is blurred by a poll interval at each end.
func pace(recs []record, lim limits) admissions {
	a := admissions{PerMinute: []int{}, Limits: lim}
	var first, last time.Duration
	line := 0
	for _, rec := range recs {
		if !rec.isIn {
			continue
		}
		m := int(rec.admitted / time.Minute)
		for len(a.PerMinute) <= m {
			a.PerMinute = append(a.PerMinute, 0)
		}
		a.PerMinute[m]++
		if rec.straight {
			continue
		}
		if line == 0 || rec.admitted < first {
			first = rec.admitted
		}
		last = max(last, rec.admitted)
		line++
	}
	if span := last - first; line > 1 && span > 0 {
		p := round(float64(line-1)/span.Minutes(), 1)
		a.LinePace = &p
		if lim.PerMinute != nil && *lim.PerMinute > 0 {
			ratio := round(p / *lim.PerMinute, 3)
			a.RatioToLimit = &ratio
		}
	}
	return a
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}
