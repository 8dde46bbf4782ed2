package waitroom

import (
	"slices"
	"sync"
	"time"
)

// sessionCache lets an instance trust, for a short while, that a visitor the
// store found inside is still inside, so a burst of requests (a page and
// its assets, an API's calls) costs one store call, not one each. The
// while is bounded (store.session_cache, default 1s): a release or an
// expiry decided elsewhere takes effect here within it; one decided through
// this gate takes effect at once (drop). Only a visitor whose sealed
// ticket says it is inside is looked up, so a forged id finds nothing.
//
// Entries live in two generations swapped every ttl: a lookup reads both,
// and an entry older than ttl is ignored, so memory holds at most the
// visitors seen in the last two intervals with no sweeping.
type sessionCache struct {
	ttl      time.Duration
	mu       sync.RWMutex
	cur, old map[sessionKey]cachedSession
	rotated  time.Time
}

type sessionKey struct{ room, visitor string }

type cachedSession struct {
	checked time.Time // when the store last said "inside"
	until   time.Time // when the session ends, as the store said then
	// clients are the clients (Visitor.Client) the store said "inside"
	// to: a request from another one must ask the store, which counts
	// the session's clients (Limits.SessionClients).
	clients [maxCachedClients]string
}

// maxCachedClients bounds the clients an entry remembers; a session used
// by more asks the store for the rest.
const maxCachedClients = 4

func newSessionCache(ttl time.Duration) *sessionCache {
	if ttl <= 0 {
		return nil
	}
	return &sessionCache{ttl: ttl, cur: map[sessionKey]cachedSession{}, old: map[sessionKey]cachedSession{}}
}

// interval is how long an entry is trusted; 0 for no cache.
func (c *sessionCache) interval() time.Duration {
	if c == nil {
		return 0
	}
	return c.ttl
}

// get returns the end of the visitor's session when the store said it was
// inside less than ttl ago and the session still runs at now.
func (c *sessionCache) get(room, visitor, client string, now time.Time) (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	k := sessionKey{room, visitor}
	c.mu.RLock()
	e, ok := c.cur[k]
	if !ok {
		e, ok = c.old[k]
	}
	c.mu.RUnlock()
	if !ok || now.Sub(e.checked) >= c.ttl || !now.Before(e.until) || !slices.Contains(e.clients[:], client) {
		return time.Time{}, false
	}
	return e.until, true
}

// put records that the store just found the visitor inside until until.
func (c *sessionCache) put(room, visitor, client string, until, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if now.Sub(c.rotated) >= c.ttl {
		c.old, c.cur = c.cur, make(map[sessionKey]cachedSession, len(c.cur))
		c.rotated = now
	}
	k := sessionKey{room, visitor}
	e, ok := c.cur[k]
	if !ok || now.Sub(e.checked) >= c.ttl {
		e = cachedSession{}
	}
	e.checked, e.until = now, until
	if !slices.Contains(e.clients[:], client) {
		copy(e.clients[1:], e.clients[:len(e.clients)-1])
		e.clients[0] = client
	}
	c.cur[k] = e
	c.mu.Unlock()
}

// drop forgets the visitor: its session ended through this gate.
func (c *sessionCache) drop(room, visitor string) {
	if c == nil {
		return
	}
	k := sessionKey{room, visitor}
	c.mu.Lock()
	delete(c.cur, k)
	delete(c.old, k)
	c.mu.Unlock()
}

// dropRoom forgets every visitor of room: the store lost writes, so the
// sessions it said were running may be gone.
func (c *sessionCache) dropRoom(room string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	for _, m := range []map[sessionKey]cachedSession{c.cur, c.old} {
		for k := range m {
			if k.room == room {
				delete(m, k)
			}
		}
	}
	c.mu.Unlock()
}

// len counts the entries held, for tests of the bound.
func (c *sessionCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.cur) + len(c.old)
}
