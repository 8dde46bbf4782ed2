package redisstore

import (
	"context"
	"fmt"
	"time"
)

// claimScript is SET NX PX as a script: every write of this store is one.
var claimScript = loadScript("claim.lua", preludeOnly)

// maxClaimKey bounds a claim's key. The webhook dispatcher sends its
// message ids, 28 bytes.
const maxClaimKey = 512

// Claim implements webhook.Claimer for gateway instances sharing this
// Redis: the first Claim of key within ttl, from any instance, reports
// true, every other false. The claim lives in "{<prefix>:claim:<key>}", a
// hash tag of its own so claims spread over a cluster's slots and never
// meet a room's keys (which carry a suffix after the tag), and expires
// after ttl, counted in whole milliseconds by Redis. A Redis that lost its
// data forgets its claims: an event may then be sent twice, and receivers
// dedupe on webhook-id. Errors: waitroom.ErrUnavailable, waitroom.ErrClosed,
// ctx's error, or a key or ttl out of bounds.
func (s *Store) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	switch {
	case key == "" || len(key) > maxClaimKey:
		return false, fmt.Errorf("claiming %.64q: key must be 1 to %d bytes, got %d", key, maxClaimKey, len(key))
	case ttl < time.Millisecond:
		return false, fmt.Errorf("claiming %.64q: ttl must be at least 1ms, got %v", key, ttl)
	}
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	reply, err := claimScript.Run(ctx, s.client, []string{s.claimKey(key)}, ttl.Milliseconds()).Result()
	if err != nil {
		return false, fmt.Errorf("claiming %.64q: running %s: %w", key, claimScript.name, s.failure(ctx, err))
	}
	var r [1]int64
	if err := replyInts(claimScript.name, reply, r[:]); err != nil {
		return false, fmt.Errorf("claiming %.64q: %w", key, unavailable(err))
	}
	return r[0] == 1, nil
}

// claimKey is where the claim of key lives.
func (s *Store) claimKey(key string) string {
	return "{" + s.prefix + ":claim:" + key + "}"
}
