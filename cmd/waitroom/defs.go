package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
		a.finishDeletions(ctx)
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

// DeleteRoom removes the API room name. Deleting a room in the middle of a
// sale must never open its paths: while anyone is inside or in line (the
// store's counts, every instance's; a paused room or a pre-queue has a
// line and nobody inside), the room is marked deleting in the
// store and stays in service on every instance, closed whatever an
// override says (waitroom.Room.Closing): the people inside finish their
// sessions, everyone else hears "closed" on its paths (not a 404, and not
// a catch-all route that covers them), and finishDeletions removes it once
// its sessions end and its line has gone (a closed room's line leaves or
// is abandoned). With nobody inside or waiting, its routes go at once.
func (a *App) DeleteRoom(ctx context.Context, name string) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if _, ok := a.file.Rooms[name]; ok {
		return &web.RoomConflict{Reason: "room " + name + " is written in the configuration file; remove it there"}
	}
	if d, ok := a.defs[name]; ok && d.Deleting {
		return nil // closing already: a second DELETE changes nothing
	}
	st, err := a.store.Stats(ctx, name)
	if err != nil {
		return err
	}
	if st.Active > 0 || st.Waiting > 0 {
		return a.markDeleting(ctx, name)
	}
	return a.removeDefinition(ctx, name, nil)
}

// markDeleting writes the stored body of name again with "deleting" set,
// so every instance serves the room closed, and serves it so here at
// once. Called under reloadMu.
func (a *App) markDeleting(ctx context.Context, name string) error {
	all, err := a.store.LoadDefinitions(ctx)
	if err != nil {
		return err
	}
	raw, ok := all.Bodies[name]
	if !ok {
		return fmt.Errorf("deleting room %q: %w", name, waitroom.ErrNotFound)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("deleting room %q: its stored body does not read: %w", name, err)
	}
	fields["deleting"] = json.RawMessage("true")
	body, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	d, err := decodeAPIRoom(body)
	if err != nil {
		return fmt.Errorf("deleting room %q: %w", name, err)
	}
	v, err := a.store.PutDefinition(ctx, name, body, waitroom.PutReplace)
	if err != nil {
		return err
	}
	defs := maps.Clone(a.defs)
	if defs == nil {
		defs = map[string]apiRoom{}
	}
	defs[name] = d
	if _, err := a.serve(a.file, defs, v); err != nil {
		return err
	}
	a.log.Info("API room closing: it is removed once the sessions inside end", zap.String("room", name))
	return nil
}

// removeDefinition deletes the definition of name from the store (only
// while its body is only, when only is not nil) and serves the rest: the
// room's routes go. Called under reloadMu.
func (a *App) removeDefinition(ctx context.Context, name string, only []byte) error {
	v, err := a.store.DeleteDefinition(ctx, name, only)
	if err != nil {
		return err
	}
	defs := maps.Clone(a.defs)
	delete(defs, name)
	if _, err := a.serve(a.file, defs, v); err != nil {
		return err
	}
	a.log.Info("API room deleted", zap.String("room", name))
	return nil
}

// finishDeletions removes each room marked deleting whose sessions have
// all ended. Every instance runs it after each look at the store
// (syncDefinitions); the first to see the room empty deletes it, and the
// others follow the version. In a closing room nobody is admitted and
// nobody joins, so the counts it reads can only fall. The delete names the
// closing body it read: a PUT on another instance since (which brings the
// room back) is newer than this instance's copy, and stays.
func (a *App) finishDeletions(ctx context.Context) {
	a.reloadMu.Lock()
	var closing []string
	for name, d := range a.defs {
		if d.Deleting {
			closing = append(closing, name)
		}
	}
	a.reloadMu.Unlock()
	sort.Strings(closing)
	for _, name := range closing {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := a.store.Stats(sctx, name)
		if err == nil && st.Active == 0 && st.Waiting == 0 {
			a.reloadMu.Lock()
			if d, ok := a.defs[name]; ok && d.Deleting {
				err = a.finishDeletion(sctx, name)
			}
			a.reloadMu.Unlock()
		}
		cancel()
		if err != nil && !errors.Is(err, waitroom.ErrNotFound) && !errors.Is(err, waitroom.ErrChanged) && ctx.Err() == nil {
			a.log.Debug("finishing the deletion of an API room", zap.String("room", name), zap.Error(err))
		}
	}
}

// finishDeletion removes name if the store still holds it closing: the
// body read here is the only one the delete may remove. Called under
// reloadMu.
func (a *App) finishDeletion(ctx context.Context, name string) error {
	all, err := a.store.LoadDefinitions(ctx)
	if err != nil {
		return err
	}
	body, ok := all.Bodies[name]
	if !ok {
		return waitroom.ErrNotFound
	}
	if d, err := decodeAPIRoom(body); err != nil || !d.Deleting {
		return waitroom.ErrChanged // brought back (or not ours to judge): the next look serves it
	}
	return a.removeDefinition(ctx, name, body)
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
