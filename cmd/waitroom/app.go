package main

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/web"
)

// App is one gateway: the visitor and admin listeners, the store, and the
// rooms that run on it (their live state and admitters, which outlive
// reloads). What a configuration builds for the request path lives in a
// generation that a reload swaps whole.
type App struct {
	log      *zap.Logger
	store    waitroom.Store
	metrics  *metrics.Metrics
	rooms    *waitroom.Rooms
	gen      atomic.Pointer[generation]
	path     string // the file to reload from; "" for none
	watch    bool   // reload when the file changes, too
	loaded   []byte // the file as last loaded, so an unchanged file is a no-op
	reloadMu sync.Mutex

	server, admin     *http.Server
	listener, adminLn net.Listener
	shutdown          time.Duration

	keysOnce sync.Once
	keys     waitroom.KeyPair
}

// NewApp wires loaded settings into a gateway and opens its listeners, so
// their addresses are known before Run.
func NewApp(cfg *Settings, log *zap.Logger) (a *App, err error) {
	a = &App{log: log, metrics: metrics.New(), shutdown: cfg.server.shutdown}
	store, err := openStore(cfg.Store, log)
	if err != nil {
		return nil, err
	}
	a.store = metrics.Store(store, a.metrics)
	a.rooms = waitroom.NewRooms(waitroom.RoomsOptions{Store: a.store, Observer: a.metrics, Log: log.Named("rooms")})
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	gen, err := a.build(cfg)
	if err != nil {
		return nil, err
	}
	a.rooms.Apply(cfg.roomsConfig())
	a.gen.Store(gen)
	a.server = &http.Server{
		Handler:           chain(&frontDoor{app: a}, recoverer(log, gen.pages)),
		ReadHeaderTimeout: cfg.server.readHeader,
		IdleTimeout:       cfg.server.idle,
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          stdLog(log.Named("http")),
	}
	if a.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	if cfg.Server.ProxyProtocol {
		a.listener = proxy.ProxyProtocolListener(a.listener, cfg.trusted, cfg.server.readHeader)
	}
	if cfg.Admin.Listen == "" {
		return a, nil
	}
	a.admin = &http.Server{
		Handler: web.NewAdmin(web.AdminOptions{
			Token: cfg.Admin.Token, Rooms: a.rooms,
			Pages: gen.pages, Metrics: a.metrics.Handler(), Ready: a.ready, Log: log.Named("admin"),
		}),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: stdLog(log.Named("admin")),
	}
	if a.adminLn, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
		return nil, fmt.Errorf("listening on admin.listen %s: %w", cfg.Admin.Listen, err)
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

// randomKeys are the ticket keys used when none are configured: made once
// per process, so a reload does not void every ticket.
func (a *App) randomKeys() waitroom.KeyPair {
	a.keysOnce.Do(func() {
		a.log.Warn("cookie.hash_keys and cookie.block_keys are empty: using random keys; " +
			"every visitor loses their place when waitroom restarts. Set keys for production " +
			"(openssl rand -base64 32)")
		a.keys = waitroom.GenerateKeyPair()
	})
	return a.keys
}

// ready is /readyz: a configuration is in service and the store answers.
func (a *App) ready(ctx context.Context) error {
	if a.gen.Load() == nil {
		return errors.New("no configuration loaded")
	}
	return a.store.Ping(ctx)
}

// current is the generation in service.
func (a *App) current() *generation { return a.gen.Load() }

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

// AdminAddr is the admin listener's address; nil when it is off.
func (a *App) AdminAddr() net.Addr {
	if a.adminLn == nil {
		return nil
	}
	return a.adminLn.Addr()
}

// Run serves visitors and the admin API and runs the admitters until ctx is
// done, then drains in-flight requests for up to server.shutdown_timeout.
// SIGHUP, and a change of the watched file, reload the configuration.
func (a *App) Run(ctx context.Context) error {
	a.log.Info("waitroom listening", zap.String("addr", a.Addr().String()),
		zap.Int("rooms", len(a.current().cfg.Rooms)), zap.String("version", buildVersion()))
	hup, stop := hangups()
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.rooms.Run(gctx) })
	g.Go(func() error { a.watchSignals(gctx, hup); return nil })
	if a.watch {
		g.Go(func() error { a.watchFile(gctx); return nil })
	}
	serve := func(srv *http.Server, ln net.Listener, what string) {
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serving %s: %w", what, err)
			}
			return nil
		})
		g.Go(func() error { return a.drain(ctx, gctx, srv, what) })
	}
	serve(a.server, a.listener, "visitors")
	if a.admin != nil {
		serve(a.admin, a.adminLn, "the admin API")
	}
	return g.Wait()
}

// drain shuts srv down once gctx is done, waiting for in-flight requests
// up to the shutdown timeout, then cutting what is left (WebSockets too).
func (a *App) drain(ctx, gctx context.Context, srv *http.Server, what string) error {
	<-gctx.Done()
	a.log.Info("shutting down; draining in-flight requests", zap.String("listener", what), zap.Duration("timeout", a.shutdown))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("draining %s: %w", what, err)
	}
	return nil
}

// Close releases the listeners and the store. Run must have returned.
func (a *App) Close() error {
	for _, ln := range []net.Listener{a.listener, a.adminLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	if a.store == nil {
		return nil
	}
	return a.store.Close()
}
