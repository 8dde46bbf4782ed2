package memstore

import (
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// bucket is the room's admission token bucket. The zero bucket is full: it
// fills at its first refill, as an absent bucket in Redis does, so a room
// made before anyone used its limits (by SetOverride, say) starts full too.
// An unlimited rate never looks at it.
type bucket struct {
	tokens float64
	last   time.Time // time of the last refill; zero before the first
}

// burst is the bucket's size. Limits asks for AdmitBurst >= 1; a hand-made
// Limits with 0 still gets one token, or a limited room would never admit.
func burst(lim waitroom.Limits) float64 {
	return float64(max(1, lim.AdmitBurst))
}

// refill adds the tokens earned since the last refill, up to the burst. The
// product is formed from integers first, so whole tokens come out exact
// ("300/m" over 200ms is 1, not 0.9999…).
func (b *bucket) refill(now time.Time, lim waitroom.Limits) {
	if lim.AdmitRate.IsUnlimited() {
		return
	}
	if b.last.IsZero() {
		b.tokens, b.last = burst(lim), now
		return
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		earned := float64(elapsed) * float64(lim.AdmitRate.N) / float64(lim.AdmitRate.Per)
		b.tokens = min(burst(lim), b.tokens+earned)
	} else {
		// The burst may have shrunk on reload.
		b.tokens = min(burst(lim), b.tokens)
	}
	b.last = now
}

// take spends one token if there is one. Call refill first.
func (b *bucket) take(lim waitroom.Limits) bool {
	if lim.AdmitRate.IsUnlimited() {
		return true
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// minute counts admissions per second over the last 60 seconds: a ring of
// buckets, each stamped with the second it counts, so stale buckets need no
// sweeping.
type minute struct {
	sec   [60]int64
	count [60]int64
}

func slot(sec int64) int { return int((sec%60 + 60) % 60) }

func (m *minute) add(now time.Time) {
	sec := now.Unix()
	i := slot(sec)
	if m.sec[i] != sec {
		m.sec[i], m.count[i] = sec, 0
	}
	m.count[i]++
}

// sum is the number of admissions in the current second and the 59 before.
func (m *minute) sum(now time.Time) int64 {
	sec, total := now.Unix(), int64(0)
	for i := range m.sec {
		if age := sec - m.sec[i]; age >= 0 && age < 60 {
			total += m.count[i]
		}
	}
	return total
}
