package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// dump is the room's state in the store at the end of a run with a
// problem (-v): the meta and stats hashes, the line's length and the
// sessions inside with how long each has left, from the master that
// serves the room. It is what tells a stall held by sessions nobody uses
// from one held by the store's own hold.
func dump(ctx context.Context, store any) string {
	var c redis.UniversalClient
	switch s := store.(type) {
	case *redistest.Sentinel:
		c = s.Master().Client()
	case *redistest.Cluster:
		if m := s.MasterForKey(roomKey); m != nil {
			c = m.Client()
		}
	case *redistest.Server:
		c = s.Client()
	}
	if c == nil {
		return "\n--- store: no master"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var b strings.Builder
	b.WriteString("\n--- store:")
	now, err := c.Time(ctx).Result()
	if err != nil {
		return fmt.Sprintf("%s %v", b.String(), err)
	}
	meta, _ := c.HGetAll(ctx, roomKey+":meta").Result()
	stats, _ := c.HGetAll(ctx, roomKey+":stats").Result()
	line, _ := c.ZCard(ctx, roomKey+":queue").Result()
	head, _ := c.ZRangeWithScores(ctx, roomKey+":queue", 0, 2).Result()
	inside, _ := c.ZRangeWithScores(ctx, roomKey+":active", 0, -1).Result()
	fmt.Fprintf(&b, "\nmeta %v\nstats %v\nline %d, head", meta, stats, line)
	for _, z := range head {
		fmt.Fprintf(&b, " %.0f", z.Score)
	}
	fmt.Fprintf(&b, "\ninside %d:", len(inside))
	for _, z := range inside {
		left := time.Duration(int64(z.Score)-now.UnixMicro()) * time.Microsecond
		fmt.Fprintf(&b, " %.8s %.1fs", z.Member, left.Seconds())
	}
	return b.String()
}
