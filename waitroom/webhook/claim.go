package webhook

import (
	"context"
	"sync"
	"time"
)

// Claimer decides which instance sends an event. Claim reports true to the
// first caller for key within ttl, and false to every other, across every
// instance that shares it. redisstore.Store implements it for instances on
// one Redis; MemoryClaimer for a single instance.
type Claimer interface {
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// memoryMax bounds a MemoryClaimer. Past it, once expired keys are swept,
// a claim is granted without being remembered: a rare duplicate, which
// receivers dedupe on webhook-id, beats growing without bound.
const memoryMax = 100_000

// MemoryClaimer is the Claimer of one process: the first claim of a key
// wins until its ttl runs out. Safe for concurrent use; the zero value is
// ready.
type MemoryClaimer struct {
	mu    sync.Mutex
	keys  map[string]time.Time // key -> end of its claim
	sweep time.Time            // when expired keys were last removed
	now   func() time.Time     // nil: time.Now
}

// NewMemoryClaimer returns an empty MemoryClaimer.
func NewMemoryClaimer() *MemoryClaimer { return &MemoryClaimer{} }

// Claim implements Claimer. It never fails and never waits on ctx.
func (c *MemoryClaimer) Claim(_ context.Context, key string, ttl time.Duration) (bool, error) {
	return c.claim(key, ttl), nil
}

func (c *MemoryClaimer) claim(key string, ttl time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	if end, ok := c.keys[key]; ok && now.Before(end) {
		return false
	}
	if c.keys == nil {
		c.keys = make(map[string]time.Time)
	}
	// Sweep at most once a second: a sweep walks every key.
	if now.Sub(c.sweep) > time.Second {
		c.sweep = now
		for k, end := range c.keys {
			if !now.Before(end) {
				delete(c.keys, k)
			}
		}
	}
	if len(c.keys) < memoryMax {
		c.keys[key] = now.Add(ttl)
	}
	return true
}

// Len is how many claims the claimer remembers, expired ones not swept yet
// included.
func (c *MemoryClaimer) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}
