package waitroom

import (
	"math/rand/v2"
	"time"
)

// nearFront is the positions that always poll at the shortest interval:
// they go in next, and a visitor who is let in should notice at once.
const nearFront = 10

// refreshHint is when a waiting visitor should ask again. Near the front it
// is the room's shortest interval; further back about a tenth of the wait
// still ahead (or, before the rate is known, a little more per hundred
// places), up to the longest; and it is spread by ±20% at random, so that a
// million pages that loaded together do not poll together ever after.
func refreshHint(r Room, position int64, eta time.Duration, etaKnown bool) time.Duration {
	lo, hi := r.Refresh, max(r.RefreshMax, r.Refresh)
	if lo <= 0 {
		return 0
	}
	d := lo
	switch {
	case position <= nearFront:
	case etaKnown:
		d = eta / 10
	default:
		d = lo + lo*time.Duration(position/100)
	}
	d = min(max(d, lo), hi)
	if position > nearFront {
		d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
	return min(max(d, lo), hi)
}
