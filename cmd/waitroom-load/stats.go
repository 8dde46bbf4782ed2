package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// kind is what a request was for; each kind has its own latencies.
type kind int

const (
	kindJoin     kind = iota // the first GET of the guarded page
	kindPoll                 // GET /.waitroom/status, as the page's script sends it
	kindAdmitted             // a request that reached the site
	kindLeave                // POST /.waitroom/leave
	kinds
)

var kindNames = [kinds]string{"join", "poll", "admitted", "leave"}

func (k kind) String() string { return kindNames[k] }

// maxSamples bounds the latencies kept per kind (8 MiB each): up to it the
// percentiles are exact; past it each new sample replaces a random one
// (reservoir sampling), so memory stays flat in a long run.
const maxSamples = 1 << 20

// samples are one kind's latencies.
type samples struct {
	mu    sync.Mutex
	d     []time.Duration
	n     int64 // every sample, kept or not
	max   time.Duration
	limit int
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.max = max(s.max, d)
	limit := s.limit
	if limit == 0 {
		limit = maxSamples
	}
	if len(s.d) < limit {
		s.d = append(s.d, d)
		return
	}
	if i := rand.Int64N(s.n); i < int64(limit) {
		s.d[i] = d
	}
}

// latency is a kind's latencies in milliseconds.
type latency struct {
	Samples int64   `json:"samples"`
	P50     float64 `json:"p50_ms"`
	P90     float64 `json:"p90_ms"`
	P99     float64 `json:"p99_ms"`
	Max     float64 `json:"max_ms"`
}

func (s *samples) latency() latency {
	s.mu.Lock()
	defer s.mu.Unlock()
	sorted := slices.Clone(s.d)
	slices.Sort(sorted)
	return latency{Samples: s.n, P50: ms(percentile(sorted, 50)), P90: ms(percentile(sorted, 90)),
		P99: ms(percentile(sorted, 99)), Max: ms(s.max)}
}

// percentile is the nearest-rank percentile of sorted: the smallest sample
// that p percent of the samples are at or below. Zero for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*100) / 100 }

// record is one visitor's story, as offsets from the start of the run.
// Only the visitor's own goroutine writes it; the report reads it after
// every visitor is done.
type record struct {
	ticket    int64         // the number in line; 0 for none seen
	straight  bool          // let in by the join itself, without a ticket
	lastWait  time.Duration // request sent of the last poll answered "waiting" (or "paused")
	waited    bool          // lastWait is set
	placed    time.Duration // the answer to the first poll received: the ticket held a place
	inSent    time.Duration // the request whose answer first said admitted, sent
	admitted  time.Duration // first answer that said admitted, received
	isIn      bool          // admitted is set
	leaveSent time.Duration // the leave request was sent; 0 if it never was
	left      bool          // the leave was sent
	failed    bool          // gave up on an error
}

// stats collects a run's figures from every visitor goroutine.
type stats struct {
	lat      [kinds]samples
	requests [kinds]atomic.Int64
	failures [kinds]atomic.Int64
	cutOff   atomic.Int64   // requests stopped by the end of the grace, not errors
	byTarget []atomic.Int64 // requests sent to each gateway, in -target's order

	// first is every arrival's first request, its join: the answer a
	// person pressing the button waits for. A 5xx, a timeout or any other
	// failure to answer counts in unanswered; the rest, 429 included, were
	// answered and their latencies are first's.
	first                samples
	answered, unanswered atomic.Int64
	firstMu              sync.Mutex
	firstSent, firstRecv time.Duration // the earliest first request sent, the latest answer received

	arrived, waiting, admitted, errored atomic.Int64 // the progress line's counters

	mu     sync.Mutex
	errors map[string]int64 // "poll: status 502" -> count
	states map[string]int64 // answers by the state they gave
	rooms  map[string]bool  // rooms named in answers

	records []record
}

func newStats(visitors, targets int) *stats {
	return &stats{errors: map[string]int64{}, states: map[string]int64{}, rooms: map[string]bool{},
		records: make([]record, visitors), byTarget: make([]atomic.Int64, max(targets, 1))}
}

// fail counts an error of a request of kind k.
func (s *stats) fail(k kind, what string) {
	s.failures[k].Add(1)
	s.errored.Add(1)
	s.mu.Lock()
	s.errors[k.String()+": "+what]++
	s.mu.Unlock()
}

// firstAnswer notes an arrival's first request: a is its answer when ok.
func (s *stats) firstAnswer(a *answer, ok bool) {
	if !ok || a.status >= 500 {
		s.unanswered.Add(1)
		return
	}
	s.answered.Add(1)
	s.first.add(a.recv - a.sent)
	s.firstMu.Lock()
	if s.firstRecv == 0 || a.sent < s.firstSent {
		s.firstSent = a.sent
	}
	s.firstRecv = max(s.firstRecv, a.recv)
	s.firstMu.Unlock()
}

// state counts an answer's state, and the room it named.
func (s *stats) state(state, room string) {
	s.mu.Lock()
	s.states[state]++
	if room != "" {
		s.rooms[room] = true
	}
	s.mu.Unlock()
}

// room is the room answers named, if exactly one.
func (s *stats) room() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rooms) != 1 {
		return ""
	}
	for r := range s.rooms {
		return r
	}
	return ""
}

func (s *stats) errorCount() int64 {
	var n int64
	for k := range kinds {
		n += s.failures[k].Load()
	}
	return n
}
