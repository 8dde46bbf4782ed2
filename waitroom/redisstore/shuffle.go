package redisstore

import (
	"context"
	"fmt"
)

// Shuffle implements waitroom.Store in one script (shuffle.lua), which
// sorts everyone waiting by redis.sha1hex(seed..id) — the same order as
// waitroom.ShuffleOrder — on the ticket numbers they hold. A key used
// before changes nothing; its recorded seed is read back. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Shuffle(ctx context.Context, room, key, seed string) (string, int, error) {
	var r [2]int64
	if err := s.run(ctx, shuffleScript, room, []any{key, seed, metaTTL.Milliseconds()}, r[:]); err != nil {
		return "", 0, fmt.Errorf("shuffling room %q: %w", room, err)
	}
	if r[1] == 1 {
		return seed, int(r[0]), nil
	}
	used, err := s.client.HGet(ctx, s.cache.keys(s.prefix, room)[0], "shuffle_seed").Result()
	if err != nil {
		return "", 0, fmt.Errorf("reading the shuffle seed of room %q: %w", room, s.failure(ctx, err))
	}
	return used, 0, nil
}
