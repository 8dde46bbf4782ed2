package main

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/web"
)

// App is one gateway: the visitor listener, the rooms' admitters and the
// store they share.
type App struct {
	cfg      *Config
	log      *zap.Logger
	store    waitroom.Store
	gate     *waitroom.Gate
	tickets  *waitroom.Tickets
	server   *http.Server
	listener net.Listener
	shutdown time.Duration
}

// NewApp wires a validated configuration into a gateway and opens its
// listener, so Addr is known before Run.
func NewApp(cfg *Config, log *zap.Logger) (*App, error) {
	a := &App{cfg: cfg, log: log, shutdown: mustDuration(cfg.Server.ShutdownTimeout)}
	store, err := openStore(cfg.Store, log)
	if err != nil {
		return nil, err
	}
	a.store = store
	handler, err := a.build()
	if err != nil {
		_ = a.store.Close()
		return nil, err
	}
	a.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: mustDuration(cfg.Server.ReadHeaderTimeout),
		IdleTimeout:       mustDuration(cfg.Server.IdleTimeout),
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          stdLog(log.Named("http")),
	}
	a.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = a.store.Close()
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	return a, nil
}

// openStore opens the store the configuration names. A Redis that does not
// answer yet is not an error: the gate follows store.on_error until it does.
func openStore(c StoreConfig, log *zap.Logger) (waitroom.Store, error) {
	if c.Kind != "redis" {
		return memstore.New(), nil
	}
	redis.SetLogger(redisLog{log.Named("redis")})
	s, err := redisstore.Open(c.Redis)
	if err != nil {
		return nil, fmt.Errorf("store.redis: %w", err)
	}
	return s, nil
}

// build makes everything a request passes through: tickets, pages, the gate,
// one reverse proxy per upstream, the router and the bypass rules.
func (a *App) build() (http.Handler, error) {
	cookie, keys, err := a.cfg.Cookie.Build()
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		a.log.Warn("cookie.hash_keys and cookie.block_keys are empty: using random keys; " +
			"every visitor loses their place when waitroom restarts. Set keys for production " +
			"(openssl rand -base64 32)")
		keys = []waitroom.KeyPair{waitroom.GenerateKeyPair()}
	}
	tickets, err := waitroom.NewTickets(cookie, keys)
	if err != nil {
		return nil, err
	}
	a.tickets = tickets
	pages, err := web.New()
	if err != nil {
		return nil, err
	}
	rooms, roomPages := a.rooms()
	resp := web.NewResponder(pages, roomPages)
	a.gate = waitroom.NewGate(a.store, tickets, resp, rooms, waitroom.OnError(a.cfg.Store.OnError), a.log.Named("gate"))

	var trusted []netip.Prefix
	for _, c := range a.cfg.Server.TrustedProxies {
		p, _ := proxy.ParsePrefix(c) // validated
		trusted = append(trusted, p)
	}
	bypass, err := proxy.NewBypass(a.cfg.Bypass)
	if err != nil {
		return nil, err
	}
	var drop []string
	if h := bypass.HeaderName(); h != "" {
		drop = append(drop, h) // the bypass secret is for waitroom, not the site
	}
	upstreams := make(map[string]http.Handler, len(a.cfg.Upstreams))
	for name, uc := range a.cfg.Upstreams {
		up, err := proxy.NewUpstream(name, uc, proxy.Options{
			Log:            a.log.Named("proxy"),
			ErrorPage:      pages.Error,
			OnRelease:      a.release,
			OwnCookie:      a.ownCookie(tickets),
			TrustedProxies: trusted,
			DropHeaders:    drop,
			OnUpgrade:      a.gate.KeepAlive,
		})
		if err != nil {
			return nil, fmt.Errorf("upstreams.%s: %w", name, err)
		}
		upstreams[name] = up
	}
	router, err := proxy.NewRouter(a.cfg.Routes)
	if err != nil {
		return nil, err
	}
	a.gate.RoomOf = func(r *http.Request, path string) string {
		clean, err := proxy.CleanPath(path)
		if err != nil {
			return ""
		}
		route, _ := router.Match(r.Host, clean)
		return route.Room
	}
	front := &frontDoor{router: router, bypass: bypass, upstreams: upstreams, gate: a.gate, pages: pages}
	return chain(front, recoverer(a.log, pages)), nil
}

// ownCookie claims only the cookies of configured rooms, so a site cookie
// that happens to start with "waitroom_" still reaches the site.
func (a *App) ownCookie(t *waitroom.Tickets) func(string) bool {
	names := make(map[string]bool, len(a.cfg.Rooms))
	for room := range a.cfg.Rooms {
		names[t.CookieName(room)] = true
	}
	return func(name string) bool { return names[name] }
}

func (a *App) rooms() ([]waitroom.Room, map[string]web.Page) {
	rooms := make([]waitroom.Room, 0, len(a.cfg.Rooms))
	pages := make(map[string]web.Page, len(a.cfg.Rooms))
	for _, name := range sortedKeys(a.cfg.Rooms) {
		rc := a.cfg.Rooms[name]
		room, _ := rc.RoomConfig.Build(name) // validated
		page, _ := rc.Page.Build()
		room.Refresh = page.Refresh
		rooms = append(rooms, room)
		pages[name] = page
	}
	return rooms, pages
}

// release ends the session of the visitor an upstream response named with
// "Waitroom-Command: release", and ends its ticket too: a finished visitor
// who comes back joins at the back, and its cookie no longer carries an
// admission that store.on_error: closed would honour.
func (a *App) release(res *http.Response) {
	r := res.Request
	room, visitor := r.Header.Get(waitroom.RoomHeader), r.Header.Get(waitroom.VisitorHeader)
	if room == "" || visitor == "" {
		return
	}
	a.tickets.Expire(res.Header, room)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := a.store.Release(ctx, room, visitor); err != nil && !errors.Is(err, waitroom.ErrNotFound) {
		a.log.Warn("releasing on upstream command", zap.String("room", room), zap.String("visitor", visitor), zap.Error(err))
		return
	}
	a.log.Info("released on upstream command", zap.String("room", room), zap.String("visitor", visitor))
}

// stdLog routes net/http's own complaints (TLS handshakes, bad requests) to
// zap at warn.
func stdLog(log *zap.Logger) *stdlog.Logger {
	l, err := zap.NewStdLogAt(log, zap.WarnLevel)
	if err != nil {
		return zap.NewStdLog(log)
	}
	return l
}

// Addr is the visitor listener's address.
func (a *App) Addr() net.Addr { return a.listener.Addr() }

// Run serves visitors and runs the admitters until ctx is done, then drains
// in-flight requests for up to server.shutdown_timeout.
func (a *App) Run(ctx context.Context) error {
	a.log.Info("waitroom listening", zap.String("addr", a.Addr().String()), zap.Int("rooms", len(a.cfg.Rooms)), zap.String("version", buildVersion()))
	g, gctx := errgroup.WithContext(ctx)
	for _, ad := range a.gate.Admitters() {
		g.Go(func() error { return ad.Run(gctx) })
	}
	g.Go(func() error {
		if err := a.server.Serve(a.listener); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving visitors: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		a.log.Info("shutting down; draining in-flight requests", zap.Duration("timeout", a.shutdown))
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.shutdown)
		defer cancel()
		if err := a.server.Shutdown(sctx); err != nil {
			// Past the deadline: cut what is left, WebSockets included.
			_ = a.server.Close()
			return fmt.Errorf("draining requests: %w", err)
		}
		return nil
	})
	return g.Wait()
}

// Close releases the store. Run must have returned.
func (a *App) Close() error {
	_ = a.listener.Close()
	return a.store.Close()
}
