package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/web"
)

// An API room is a room created through the admin API rather than
// written in the file. Its definition lives in the store (Store.
// PutDefinition), so with Redis every instance serves it and it survives
// restarts; with the memory store it lives until this process ends. Each
// instance composes its settings from the file and the definitions
// (compose), with exactly the checks a file gets.

// apiRoom is a definition's body: the room's settings, as the fields of a
// YAML room, and its routes.
type apiRoom struct {
	RoomConfig
	Routes []apiRoute `json:"routes"`
	// Deleting is set by DELETE on a room with people inside (App.
	// DeleteRoom), never by a body: the room stays in service, closed
	// (waitroom.Room.Closing), until its sessions end (finishDeletions).
	Deleting bool `json:"deleting,omitempty"`
}

// apiRoute is a route to an API room: the room is the one it belongs to.
type apiRoute struct {
	Host     string `json:"host"`
	Path     string `json:"path"`
	Upstream string `json:"upstream"`
}

// maxAPIRoutes bounds one API room's routes.
const maxAPIRoutes = 32

// decodeAPIRoom reads a definition body strictly (unknown fields are
// refused, as in the file) over the room defaults a file's room gets.
func decodeAPIRoom(body []byte) (apiRoom, error) {
	d := apiRoom{RoomConfig: RoomConfig{RoomConfig: waitroom.DefaultRoom(), Page: web.DefaultPage()}}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return apiRoom{}, fmt.Errorf("reading the room: %w", err)
	}
	if dec.More() {
		return apiRoom{}, fmt.Errorf("reading the room: data after the JSON object")
	}
	return d, nil
}

// check refuses what an API room may not hold, whatever the file may: a
// page template (a path on this machine's disk) and routes beyond the
// bound. The rest is build's to check.
func (d apiRoom) check() []string {
	var problems []string
	if d.Deleting {
		problems = append(problems, "deleting: set by DELETE /admin/api/rooms/{room} only")
	}
	if d.Page.Template != "" {
		problems = append(problems, "page.template: cannot be set through the API (it names a file on the gateway's disk)")
	}
	if len(d.Routes) == 0 || len(d.Routes) > maxAPIRoutes {
		problems = append(problems, fmt.Sprintf("routes: want 1 to %d routes, got %d", maxAPIRoutes, len(d.Routes)))
	}
	// Every room ticks against the store on every instance: a tick an API
	// caller may shorten at will is Redis load it may multiply.
	if tick, err := time.ParseDuration(d.Tick); err == nil && tick < minAPITick {
		problems = append(problems, fmt.Sprintf("tick: must be at least %s for a room made through the API, got %q", minAPITick, d.Tick))
	}
	for i, rt := range d.Routes {
		if p := strings.ToLower(rt.Path); strings.HasPrefix(p, strings.TrimSuffix(waitroom.Prefix, "/")) {
			problems = append(problems, fmt.Sprintf("routes[%d].path: %s is waitroom's own, got %q", i, waitroom.Prefix, rt.Path))
		}
	}
	return problems
}

// minAPITick is the shortest tick of an API room.
const minAPITick = 50 * time.Millisecond

// inside finds, for a route of room name, a route of another room in
// service (file or API) whose path holds it: a longer prefix there would
// take part of a room in service, a sale's checkout say, out of its line.
// It returns that route's room and path, "" for none.
func inside(s *Settings, name string, rt apiRoute) (room, path string) {
	mine := proxy.RouteConfig{Host: rt.Host, Path: rt.Path}.Place()
	for _, other := range s.Routes {
		if other.Room == "" || other.Room == name {
			continue
		}
		theirs := other.Place()
		if theirs[0] == mine[0] && theirs[1] != mine[1] && strings.HasPrefix(mine[1], theirs[1]) {
			return other.Room, other.Path
		}
	}
	return "", ""
}

var apiRoomName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// composed is what compose made: the settings in service and the
// definitions it had to leave out, with why: their problems joined, keyed
// as in the definition's body.
type composed struct {
	settings *Settings
	skipped  map[string]error
}

// compose adds the API rooms in defs to the file's settings and builds
// the result. A definition that cannot stand beside the file (its name is
// a file room's now, or its route collides with one of the file's) is
// left out, with its problems, and the rest is built again: a reload of
// the file never fails for an API room. The error is the file's own
// problems, which no definition caused.
func compose(file *Settings, defs map[string]apiRoom) (composed, error) {
	skipped := map[string]error{}
	for name := range defs {
		if _, ok := file.Rooms[name]; ok {
			var p conf.Problems
			p.Conflict("name", "a room of the file has the name %s", name)
			skipped[name] = p.Err()
		}
	}
	for range 2 {
		s, err := build(merge(file.Config, defs, skipped))
		if err == nil {
			s.file = file.file
			// What the deployment said at start, not asked again here.
			s.useFailover(file.failover)
			markSources(s, defs, skipped)
			return composed{settings: s, skipped: skipped}, nil
		}
		blamed := blame(conf.Split(err), file.Config, defs, skipped)
		if len(blamed) == 0 {
			return composed{}, &ConfigError{File: "the configuration with the API rooms", Problems: conf.Lines("", err)}
		}
		for name, e := range blamed {
			skipped[name] = e
		}
	}
	return composed{}, fmt.Errorf("composing the API rooms: still refused after leaving out %d", len(skipped))
}

// merge is the file's configuration with the definitions not skipped:
// their rooms added, their routes after the file's.
func merge(file *Config, defs map[string]apiRoom, skipped map[string]error) *Config {
	c := *file
	c.Rooms = make(map[string]RoomConfig, len(file.Rooms)+len(defs))
	for k, v := range file.Rooms {
		c.Rooms[k] = v
	}
	c.Routes = append([]proxy.RouteConfig(nil), file.Routes...)
	for _, name := range sortedKeys(defs) {
		if skipped[name] != nil {
			continue
		}
		d := defs[name]
		c.Rooms[name] = d.RoomConfig
		for _, rt := range d.Routes {
			c.Routes = append(c.Routes, proxy.RouteConfig{Host: rt.Host, Path: rt.Path, Upstream: rt.Upstream, Room: name})
		}
	}
	return &c
}

// blame finds the definitions a build's problems come from by their keys:
// those under their room's key ("rooms.<name>."), and those of their
// routes (by index, in merge's order), each keyed as in the definition's
// body, its kind kept.
func blame(problems []conf.Problem, file *Config, defs map[string]apiRoom, skipped map[string]error) map[string]error {
	routes := map[string]routeOwner{} // by the key in the merged list
	first := map[[2]string]routeOwner{}
	for i, rc := range file.Routes {
		first[rc.Place()] = routeOwner{key: fmt.Sprintf("routes[%d]", i)}
	}
	i := len(file.Routes)
	for _, name := range sortedKeys(defs) {
		if skipped[name] != nil {
			continue
		}
		for j, rt := range defs[name].Routes {
			o := routeOwner{room: name, key: fmt.Sprintf("routes[%d]", j)}
			place := proxy.RouteConfig{Host: rt.Host, Path: rt.Path}.Place()
			if prev, ok := first[place]; ok {
				o.collides = &prev
			} else {
				first[place] = o
			}
			routes[fmt.Sprintf("routes[%d]", i)] = o
			i++
		}
	}
	found := map[string]*conf.Problems{}
	owe := func(name, prefix string, p conf.Problem) {
		if found[name] == nil {
			found[name] = &conf.Problems{}
		}
		found[name].Nest(prefix, p)
	}
	for _, p := range problems {
		for name := range defs {
			if rel, ok := p.Under("rooms." + name + "."); ok && skipped[name] == nil {
				owe(name, "", rel)
			}
		}
		for key, rt := range routes {
			rel, ok := p.Under(key)
			switch {
			case !ok:
			case rel.Key() == "" && rel.Kind == conf.Conflict && rt.collides != nil:
				owe(rt.room, "", rt.collision())
			default:
				owe(rt.room, rt.key, rel)
			}
		}
	}
	out := make(map[string]error, len(found))
	for name, ps := range found {
		out[name] = ps.Err()
	}
	return out
}

// routeOwner is an API room's route: its room, its key in the room's
// body, and the route it collides with, if one took its place first.
type routeOwner struct {
	room, key string
	collides  *routeOwner
}

// collision words a route collision in the body's own terms: the merged
// list's index the router named means nothing to the room's author. A
// body that repeats its own route is invalid, not a conflict: nothing in
// service stands in its way.
func (o routeOwner) collision() conf.Problem {
	var p conf.Problems
	switch c := o.collides; {
	case c.room == o.room:
		p.Add(o.key, "same host and path as %s of this room", c.key)
	case c.room == "":
		p.Conflict(o.key, "same host and path as the file's %s", c.key)
	default:
		p.Conflict(o.key, "same host and path as %s of room %s", c.key, c.room)
	}
	return conf.Split(p.Err())[0]
}

// markSources says where each room in service comes from, for the admin
// API: the file, the API or a template.
func markSources(s *Settings, defs map[string]apiRoom, skipped map[string]error) {
	for i := range s.rooms {
		r := &s.rooms[i]
		switch _, api := defs[r.Name]; {
		case r.Template != "":
			r.Source = waitroom.SourceTemplate
		case api && skipped[r.Name] == nil:
			r.Source = waitroom.SourceAPI
			r.Closing = defs[r.Name].Deleting
		default:
			r.Source = waitroom.SourceFile
		}
	}
	sort.Slice(s.rooms, func(i, j int) bool { return s.rooms[i].Name < s.rooms[j].Name })
}
