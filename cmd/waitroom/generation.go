package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/web"
)

// runtime is everything a configuration builds and a request passes
// through: tickets, pages, the gate and its rooms, one reverse proxy per
// upstream, the router and the bypass rules. A reload builds a new one
// completely, then swaps it in whole; the store is not part of it.
type runtime struct {
	cfg       *Config
	log       *zap.Logger
	tickets   *waitroom.Tickets
	pages     *web.Pages
	gate      *waitroom.Gate
	router    *proxy.Router
	bypass    *proxy.Bypass
	upstreams map[string]*proxy.Upstream
}

// build makes a runtime for cfg; a is the application it serves.
func (a *App) build(cfg *Config) (*runtime, error) {
	rt := &runtime{cfg: cfg, log: a.log}
	cookie, keys, err := cfg.Cookie.Build()
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		keys = []waitroom.KeyPair{a.randomKeys()}
	}
	if rt.tickets, err = waitroom.NewTickets(cookie, keys); err != nil {
		return nil, err
	}
	if rt.pages, err = web.New(); err != nil {
		return nil, err
	}
	rooms, roomPages := roomsOf(cfg)
	rt.gate = waitroom.NewGate(a.store, rt.tickets, web.NewResponder(rt.pages, roomPages), rooms,
		waitroom.OnError(cfg.Store.OnError), a.log.Named("gate"))
	rt.gate.Observe(a.metrics)
	rt.gate.CacheSessions(mustDuration(cfg.Store.SessionCache))
	if rt.bypass, err = proxy.NewBypass(cfg.Bypass); err != nil {
		return nil, err
	}
	if rt.router, err = proxy.NewRouter(cfg.Routes); err != nil {
		return nil, err
	}
	if err := rt.buildUpstreams(a); err != nil {
		return nil, err
	}
	rt.gate.RoomOf = func(r *http.Request, path string) string {
		clean, err := proxy.CleanPath(path)
		if err != nil {
			return ""
		}
		route, _ := rt.router.Match(r.Host, clean)
		return route.Room
	}
	return rt, nil
}

func (rt *runtime) buildUpstreams(a *App) error {
	var trusted []netip.Prefix
	for _, c := range rt.cfg.Server.TrustedProxies {
		p, _ := proxy.ParsePrefix(c) // validated
		trusted = append(trusted, p)
	}
	var drop []string
	if h := rt.bypass.HeaderName(); h != "" {
		drop = append(drop, h) // the bypass secret is for waitroom, not the site
	}
	rt.upstreams = make(map[string]*proxy.Upstream, len(rt.cfg.Upstreams))
	for name, uc := range rt.cfg.Upstreams {
		up, err := proxy.NewUpstream(name, uc, proxy.Options{
			Log:            a.log.Named("proxy"),
			ErrorPage:      rt.pages.Error,
			OnRelease:      rt.release,
			OwnCookie:      rt.ownCookie(),
			TrustedProxies: trusted,
			DropHeaders:    drop,
			OnUpgrade:      rt.gate.KeepAlive,
			OnDone: func(r *http.Request, status int, d time.Duration) {
				a.metrics.Upstream(name, status, d)
			},
		})
		if err != nil {
			return fmt.Errorf("upstreams.%s: %w", name, err)
		}
		rt.upstreams[name] = up
	}
	return nil
}

// close lets go of a runtime a reload replaced: requests still on its
// upstreams finish; idle connections are dropped.
func (rt *runtime) close() {
	for _, up := range rt.upstreams {
		_ = up.Close()
	}
}

// ownCookie claims only the cookies of configured rooms, so a site cookie
// that happens to start with "waitroom_" still reaches the site.
func (rt *runtime) ownCookie() func(string) bool {
	names := make(map[string]bool, len(rt.cfg.Rooms))
	for room := range rt.cfg.Rooms {
		names[rt.tickets.CookieName(room)] = true
	}
	return func(name string) bool { return names[name] }
}

func roomsOf(cfg *Config) ([]waitroom.Room, map[string]web.Page) {
	rooms := make([]waitroom.Room, 0, len(cfg.Rooms))
	pages := make(map[string]web.Page, len(cfg.Rooms))
	for _, name := range sortedKeys(cfg.Rooms) {
		rc := cfg.Rooms[name]
		room, _ := rc.RoomConfig.Build(name) // validated
		page, _ := rc.Page.Build()
		page.Title = rc.Page.Title
		room.Refresh, room.RefreshMax, room.Title, room.Message = page.Refresh, page.RefreshMax, page.Title, page.Message
		rooms = append(rooms, room)
		pages[name] = page
	}
	return rooms, pages
}

// release ends the session of the visitor an upstream response named with
// "Waitroom-Command: release", and ends its ticket too: a finished visitor
// who comes back joins at the back, and its cookie no longer carries an
// admission that store.on_error: closed would honour.
func (rt *runtime) release(res *http.Response) {
	r := res.Request
	room, visitor := r.Header.Get(waitroom.RoomHeader), r.Header.Get(waitroom.VisitorHeader)
	if room == "" || visitor == "" {
		return
	}
	rt.tickets.Expire(res.Header, room)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := rt.gate.Release(ctx, room, visitor, "upstream"); err != nil && !errors.Is(err, waitroom.ErrNotFound) {
		rt.log.Warn("releasing on upstream command", zap.String("room", room), zap.String("visitor", visitor), zap.Error(err))
		return
	}
	rt.log.Info("released on upstream command", zap.String("room", room), zap.String("visitor", visitor))
}
