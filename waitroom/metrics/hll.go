package metrics

import (
	"hash/maphash"
	"math"
	"math/bits"
	"sync/atomic"
)

// sketchBits is the HyperLogLog's precision: 2^10 registers, a relative
// standard error of 1.04/sqrt(1024), about 3.3%, in 4 KiB a room.
const (
	sketchBits = 10
	sketchSize = 1 << sketchBits
)

// sketch counts distinct visitor ids approximately (HyperLogLog, Flajolet
// et al. 2007, with the small-range correction): memory is fixed however
// many visitors come, which an exact set of ids would not be in a flood.
// add is lock-free: each register keeps the largest rank seen, raised by
// compare-and-swap.
type sketch struct {
	minute   int64 // Unix minute the sketch counts
	arrivals atomic.Int64
	reg      [sketchSize]atomic.Uint32
}

func (s *sketch) add(h uint64) {
	i := h >> (64 - sketchBits)
	// The rank of the remaining bits; the guard bit bounds it at 64-sketchBits+1.
	rank := uint32(bits.LeadingZeros64(h<<sketchBits|1<<(sketchBits-1))) + 1
	r := &s.reg[i]
	for {
		old := r.Load()
		if rank <= old || r.CompareAndSwap(old, rank) {
			return
		}
	}
}

// estimate is the sketch's count of distinct ids.
func (s *sketch) estimate() float64 {
	const m = float64(sketchSize)
	sum, zeros := 0.0, 0
	for i := range s.reg {
		v := s.reg[i].Load()
		if v == 0 {
			zeros++
		}
		sum += math.Ldexp(1, -int(v))
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros)) // linear counting: exact-ish when few
	}
	return e
}

// visitors is a room's distinct-visitor count by minute: the sketch of
// the minute in progress, rolled over (and its estimate published) by the
// first add or tick of the next minute.
type visitors struct {
	cur  atomic.Pointer[sketch]
	last atomic.Int64 // math.Float64bits of the last whole minute's estimate
	// lastArrivals are the arrivals the last whole minute's sketch counted.
	lastArrivals atomic.Int64
}

// roll starts the sketch of minute now if the current one is older, and
// returns the sketch to add to. An add that loaded the old sketch just
// before a roll counts into it after its estimate was taken: lost, a
// visitor or two at a minute's edge.
func (v *visitors) roll(now int64) *sketch {
	for {
		s := v.cur.Load()
		if s != nil && s.minute == now {
			return s
		}
		next := &sketch{minute: now}
		if !v.cur.CompareAndSwap(s, next) {
			continue
		}
		est, arrivals := 0.0, int64(0)
		if s != nil && s.minute == now-1 { // an idle minute in between counted nobody
			est, arrivals = math.Round(s.estimate()), s.arrivals.Load()
		}
		v.last.Store(int64(math.Float64bits(est)))
		v.lastArrivals.Store(arrivals)
		return next
	}
}

func (v *visitors) lastMinute() float64 {
	return math.Float64frombits(uint64(v.last.Load()))
}

// visitorSeed keys the hash of visitor ids; a process's own, as the
// sketches never leave it.
var visitorSeed = maphash.MakeSeed()

func visitorHash(id string) uint64 { return maphash.String(visitorSeed, id) }
