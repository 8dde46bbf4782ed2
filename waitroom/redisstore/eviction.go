package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// NoEviction is the maxmemory-policy under which Redis refuses a write
// rather than drop a key to make room. Any other policy may drop a room's
// line or sessions under memory pressure, silently: places lost, limits
// forgotten. Managed Redis services often default to volatile-lru or
// allkeys-lru.
const NoEviction = "noeviction"

// EvictionPolicy returns the maxmemory-policy of the node that holds the
// lines, or of the first master of a cluster that has another policy than
// NoEviction (NoEviction when all have it). It reads INFO memory, which
// managed services that disable CONFIG still answer.
func (s *Store) EvictionPolicy(ctx context.Context) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", err
	}
	policy := NoEviction
	var mu sync.Mutex
	read := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		p, ok := infoField(info, "maxmemory_policy")
		if !ok {
			return fmt.Errorf("INFO memory has no maxmemory_policy")
		}
		mu.Lock()
		defer mu.Unlock()
		if p != NoEviction && policy == NoEviction {
			policy = p
		}
		return nil
	}
	var err error
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, read)
	case *redis.Client:
		err = read(ctx, c)
	default:
		// A Ring or another UniversalClient: its Info reaches one node.
		var info string
		if info, err = s.client.Info(ctx, "memory").Result(); err == nil {
			if p, ok := infoField(info, "maxmemory_policy"); ok {
				policy = p
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("reading maxmemory-policy: %w", s.failure(ctx, err))
	}
	return policy, nil
}

// infoField finds "name:value" in an INFO reply.
func infoField(info, name string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), name+":"); ok {
			return v, true
		}
	}
	return "", false
}
