package redisstore

import (
	"sync"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// DefaultKeyPrefix is the key prefix unless WithKeyPrefix or
// Config.KeyPrefix say otherwise.
const DefaultKeyPrefix = "wr"

// keyNames are the suffixes of a room's keys, in the order of KEYS in every
// script (lua/prelude.lua). doc.go says what each holds.
var keyNames = [...]string{"meta", "queue", "seen", "rseen", "active", "bucket", "stats", "minute", "restored", "override", "placed", "clients", "began"}

// overrideKey is the index of the override hash in keyNames, which
// Store.Override reads without a script; activeKey that of the sessions,
// which socket.lua takes apart from the other keys.
const (
	overrideKey = 9
	activeKey   = 4
)

// Key lifetimes. Every key of a room expires unless the room is used, so a
// room taken out of the configuration leaves nothing behind.
const (
	// metaTTL keeps the ticket counter, its seed and the restored set. It
	// must outlive every ticket that may come back: a counter that expired
	// while cookies still hold its tickets would take their holders for
	// survivors of a data loss. A month is far beyond any sensible
	// cookie.max_age (default 24h), and the keys are small. The runtime
	// override lives as long: an operator's pause must not lapse because a
	// paused room saw no joins for an hour.
	metaTTL = 30 * 24 * time.Hour
	// minDataTTL is the shortest life of the other keys after the room's
	// last activity; see dataTTL.
	minDataTTL = time.Hour
)

// dataTTL is how long the line, the sessions and the counters outlive the
// room's last activity: four times the longest a session or a place lasts
// untouched, at least an hour. Past that every visitor would be expired or
// abandoned at the next tick anyway, so expiring the keys changes nothing a
// visitor can see; the running totals restart from zero with them, which
// keeps them balanced.
func dataTTL(lim waitroom.Limits) time.Duration {
	return max(4*max(lim.SessionTTL, lim.AbandonAfter), minDataTTL)
}

// cacheMax bounds each cache. Rooms and limits come from the configuration,
// so a few entries is the rule; the bound only guards against misuse.
const cacheMax = 1024

// cache keeps what the Store derives from a room name or a Limits for every
// call, so the hot path does not rebuild it: the room's key names and the
// limits as script arguments (boxed once, shared read-only). Plain maps
// under a read lock: a lookup allocates nothing.
type cache struct {
	mu     sync.RWMutex
	rooms  map[string][]string
	limits map[waitroom.Limits][]any
}

// keys returns the room's keys. They all carry the hash tag {prefix:room},
// so they live in one Redis Cluster slot, as a script's keys must.
func (c *cache) keys(prefix, room string) []string {
	c.mu.RLock()
	keys, ok := c.rooms[room]
	c.mu.RUnlock()
	if ok {
		return keys
	}
	tag := "{" + prefix + ":" + room + "}:"
	keys = make([]string, len(keyNames))
	for i, name := range keyNames {
		keys[i] = tag + name
	}
	c.mu.Lock()
	if c.rooms == nil {
		c.rooms = make(map[string][]string)
	}
	if len(c.rooms) < cacheMax {
		c.rooms[room] = keys
	}
	c.mu.Unlock()
	return keys
}

// limitArgs is the ARGV block decide.lua and admit.lua share
// (lua/prelude.lua): the data and meta key lifetimes in milliseconds
// (Limits.Idle for both when set), then the limits, with durations in
// microseconds, the scripts' unit of time, and Random as 1/0, then the
// override's lifetime. The result must not be modified.
func (c *cache) limitArgs(lim waitroom.Limits) []any {
	c.mu.RLock()
	args, ok := c.limits[lim]
	c.mu.RUnlock()
	if ok {
		return args
	}
	var rateN, ratePer, joinN, joinPer int64
	if !lim.AdmitRate.IsUnlimited() {
		rateN, ratePer = lim.AdmitRate.N, lim.AdmitRate.Per.Microseconds()
	}
	if !lim.JoinLimit.IsUnlimited() {
		joinN, joinPer = lim.JoinLimit.N, lim.JoinLimit.Per.Microseconds()
	}
	data, meta := dataTTL(lim), metaTTL
	if lim.Idle > 0 {
		// A room that comes and goes: its line and its counter go with it,
		// in whole milliseconds, at least one (PEXPIRE 0 would delete).
		data = max(lim.Idle, time.Millisecond)
		meta = data
	}
	args = []any{
		data.Milliseconds(), meta.Milliseconds(),
		int64(lim.MaxActive), rateN, ratePer,
		int64(max(1, lim.AdmitBurst)), // a hand-made Limits with 0 still gets one token
		lim.SessionTTL.Microseconds(), lim.RenewInterval().Microseconds(),
		lim.AbandonAfter.Microseconds(), lim.RecoveryGrace.Microseconds(),
		flag(lim.Random),
		joinN, joinPer, lim.MaxWaiting, int64(lim.SessionClients), lim.SessionMax.Microseconds(),
		flag(lim.Prequeue), lim.PlacementWindow().Microseconds(),
		// The override keeps its month whatever Idle says: it may hold a
		// "closed" that must outlive the room's line.
		metaTTL.Milliseconds(),
		lim.ClientQuiet().Microseconds(),
	}
	c.mu.Lock()
	if c.limits == nil {
		c.limits = make(map[waitroom.Limits][]any)
	}
	if len(c.limits) < cacheMax {
		c.limits[lim] = args
	}
	c.mu.Unlock()
	return args
}
