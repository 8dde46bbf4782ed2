package waitroom

import (
	"context"
	"errors"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/pattern"
)

// A room template is a room whose name holds a parameter, "event-{id}": a
// route's path parameter fills it per request ("event-123"), and each
// filled room has its own line, limits, ticks and cookie. Metrics carry
// the template's name, so their series do not grow with the events.
//
// Who makes a room, and when it counts. Anyone can type a name, so a
// name alone buys nothing that lasts:
//   - /.waitroom/status, /enter and /leave never make a room; a name
//     nobody has a ticket for is answered as a room where the asker holds
//     none (Gate.endpointRoom).
//   - A route request (or an auth request that joins: Traefik, Envoy)
//     without a ticket makes the room on this instance only to take a
//     ticket, and spends one of its client network's create_limit
//     (Gate.create, counted in the store with Allow); an auth check that
//     joins nobody (nginx, Gate.Check) makes none. A room some instance's
//     store already counts is free.
//   - The store counts a room toward max_rooms (UseRoom) only once a
//     visitor of it came back with its ticket and holds a place or a
//     session (Rooms.count): a newcomer's first request to a room not yet
//     counted still gets its ticket, and a flood of first requests that
//     never return counts nothing. Past max_rooms the returning visitor
//     is told "full".
//   - A room nobody came back to is forgotten after uncountedIdle, one
//     that counts after the template's idle_after (sweepTemplates), once
//     empty and unvisited; its store keys then expire (Limits.Idle). While
//     empty it sleeps and costs the store nothing (sleep.go).

// fill makes the room called name from template t and the values that
// filled it: the template's settings, its page texts with {param}
// replaced, and data that expires once idle.
func (t Room) fill(name string, params []Param) Room {
	r := t
	r.Name, r.Template, r.Source = name, t.Name, SourceTemplate
	r.Params = append([]Param(nil), params...)
	r.Title, r.Message = pattern.FillText(t.Title, params), pattern.FillText(t.Message, params)
	r.Limits.Idle = t.IdleAfter
	return r
}

// label is the name metrics know the room by: its template's, if any.
func (lr *liveRoom) label() string {
	if t := lr.room().Template; t != "" {
		return t
	}
	return lr.name
}

// labelOf is label for the room called name; name itself when it is not
// in service.
func (rs *Rooms) labelOf(name string) string {
	if lr := rs.get(name); lr != nil {
		return lr.label()
	}
	return name
}

// filled reports a room filled in from a template (not a template).
func (lr *liveRoom) filled() bool {
	r := lr.room()
	return r.Template != "" && r.Template != r.Name
}

// ErrUnknownRoom: no room, nor template, of that name is in service.
var ErrUnknownRoom = errors.New("unknown room")

// Fill returns the room template fills as name, making it on this
// instance if it is not in service yet; it does not count it in the store
// (count does, on the first returning ticket). ErrUnknownRoom when there
// is no such template, or its allow list does not name the room. A closed room (the site said it sold out) must not
// take a ticket before its first tick reads the override, so the override
// is read here; a store that cannot answer does not stop a visit.
func (rs *Rooms) Fill(ctx context.Context, template, name string, params []Param) (*liveRoom, error) {
	if lr := rs.get(name); lr != nil {
		rs.visit(ctx, lr)
		return lr, nil
	}
	t := rs.template(template)
	if t == nil || !t.Allows(name) {
		return nil, ErrUnknownRoom
	}
	lr := newLiveRoom(t.fill(name, params))
	if o, err := rs.store.Override(ctx, name); err == nil {
		lr.setOverride(o)
	}
	lr.visited()
	rs.applyMu.Lock()
	defer rs.applyMu.Unlock()
	live := *rs.live.Load()
	if cur := live[name]; cur != nil {
		return cur, nil // another request made it meanwhile
	}
	if rs.template(template) == nil {
		return nil, ErrUnknownRoom // a reload removed the template meanwhile
	}
	next := make(map[string]*liveRoom, len(live)+1)
	for k, v := range live {
		next[k] = v
	}
	next[name] = lr
	rs.live.Store(&next)
	rs.signal()
	return lr, nil
}

// unfill finds the template that fills as name and the values it takes:
// "event-123" is "event-{id}" with id 123, as the router fills it. ok is
// false when no template in service makes name.
func (rs *Rooms) unfill(name string) (string, []Param, bool) {
	t := rs.templates.Load()
	if t == nil {
		return "", nil, false
	}
	for tname := range *t {
		pt, err := pattern.ParseTemplate(tname)
		if err != nil {
			continue // not a name the configuration lets through
		}
		if params, ok := pt.Match(name); ok && (*t)[tname].Allows(name) {
			return tname, params, true
		}
	}
	return "", nil, false
}

// TemplateInfo is a room template in service, for the admin API: its
// name, its bounds and the rooms it fills on this instance now.
type TemplateInfo struct {
	Name      string
	MaxRooms  int
	IdleAfter time.Duration
	Rooms     int
}

// Templates lists the room templates in service, sorted by name.
func (rs *Rooms) Templates() []TemplateInfo {
	t := rs.templates.Load()
	if t == nil {
		return nil
	}
	count := map[string]int{}
	for _, lr := range *rs.live.Load() {
		if lr.filled() {
			count[lr.room().Template]++
		}
	}
	out := make([]TemplateInfo, 0, len(*t))
	for name, r := range *t {
		out = append(out, TemplateInfo{Name: name, MaxRooms: r.MaxRooms, IdleAfter: r.IdleAfter, Rooms: count[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// template is the template called name in service, nil for none.
func (rs *Rooms) template(name string) *Room {
	if t := rs.templates.Load(); t != nil {
		return (*t)[name]
	}
	return nil
}

// visited notes a request for the room on this instance, for forget and
// for a tick deciding whether the room may sleep.
func (lr *liveRoom) visited() {
	lr.lastVisit.Store(time.Now().UnixNano())
	lr.visits.Add(1)
}

// sweepTemplates forgets the filled rooms that are empty and unvisited
// for their template's idle_after, tells the store the others are still in
// use, and publishes each template's rooms and summed stats.
func (rs *Rooms) sweepTemplates(ctx context.Context) {
	now := time.Now()
	live := *rs.live.Load()
	sums := map[string]*templateSum{}
	var idle []string
	for name, lr := range live {
		if !lr.filled() {
			continue
		}
		r, st := lr.room(), lr.stats.Load()
		sum := sums[r.Template]
		if sum == nil {
			sum = &templateSum{}
			sums[r.Template] = sum
		}
		empty := st.Waiting == 0 && st.Active == 0
		unvisited := now.Sub(time.Unix(0, lr.lastVisit.Load())) > lr.idleAfter()
		if empty && unvisited {
			idle = append(idle, name)
			continue
		}
		sum.rooms++
		sum.stats.add(*st)
		if v := lr.eff.Load().Autopilot; v != nil {
			sum.autopilot.add(v)
		}
		if lr.counted.Load() && now.Sub(time.Unix(0, lr.lastUse.Load())) > r.IdleAfter/4 {
			rs.keepCounted(ctx, lr, r)
		}
	}
	if len(idle) > 0 {
		rs.forget(idle)
	}
	if t := rs.templates.Load(); t != nil {
		for name := range *t {
			sum := sums[name]
			if sum == nil {
				sum = &templateSum{}
			}
			rs.obs.Room(name, sum.stats)
			rs.obs.TemplateRooms(name, sum.rooms)
			if ob, ok := rs.obs.(AutopilotObserver); ok && (*t)[name].Autopilot != nil {
				ob.Autopilot(name, &sum.autopilot)
			}
		}
	}
}

type templateSum struct {
	rooms     int
	stats     Stats
	autopilot AutopilotView // summed as autopilot_metrics.go says
}

// add sums what adds up across rooms.
func (s *Stats) add(o Stats) {
	s.Waiting += o.Waiting
	s.Active += o.Active
	s.AdmittedLastMinute += o.AdmittedLastMinute
	s.MeasuredOver = max(s.MeasuredOver, o.MeasuredOver)
	s.Joined += o.Joined
	s.AdmittedTotal += o.AdmittedTotal
	s.Released += o.Released
	s.Expired += o.Expired
	s.Abandoned += o.Abandoned
	s.Issued += o.Issued
	s.Limited += o.Limited
	s.Full += o.Full
}

// forget drops filled rooms from service, unless a visit came meanwhile.
func (rs *Rooms) forget(names []string) {
	rs.applyMu.Lock()
	defer rs.applyMu.Unlock()
	live := *rs.live.Load()
	next := make(map[string]*liveRoom, len(live))
	for k, v := range live {
		next[k] = v
	}
	for _, name := range names {
		if lr := next[name]; lr != nil && time.Since(time.Unix(0, lr.lastVisit.Load())) > lr.idleAfter() {
			delete(next, name)
			rs.log.Debug("forgot an idle room", zap.String(fieldRoom, name))
		}
	}
	rs.live.Store(&next)
	rs.signal()
}

// signal tells Run the rooms changed.
func (rs *Rooms) signal() {
	select {
	case rs.changed <- struct{}{}:
	default: // Run has a reconcile due already
	}
}

// templateClock is how often sweepTemplates runs.
const templateClock = time.Second
