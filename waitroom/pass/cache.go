package pass

import (
	"sync"
	"time"
)

// For returns a pass for p, reusing the one made earlier for the same p
// while more than a quarter of its TTL remains, so a gateway signs about
// once per session per three quarters of the TTL, not once per request.
// Any change of p (another room, ticket or subject) makes a new pass.
func (s *Signer) For(p Pass, now time.Time) (string, error) {
	if tok, ok := s.cache.get(p, now); ok {
		return tok, nil
	}
	tok, err := s.Sign(p, now)
	if err != nil {
		return "", err
	}
	issued := time.Unix(now.Unix(), 0)
	s.cache.put(p, cachedPass{token: tok, issued: issued, renew: issued.Add(s.ttl - s.ttl/4)}, now)
	return tok, nil
}

// maxCachedPasses bounds the passes held. A pass names its request's
// path, so one admitted client asking for a new path each time adds an
// entry (up to MaxTokenSize bytes) per request: past the bound, For signs
// without keeping the pass, so memory stays under maxCachedPasses ×
// MaxTokenSize (40 MB; a usual pass is under 600 bytes) and only the
// signing cost grows.
const maxCachedPasses = 10_000

// passCache holds the passes made in the last two TTLs in two generations
// swapped every TTL, as waitroom's session cache does: a lookup reads both,
// and memory holds at most the sessions seen in two TTLs, with no sweeping,
// and never more than maxCachedPasses.
type passCache struct {
	ttl      time.Duration
	mu       sync.RWMutex
	cur, old map[Pass]cachedPass
	rotated  time.Time
}

type cachedPass struct {
	token  string
	issued time.Time // iat
	renew  time.Time // after this, a new pass is made
}

func newPassCache(ttl time.Duration) *passCache {
	return &passCache{ttl: ttl, cur: map[Pass]cachedPass{}, old: map[Pass]cachedPass{}}
}

// get returns the cached pass for p when now lies between its iat and its
// renewal time; a clock that stepped back before iat makes a new pass, whose
// iat the site would otherwise see in the future.
func (c *passCache) get(p Pass, now time.Time) (string, bool) {
	c.mu.RLock()
	e, ok := c.cur[p]
	if !ok {
		e, ok = c.old[p]
	}
	c.mu.RUnlock()
	if !ok || now.Before(e.issued) || !now.Before(e.renew) {
		return "", false
	}
	return e.token, true
}

func (c *passCache) put(p Pass, e cachedPass, now time.Time) {
	c.mu.Lock()
	if now.Sub(c.rotated) >= c.ttl || now.Before(c.rotated) {
		c.old, c.cur = c.cur, make(map[Pass]cachedPass, len(c.cur))
		c.rotated = now
	}
	if _, ok := c.cur[p]; ok || len(c.cur)+len(c.old) < maxCachedPasses {
		c.cur[p] = e
	}
	c.mu.Unlock()
}

// len counts the entries held, for tests of the bound.
func (c *passCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.cur) + len(c.old)
}
