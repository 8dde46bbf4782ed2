package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/web"
)

// defsPoll is how often an instance asks the store whether the API rooms
// changed: one small read, so another instance's change is served here
// within it.
const defsPoll = 500 * time.Millisecond

var _ web.RoomDefiner = (*App)(nil)

// loadDefinitions reads the API rooms from the store. A body that no
// longer reads (a field this build does not know) is left out and logged,
// never fatal.
func (a *App) loadDefinitions(ctx context.Context) (map[string]apiRoom, int64, error) {
	all, err := a.store.LoadDefinitions(ctx)
	if err != nil {
		return nil, 0, err
	}
	defs := make(map[string]apiRoom, len(all.Bodies))
	for name, body := range all.Bodies {
		d, err := decodeAPIRoom(body)
		if err != nil {
			a.log.Error("an API room's definition does not read; it is left out", zap.String("room", name), zap.Error(err))
			continue
		}
		defs[name] = d
	}
	return defs, all.Version, nil
}

// serve puts the file's settings with the API rooms defs in service: a new
// generation, the rooms applied. The caller holds reloadMu. Definitions
// that cannot stand beside the file are left out and logged.
func (a *App) serve(file *Settings, defs map[string]apiRoom, version int64) (*Settings, error) {
	c, err := compose(file, defs)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(c.skipped) {
		a.log.Error("an API room is left out: it cannot stand beside the configuration file",
			zap.String("room", name), zap.Strings("problems", conf.Lines("", c.skipped[name])))
	}
	gen, err := a.build(c.settings)
	if err != nil {
		return nil, err
	}
	for _, name := range a.rooms.Apply(c.settings.roomsConfig()) {
		a.log.Info("room removed; its visitors are told it is closed", zap.String("room", name))
	}
	a.hooks.use(a, c.settings.Webhooks, c.settings.webhooks, c.settings.delivery)
	old := a.gen.Swap(gen)
	if old != nil {
		old.close()
	}
	a.file, a.defs, a.defsVersion = file, defs, version
	return c.settings, nil
}

// syncDefinitions follows the API rooms in the store until ctx is done:
// when their version moves (a change through any instance), this instance
// serves the new set.
func (a *App) syncDefinitions(ctx context.Context) {
	t := time.NewTicker(defsPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.refreshDefinitions(ctx, false); err != nil && ctx.Err() == nil {
			a.log.Debug("reading the API rooms", zap.Error(err))
		}
	}
}

// refreshDefinitions serves the store's API rooms if they changed (or
// always, with force).
func (a *App) refreshDefinitions(ctx context.Context, force bool) error {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := a.store.DefinitionsVersion(rctx)
	if err != nil {
		return err
	}
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if v == a.defsVersion && !force {
		return nil
	}
	defs, v, err := a.loadDefinitions(rctx)
	if err != nil {
		return err
	}
	if _, err := a.serve(a.file, defs, v); err != nil {
		a.log.Error("the API rooms changed but could not be served; the running set stays", zap.Error(err))
		return err
	}
	a.log.Info("API rooms changed", zap.Int("api_rooms", len(defs)), zap.Int64("version", v))
	return nil
}

// DefineRoom creates (or, with replace, replaces) the API room name from
// a request body: the room's settings as top-level fields and its routes.
// It is checked as a file's room is, beside everything in service, then
// written to the store and served here at once (elsewhere within
// defsPoll).
func (a *App) DefineRoom(ctx context.Context, name string, body []byte, replace bool) error {
	if !apiRoomName.MatchString(name) {
		return &web.RoomProblems{Problems: []string{"name: must be 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit, got " + fmt.Sprintf("%q", name)}}
	}
	d, err := decodeAPIRoom(body)
	if err != nil {
		return &web.RoomProblems{Problems: []string{err.Error()}}
	}
	if problems := d.check(); len(problems) > 0 {
		return &web.RoomProblems{Problems: problems}
	}
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if _, ok := a.file.Rooms[name]; ok {
		return &web.RoomConflict{Reason: "room " + name + " is written in the configuration file; change it there"}
	}
	defs := make(map[string]apiRoom, len(a.defs)+1)
	for k, v := range a.defs {
		defs[k] = v
	}
	defs[name] = d
	c, err := compose(a.file, defs)
	if err != nil {
		return err
	}
	if problems := c.skipped[name]; problems != nil {
		return refusal(problems)
	}
	for i, rt := range d.Routes {
		if room, path := inside(a.current().cfg, name, rt); room != "" {
			var p conf.Problems
			p.Conflict(fmt.Sprintf("routes[%d].path", i), "inside room %s's route %s, which it would take part of out of its line, got %q", room, path, rt.Path)
			return refusal(p.Err())
		}
	}
	if err := a.displaces(c, name); err != nil {
		return err
	}
	mode := waitroom.PutCreate
	if replace {
		mode = waitroom.PutReplace
	}
	v, err := a.store.PutDefinition(ctx, name, body, mode)
	if err != nil {
		return err
	}
	if _, err := a.serve(a.file, defs, v); err != nil {
		return err
	}
	a.log.Info("API room defined", zap.String("room", name), zap.Bool("replaced", replace))
	return nil
}

// refusal lists an API room's problems under the most pressing of their
// kinds: one route that collides with a route in service makes the whole
// a conflict. The admin API picks the status by that kind.
func refusal(problems error) error {
	r := &web.RoomProblems{}
	for _, p := range conf.Split(problems) {
		r.Kind = max(r.Kind, p.Kind)
		r.Problems = append(r.Problems, p.Error())
	}
	sort.Strings(r.Problems)
	return r
}

// DeleteRoom removes the API room name: its routes go, the people inside
// finish their sessions, those waiting are told it is closed.
func (a *App) DeleteRoom(ctx context.Context, name string) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if _, ok := a.file.Rooms[name]; ok {
		return &web.RoomConflict{Reason: "room " + name + " is written in the configuration file; remove it there"}
	}
	v, err := a.store.DeleteDefinition(ctx, name)
	if err != nil {
		return err
	}
	defs := make(map[string]apiRoom, len(a.defs))
	for k, d := range a.defs {
		if k != name {
			defs[k] = d
		}
	}
	if _, err := a.serve(a.file, defs, v); err != nil {
		return err
	}
	a.log.Info("API room deleted", zap.String("room", name))
	return nil
}

// displaces refuses a definition of name that would push another API
// room out of service: compose leaves out whichever of two colliding
// rooms sorts later, which need not be the newcomer, and a room in service
// must never lose its routes to a later request (README: a route another
// room has is refused). Called under reloadMu.
func (a *App) displaces(c composed, name string) error {
	for _, other := range sortedKeys(c.skipped) {
		if other == name {
			continue
		}
		if _, served := a.current().cfg.Rooms[other]; !served {
			continue // left out already: nothing in service changes
		}
		var p conf.Problems
		p.Conflict("routes", "collides with room %s, which is in service: %s", other, strings.Join(conf.Lines("", c.skipped[other]), "; "))
		return refusal(p.Err())
	}
	return nil
}
