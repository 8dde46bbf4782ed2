package main

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/metrics"
	"github.com/waitroom/waitroom/waitroom/redisstore"
)

// storeStater is a store that can say what a failed call means: a
// failover under way, or a store out of reach (redisstore.Store).
// /readyz and the dashboard find it with waitroom.As.
type storeStater interface {
	State(err error) waitroom.StoreState
	LastState() waitroom.StoreState
}

// storeDownLine is /readyz's line for a store whose ping failed with err:
// "failing over" while it has no master (a replica promoted, the Cluster
// electing), else "down".
func storeDownLine(s waitroom.Store, err error) string {
	if st, ok := waitroom.As[storeStater](s); ok && st.State(err) == waitroom.StoreFailingOver {
		// Held is store.on_error's closed answer; with open, the room opens
		// once calls have failed for open_after, so the line says only what
		// is true either way.
		return "store: failing over (" + string(redisstore.KindOf(err)) + "; visitors get store.on_error's answer until a master answers)"
	}
	return "store: down (visitors get store.on_error's answer)"
}

// storeState is the dashboard's word for the store now: down is what the
// rooms saw (Rooms.StoreDown); the store's last error says why.
func storeState(s waitroom.Store, down bool) waitroom.StoreState {
	if !down {
		return waitroom.StoreOK
	}
	if st, ok := waitroom.As[storeStater](s); ok {
		if state := st.LastState(); state != waitroom.StoreOK {
			return state
		}
	}
	return waitroom.StoreUnreachable
}

// waitLogEvery spaces the log lines of WAIT shortfalls: the first of a
// run is logged at once, the rest at most this often, with their count.
const waitLogEvery = time.Minute

// storeEvents counts the Redis store's errors by kind and its WAIT
// shortfalls, and logs the shortfalls (see waitLogEvery).
func storeEvents(log *zap.Logger, m *metrics.Metrics) redisstore.Events {
	var last atomic.Int64 // unix nanoseconds of the last line; 0: none
	var since atomic.Int64
	return redisstore.Events{
		Error: func(k redisstore.ErrorKind) { m.StoreError(string(k)) },
		WaitShort: func(wanted, got int) {
			m.WaitShortfall()
			n := since.Add(1)
			now := time.Now().UnixNano()
			prev := last.Load()
			if prev != 0 && time.Duration(now-prev) < waitLogEvery || !last.CompareAndSwap(prev, now) {
				return
			}
			since.Add(-n)
			log.Warn("fewer Redis replicas acknowledged a write than store.redis.wait_replicas within wait_timeout; "+
				"the write stands on the master but a failover now could lose it (logged at most once a minute)",
				zap.Int("wanted", wanted), zap.Int("got", got), zap.Int64("shortfalls", n))
		},
	}
}
