package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/web"
)

// generation is everything one configuration builds for the request path:
// tickets, pages, the gate, one reverse proxy per upstream, the router and
// the bypass rules. A reload builds a new one completely, then swaps it in
// whole; the store and the rooms' live state (App.rooms) are not part of
// it, so they outlive it.
type generation struct {
	cfg       *Settings
	log       *zap.Logger
	tickets   *waitroom.Tickets
	pages     *web.Pages
	gate      *waitroom.Gate
	upstreams map[string]*proxy.Upstream
}

// build makes the generation for settings s; a is the application it serves.
func (a *App) build(s *Settings) (*generation, error) {
	g := &generation{cfg: s, log: a.log}
	keys := s.keys
	if len(keys) == 0 {
		keys = []waitroom.KeyPair{a.randomKeys()}
	}
	var err error
	if g.tickets, err = waitroom.NewTickets(s.cookie, keys); err != nil {
		return nil, err
	}
	if g.pages, err = web.New(); err != nil {
		return nil, err
	}
	// Challenges are signed with keys derived from the ticket keys, so
	// every instance checks what any issued and a key rotation carries them.
	derived := make([][]byte, len(keys))
	for i, k := range keys {
		derived[i] = challenge.DeriveKey(k.Hash, "challenge")
	}
	challenges, err := challenge.New(derived...)
	if err != nil {
		return nil, fmt.Errorf("building challenge keys: %w", err)
	}
	g.gate = waitroom.NewGate(waitroom.GateOptions{
		Rooms: a.rooms, Tickets: g.tickets, Responder: web.NewResponder(g.pages, s.pages),
		RoomOf: g.roomOf, Client: proxy.Client, Networks: s.networks, Challenges: challenges, Log: a.log.Named("gate"),
	})
	if err := g.buildUpstreams(a); err != nil {
		return nil, err
	}
	return g, nil
}

// roomOf is the room of the route a Referer path points into.
func (g *generation) roomOf(r *http.Request, path string) string {
	clean, err := proxy.CleanPath(path)
	if err != nil {
		return ""
	}
	route, _ := g.cfg.router.Match(r.Host, clean)
	return route.Room
}

func (g *generation) buildUpstreams(a *App) error {
	var drop []string
	if h := g.cfg.bypass.HeaderName(); h != "" {
		drop = append(drop, h) // the bypass secret is for waitroom, not the site
	}
	g.upstreams = make(map[string]*proxy.Upstream, len(g.cfg.upstreams))
	for name, settings := range g.cfg.upstreams {
		up, err := proxy.NewUpstream(name, settings, proxy.Options{
			Log:            a.log.Named("proxy"),
			ErrorPage:      g.pages.Error,
			OnRelease:      g.release(a.rooms),
			OwnCookie:      g.ownCookie(),
			TrustedProxies: g.cfg.trusted,
			DropHeaders:    drop,
			OnDone: func(r *http.Request, status int, d time.Duration) {
				a.metrics.Upstream(name, status, d)
			},
		})
		if err != nil {
			return fmt.Errorf("upstreams.%s: %w", name, err)
		}
		g.upstreams[name] = up
	}
	return nil
}

// close lets go of a generation a reload replaced: requests still on its
// upstreams finish; idle connections are dropped.
func (g *generation) close() {
	for _, up := range g.upstreams {
		_ = up.Close()
	}
}

// ownCookie claims only the cookies of configured rooms, so a site cookie
// that happens to start with "waitroom_" still reaches the site.
func (g *generation) ownCookie() func(string) bool {
	names := make(map[string]bool, len(g.cfg.Rooms))
	for room := range g.cfg.Rooms {
		names[g.tickets.CookieName(room)] = true
	}
	return func(name string) bool { return names[name] }
}

// release ends the session of the visitor an upstream response named with
// "Waitroom-Command: release", and ends its ticket too: a finished visitor
// who comes back joins at the back, and its cookie no longer carries an
// admission that store.on_error: closed would honour.
func (g *generation) release(rooms *waitroom.Rooms) func(res *http.Response) {
	return func(res *http.Response) {
		r := res.Request
		room, visitor := r.Header.Get(waitroom.RoomHeader), r.Header.Get(waitroom.VisitorHeader)
		if room == "" || visitor == "" {
			return
		}
		g.tickets.Expire(res.Header, room)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		if err := rooms.Release(ctx, room, visitor, "upstream"); err != nil && !errors.Is(err, waitroom.ErrNotFound) {
			g.log.Warn("releasing on upstream command", zap.String("room", room), zap.String("visitor", visitor), zap.Error(err))
			return
		}
		g.log.Info("released on upstream command", zap.String("room", room), zap.String("visitor", visitor))
	}
}
