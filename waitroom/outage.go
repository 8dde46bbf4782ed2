package waitroom

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// OutagePolicy is what the gate does with requests while the store cannot
// be reached (store.on_error).
type OutagePolicy string

const (
	// OutageClosed lets through only visitors whose ticket carries a
	// running admission; everyone else is asked to hold.
	OutageClosed OutagePolicy = "closed"
	// OutageOpen lets everyone through once the store has failed for
	// RoomsConfig.OpenAfter.
	OutageOpen OutagePolicy = "open"
)

// outagePolicy is the policy in force with its delay.
type outagePolicy struct {
	policy    OutagePolicy
	openAfter time.Duration
}

// health follows whether the store answers, from the requests and the
// ticks alike, so that an outage is logged and counted once when it starts
// and once when it ends, never once per request.
type health struct {
	down   atomic.Bool
	since  atomic.Int64 // unix nanoseconds of the first failure of this outage
	obs    Observer
	log    *zap.Logger
	policy func() OutagePolicy // named in the log line, for the operator
}

// failed records a store call that failed.
func (h *health) failed(err error) {
	if !h.down.Load() {
		h.since.Store(time.Now().UnixNano())
	}
	if !h.down.Swap(true) {
		h.obs.Outage()
		h.obs.StoreUp(false)
		h.log.Error("store unreachable; following store.on_error", zap.String("on_error", string(h.policy())), zap.Error(err))
	}
}

// answered records a store call that succeeded.
func (h *health) answered() {
	if h.down.Load() && h.down.Swap(false) {
		h.obs.StoreUp(true)
		h.log.Info("store reachable again")
	}
}

// downFor is how long the store has failed without a single answer; 0
// while it answers.
func (h *health) downFor() time.Duration {
	if !h.down.Load() {
		return 0
	}
	return time.Since(time.Unix(0, h.since.Load()))
}
