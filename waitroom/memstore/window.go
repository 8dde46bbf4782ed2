package memstore

import (
	"math/bits"
	"time"
)

// window tracks the tickets handed out lately that could still come back
// to take their place (see room.place). Each number from base on has a
// bit, set once it is used (placed, or admitted at once); numbers above
// floor were handed out less than a placement window ago. A pending ticket
// is one above floor whose bit is clear: its holder may still come back,
// so the places behind it count it (positions never grow when it does);
// once floor passes it, it counts nowhere.
type window struct {
	base, floor int64
	bits        []uint64
	// marks remember the last number handed out at a few moments of the
	// last window, so floor follows the window to within an eighth of it.
	marks [windowMarks]mark
	next  int
}

type mark struct {
	at  time.Time
	seq int64
}

const windowMarks = 8

func newWindow(seq int64, now time.Time) window {
	w := window{base: seq + 1, floor: seq}
	for i := range w.marks {
		w.marks[i] = mark{at: now, seq: seq}
	}
	return w
}

// use marks ticket t used; false when it was used before or is not above
// floor: it buys no place.
func (w *window) use(t int64) bool {
	if t <= w.floor || t < w.base {
		return false
	}
	i := t - w.base
	for int64(len(w.bits))*64 <= i {
		w.bits = append(w.bits, 0)
	}
	word, bit := i/64, uint(i%64)
	if w.bits[word]&(1<<bit) != 0 {
		return false
	}
	w.bits[word] |= 1 << bit
	return true
}

// placeable reports whether t could still be used.
func (w *window) placeable(t int64) bool {
	if t <= w.floor || t < w.base {
		return false
	}
	i := t - w.base
	return int64(len(w.bits))*64 <= i || w.bits[i/64]&(1<<uint(i%64)) == 0
}

// pendingBelow counts the pending tickets below t: above floor, not used.
func (w *window) pendingBelow(t int64) int64 {
	lo := max(w.floor+1, w.base)
	if t <= lo {
		return 0
	}
	used := int64(0)
	for i := lo - w.base; i < t-w.base; {
		word := i / 64
		if word >= int64(len(w.bits)) {
			break
		}
		off := uint(i % 64)
		n := min(int64(64-off), t-w.base-i)
		m := w.bits[word] >> off
		if n < 64 {
			m &= 1<<uint(n) - 1
		}
		used += int64(bits.OnesCount64(m))
		i += n
	}
	return t - lo - used
}

// advance records the number handed out last at now and moves floor up to
// the last one handed out a placement window ago (within an eighth of it),
// dropping the bits below it.
func (w *window) advance(now time.Time, seq int64, within time.Duration) {
	step := max(within/windowMarks, time.Millisecond)
	last := w.marks[(w.next+windowMarks-1)%windowMarks]
	if now.Sub(last.at) >= step {
		w.marks[w.next] = mark{at: now, seq: seq}
		w.next = (w.next + 1) % windowMarks
	}
	for i := range windowMarks {
		m := w.marks[(w.next+i)%windowMarks] // oldest first
		if now.Sub(m.at) >= within && m.seq > w.floor {
			w.floor = m.seq
		}
	}
	if drop := (w.floor + 1 - w.base) / 64; drop > 0 {
		if drop >= int64(len(w.bits)) {
			w.bits = w.bits[:0]
		} else {
			w.bits = append(w.bits[:0], w.bits[drop:]...)
		}
		w.base += drop * 64
	}
}
