package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/waitroom/waitroom/waitroom"
)

// Shuffle implements waitroom.Store: the pre-queue waiting now is put
// in the order of waitroom.ShuffleOrder, on the ticket numbers they hold
// among them, once per key. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) Shuffle(ctx context.Context, room, key, seed string) (string, int, error) {
	r, _, err := s.enter(ctx, room, true)
	if err != nil {
		return "", 0, err
	}
	defer r.mu.Unlock()
	if r.shuffleKey == key && key != "" {
		return r.shuffleSeed, 0, nil
	}
	ws := make([]*waiter, 0, len(r.waiting))
	tickets := make([]int64, 0, len(r.waiting))
	for _, w := range r.waiting {
		// Only the pre-queue's own tickets: whoever came after it, or a
		// room that never had one, keeps its order.
		if r.preqMin > 0 && w.ticket >= r.preqMin && w.ticket <= r.preqMax {
			ws = append(ws, w)
			tickets = append(tickets, w.ticket)
		}
	}
	slices.Sort(tickets)
	order := make(map[*waiter]string, len(ws))
	for _, w := range ws {
		order[w] = waitroom.ShuffleOrder(seed, w.id)
	}
	slices.SortFunc(ws, func(a, b *waiter) int { return strings.Compare(order[a], order[b]) })
	for _, w := range ws {
		r.line.remove(w)
	}
	for i, w := range ws {
		w.ticket = tickets[i]
		r.line.insert(w)
	}
	r.shuffleKey, r.shuffleSeed = key, seed
	return seed, len(ws), nil
}
