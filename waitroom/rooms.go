package waitroom

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Rooms owns the rooms as they run: each room's live state (the override in
// effect, the latest stats and their history, the opening's shuffle), the
// session cache, the store's health, the admitters (Run) and the operators'
// actions (operate.go). It outlives reloads: a reload Applies a new
// configuration and builds a new Gate over the same Rooms, so nothing is
// handed from one configuration to the next.
type Rooms struct {
	store  Store
	obs    Observer
	log    *zap.Logger
	health health
	notify Notifier
	live   atomic.Pointer[map[string]*liveRoom] // replaced whole by Apply, Fill and forget
	// templates are the room templates in service (template.go).
	templates atomic.Pointer[map[string]*Room]
	sessions  atomic.Pointer[sessionCache] // nil: no cache
	// releases are the releases kept to apply again (repair.go).
	releases releases
	policy   atomic.Pointer[outagePolicy]

	applyMu sync.Mutex
	changed chan struct{} // Apply changed the rooms; Run reconciles its admitters
}

// RoomsOptions wires Rooms. Store is required.
type RoomsOptions struct {
	Store Store
	// Observer hears what the rooms, their admitters and the gates over
	// them do, for metrics. Nil hears nothing.
	Observer Observer
	// Log receives ticks, outages and operators' actions. Nil discards.
	Log *zap.Logger
	// Notifier hears what webhooks tell; nil hears nothing.
	Notifier Notifier
}

// RoomsConfig is the part of a configuration that Rooms runs on.
type RoomsConfig struct {
	// Rooms are the rooms and the room templates (Room.Template set to
	// their own name).
	Rooms []Room
	// SessionCache is how long a visitor the store found inside is trusted
	// to be still inside without asking again (store.session_cache); see
	// sessionCache. 0 asks the store on every request.
	SessionCache time.Duration
	// OnOutage is what gates do while the store cannot be reached
	// (store.on_error); "" is OutageClosed.
	OnOutage OutagePolicy
	// OpenAfter is how long the store must have failed, call after call,
	// before OutageOpen lets everyone through (store.open_after); until
	// then, and again from its first answer, the gate holds as closed does.
	// 0 opens on the first failure.
	OpenAfter time.Duration
}

// NewRooms returns Rooms with no room; Apply puts a configuration in service.
func NewRooms(o RoomsOptions) *Rooms {
	rs := &Rooms{store: o.Store, obs: o.Observer, log: o.Log, notify: o.Notifier, changed: make(chan struct{}, 1)}
	if rs.notify == nil {
		rs.notify = nopNotifier{}
	}
	if rs.obs == nil {
		rs.obs = nopObserver{}
	}
	if rs.log == nil {
		rs.log = zap.NewNop()
	}
	rs.policy.Store(&outagePolicy{policy: OutageClosed})
	rs.health = health{obs: rs.obs, log: rs.log, policy: rs.onOutage}
	empty := map[string]*liveRoom{}
	rs.live.Store(&empty)
	return rs
}

// Apply puts a configuration in service. A room it keeps keeps its live
// state (the override in effect, the stats and their history), a new one
// starts empty, a removed one stops ticking at once (its line stays in the
// store, and its visitors are told it is closed). It returns the names of
// the rooms it removed.
func (rs *Rooms) Apply(c RoomsConfig) (removed []string) {
	rs.applyMu.Lock()
	defer rs.applyMu.Unlock()
	old := *rs.live.Load()
	next := make(map[string]*liveRoom, len(c.Rooms))
	templates := map[string]*Room{}
	for _, r := range c.Rooms {
		// Every gate over these rooms answers from the session cache for
		// up to SessionCache; the rooms' client quiet time must outlast it
		// (Limits.ClientQuiet).
		r.Limits.SessionCache = c.SessionCache
		if r.Template == r.Name && r.Template != "" {
			templates[r.Name] = &r
			continue
		}
		if lr := old[r.Name]; lr != nil && !lr.filled() {
			was := lr.eff.Load().Mode
			lr.configure(r)
			if now := lr.eff.Load().Mode; now != was {
				fact := "config:" + string(was) + ">" + string(now)
				rs.notify.ModeChanged(r.Name, was, now, "config", fact)
				if now == ModeReject {
					rs.notify.RoomClosed(r.Name, "config", fact)
				}
			}
			next[r.Name] = lr
			continue
		}
		next[r.Name] = newLiveRoom(r)
	}
	// A filled room lives on with its template, on the template's new
	// settings, unless the template's allow list no longer names it.
	for name, lr := range old {
		if !lr.filled() || next[name] != nil {
			continue
		}
		if t := templates[lr.room().Template]; t != nil && t.Allows(name) {
			lr.configure(t.fill(name, lr.room().Params))
			next[name] = lr
		}
	}
	for name := range old {
		if next[name] == nil {
			removed = append(removed, name)
		}
	}
	rs.templates.Store(&templates)
	if d, ok := rs.obs.(Declarer); ok {
		// Dashboards read 0 for a quiet room, not "No data"; a kept room's
		// series are left as they count.
		for _, r := range c.Rooms {
			d.Declare(r.Name, r.Template == r.Name && r.Template != "")
		}
	}
	rs.declareAutopilots(next)
	sort.Strings(removed)
	policy := outagePolicy{policy: c.OnOutage, openAfter: c.OpenAfter}
	if policy.policy == "" {
		policy.policy = OutageClosed
	}
	rs.policy.Store(&policy)
	if cur := rs.sessions.Load(); cur.interval() != c.SessionCache {
		rs.sessions.Store(newSessionCache(c.SessionCache))
	}
	rs.live.Store(&next)
	rs.signal()
	return removed
}

// get is the room called name in service, nil for none.
func (rs *Rooms) get(name string) *liveRoom { return (*rs.live.Load())[name] }

func (rs *Rooms) onOutage() OutagePolicy { return rs.policy.Load().policy }

// outageOpen reports whether requests go through while the store fails:
// only with OutageOpen, and only once it has failed for OpenAfter. One slow
// or failed call (which a flood of joins can provoke) is not an outage.
func (rs *Rooms) outageOpen() bool {
	p := rs.policy.Load()
	return p.policy == OutageOpen && rs.health.downFor() >= p.openAfter
}

// Names lists the rooms in service, sorted.
func (rs *Rooms) Names() []string {
	live := *rs.live.Load()
	names := make([]string, 0, len(live))
	for n := range live {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StoreDown reports whether the last store call, a request's or a tick's,
// failed.
func (rs *Rooms) StoreDown() bool { return rs.health.down.Load() }

// RoomInfo is what Rooms knows of a room, for the admin API: its
// configuration, what is in effect, the latest stats (as of the last tick)
// and the estimated wait at the back of the line.
type RoomInfo struct {
	Room      Room
	Effective Effective
	Stats     Stats
	// BackETA is the wait of someone joining now; BackETAOK is false while
	// the rate is unknown or the room admits nobody.
	BackETA   time.Duration
	BackETAOK bool
	// Message is the notice the waiting page shows now.
	Message string
	// Phase is where the room's schedule stands; ShuffleSeed the seed of
	// its opening's shuffle, once drawn ("" before, or without a schedule).
	Phase       Phase
	ShuffleSeed string
	// WaitP50 and WaitP90 are the median and 90th percentile wait of the
	// visitors this instance let in over the last 15 minutes (WaitsOK
	// false without any).
	WaitP50, WaitP90 time.Duration
	WaitsOK          bool
}

// Info describes a room; ok is false for a room not in service.
func (rs *Rooms) Info(name string) (RoomInfo, bool) {
	lr := rs.get(name)
	if lr == nil {
		return RoomInfo{}, false
	}
	eff, st, room := lr.eff.Load(), lr.stats.Load(), lr.room()
	info := RoomInfo{Room: *room, Effective: *eff, Stats: *st, Message: lr.message(), Phase: room.Schedule.Phase(time.Now())}
	info.WaitP50, info.WaitP90, info.WaitsOK = lr.waits.quantiles(time.Now())
	if seed := lr.shuffleSeed.Load(); seed != nil {
		info.ShuffleSeed = *seed
	}
	if rate := admissionRate(st, eff.Limits.AdmitRate); rate > 0 && eff.Limits.MaxActive > 0 {
		info.BackETA = time.Duration(float64(st.Waiting+1)/rate) * time.Second
		info.BackETAOK = true
	}
	return info, true
}

// History returns the room's samples of the last HistorySpan, oldest first.
func (rs *Rooms) History(name string) ([]Sample, bool) {
	lr := rs.get(name)
	if lr == nil {
		return nil, false
	}
	return lr.hist.list(), true
}
