package main

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"strings"
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
	"github.com/waitroom/waitroom/waitroom/webhook"
	"github.com/waitroom/waitroom/web"
)

// App is one gateway: the visitor and admin listeners, the store, and the
// rooms that run on it (their live state and admitters, which outlive
// reloads). What a configuration builds for the request path lives in a
// generation that a reload swaps whole.
type App struct {
	log   *zap.Logger
	store waitroom.Store
	// requireNoEviction refuses service on a Redis that may evict
	// (store.redis.require_noeviction).
	requireNoEviction bool
	// readyRequiresStore makes /readyz fail while the store does
	// (admin.ready_requires_store).
	readyRequiresStore bool
	metrics            *metrics.Metrics
	// geo is geo.db_file's database, read at start; nil without one.
	geo      *metrics.Geo
	rooms    *waitroom.Rooms
	gen      atomic.Pointer[generation]
	path     string // the file to reload from; "" for none
	watch    bool   // reload when the file changes, too
	loaded   []byte // the file as last loaded, so an unchanged file is a no-op
	reloadMu sync.Mutex
	// refused: the last reload refused the file (under reloadMu), so the
	// next good one says the file is valid again.
	refused bool
	// file is the configuration file's settings as last loaded, and defs
	// the API rooms (defsVersion their store version) that compose adds to
	// it; all under reloadMu.
	file        *Settings
	defs        map[string]apiRoom
	defsVersion int64

	server, admin     *http.Server
	adminAPI          *web.Admin // admin's handler, whose token a reload may replace
	listener, adminLn net.Listener
	// redirect answers plain HTTP with HTTPS's address (tls.redirect_listen).
	redirect   *http.Server
	redirectLn net.Listener
	shutdown   time.Duration
	lameDuck   *lameDuck // server.shutdown_delay

	keysOnce sync.Once
	keys     waitroom.KeyPair

	connLogged atomic.Int64 // unix nanoseconds of the last connRefused log line
	// passLogged: of the last "signing an admission pass" log line; a
	// client sending ever longer paths must not flood the log.
	passLogged atomic.Int64
	demo       bool       // the demo's App: its random keys are no operator's mistake
	access     *accessLog // nil when log.access is off
	// hooks send webhooks; hooksKey is the webhooks list they were made for.
	hooks    *hooks
	hooksKey string
	// failover is how long a failover of the store takes, learned at
	// start (learnFailover); every configuration served uses it.
	failover failoverFigure
}

// NewApp wires loaded settings into a gateway and opens its listeners, so
// their addresses are known before Run.
func NewApp(cfg *Settings, log *zap.Logger) (a *App, err error) {
	a = &App{log: log, metrics: metrics.New(), shutdown: cfg.server.shutdown, lameDuck: newLameDuck(cfg.server.delay), demo: cfg.demo}
	a.metrics.BuildInfo(buildVersion())
	if a.access, err = openAccessLog(cfg.Log.Access); err != nil {
		return nil, err
	}
	if cfg.Geo.DBFile != "" {
		if a.geo, err = metrics.OpenGeo(cfg.Geo.DBFile); err != nil {
			return nil, err
		}
		a.metrics.SetGeo(a.geo)
	}
	// Declared whatever the store: a dashboard's panel reads 0, not "No
	// data", on the memory store too (which never fails).
	kinds := make([]string, len(redisstore.ErrorKinds))
	for i, k := range redisstore.ErrorKinds {
		kinds[i] = string(k)
	}
	a.metrics.DeclareStoreErrors(kinds)
	store, err := openStore(cfg.Store, log, a.metrics)
	if err != nil {
		return nil, err
	}
	// Before the warnings, which name the figure: how long a failover of
	// this store takes, as its sentinels or nodes say (bounded; never
	// fatal), after openStore has given go-redis this log. A reload keeps
	// it, as it keeps the store.
	a.failover = learnFailover(cfg.Store)
	cfg.useFailover(a.failover)
	if a.failover.learned && cfg.Store.OpenAfter == "" {
		log.Info("store.open_after follows the failover detection time the store reports",
			zap.Duration("open_after", cfg.openAfter), zap.String("source", a.failover.det.Source),
			zap.Duration("detection", a.failover.det.After), zap.Duration("failover_timeout", a.failover.det.FailoverTimeout))
	}
	for _, w := range cfg.warnings {
		log.Warn(w)
	}
	a.store = metrics.Store(store, a.metrics)
	a.requireNoEviction = cfg.Store.Kind == "redis" && cfg.Store.Redis.RequireNoEviction
	a.readyRequiresStore = cfg.Admin.ReadyRequiresStore
	if err := a.checkEviction(log); err != nil {
		_ = a.store.Close()
		return nil, err
	}
	a.hooks = &hooks{claimer: webhook.NewMemoryClaimer(), log: log.Named("webhook")}
	if c, ok := waitroom.As[webhook.Claimer](a.store); ok {
		a.hooks.claimer = c // a shared store: one instance sends each event
	}
	a.rooms = waitroom.NewRooms(waitroom.RoomsOptions{Store: a.store, Observer: a.metrics, Log: log.Named("rooms"), Notifier: a.hooks})
	// The error returns below set a to nil; close the App they built half.
	built := a
	defer func() {
		if err != nil {
			_ = built.Close()
		}
	}()
	// The API rooms, if the store says which now; otherwise they come in
	// with the first syncDefinitions that reaches it.
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defs, version, derr := a.loadDefinitions(dctx)
	dcancel()
	if derr != nil {
		log.Warn("could not read the API rooms at start; they will be served once the store answers", zap.Error(derr))
		version = -1 // whatever the store then says is news
	}
	a.reloadMu.Lock()
	_, err = a.serve(cfg, defs, version)
	a.reloadMu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := a.listen(cfg, log); err != nil {
		return nil, err
	}
	return a, nil
}

// listen makes the visitor and admin servers and opens their listeners,
// with PROXY protocol and the per-client connection cap under the visitor
// listener and TLS when configured.
func (a *App) listen(cfg *Settings, log *zap.Logger) (err error) {
	gen := a.current()
	a.server = &http.Server{
		// Outermost first: the scope exists before the access log wraps
		// the request (the log reads it when the response is done), and
		// the recoverer sits inside both, so a panic's 502 is logged.
		Handler:           chain(&frontDoor{app: a}, withScope, a.access.wrap, cfg.server.deadlines.Handler, recoverer(log, gen.pages)),
		ReadHeaderTimeout: cfg.server.readHeader,
		IdleTimeout:       cfg.server.idle,
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          stdLog(log.Named("http")),
	}
	if a.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	if cfg.Server.ProxyProtocol {
		a.listener = proxy.ProxyProtocolListener(a.listener, cfg.trusted, cfg.server.readHeader)
	}
	a.listener = proxy.ConnLimit{
		Max: cfg.Server.MaxConnsPerClient, V4Bits: cfg.Server.ClientNetworkV4, V6Bits: cfg.Server.ClientNetworkV6,
		Trusted: cfg.trusted, OnRefuse: a.connRefused,
	}.Listener(a.listener)
	if err := a.listenTLS(cfg, log); err != nil {
		return err
	}
	if cfg.Admin.Listen == "" {
		return nil
	}
	switch {
	case cfg.Admin.Token == "" && cfg.demo:
		log.Info("the demo's dashboard and admin API need no token: they listen on this machine only", zap.String("listen", cfg.Admin.Listen))
	case cfg.Admin.Token == "":
		// Allowed on loopback only, and still open to every local process
		// and to any request the site can be made to send here (SSRF).
		log.Warn("the admin API has no token: anything on this machine, or a request the site is tricked into sending (SSRF), can pause, open, admit and release rooms; set admin.token or admin.token_file",
			zap.String("listen", cfg.Admin.Listen))
	}
	a.adminAPI = web.NewAdmin(web.AdminOptions{
		Token: cfg.Admin.Token, ReleaseToken: cfg.Admin.ReleaseToken, Rooms: a.rooms,
		Pages: gen.pages, Metrics: a.metrics.Handler(), Ready: a.ready, Log: log.Named("admin"), Definer: a,
		StoreState: func() waitroom.StoreState { return storeState(a.store, a.rooms.StoreDown()) },
		Reload:     a.ReloadNow, JWKS: func() http.Handler { return a.current().jwks() },
		Preview: a.previewLink, Watch: a.metrics.Watched,
	})
	a.admin = &http.Server{
		Handler:           a.adminAPI,
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: stdLog(log.Named("admin")),
	}
	if a.adminLn, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
		return fmt.Errorf("listening on admin.listen %s: %w", cfg.Admin.Listen, err)
	}
	return nil
}

// openStore opens the store the configuration names. A Redis that does not
// answer yet is not an error: the gate follows store.on_error until it does.
func openStore(c StoreConfig, log *zap.Logger, m *metrics.Metrics) (waitroom.Store, error) {
	if c.Kind != "redis" {
		return memstore.New(), nil
	}
	redis.SetLogger(redisLog{log.Named("redis")})
	s, err := redisstore.Open(c.Redis, redisstore.WithEvents(storeEvents(log.Named("store"), m)))
	if err != nil {
		return nil, fmt.Errorf("store.redis: %w", err)
	}
	return s, nil
}

// randomKeys are the ticket keys used when none are configured: made once
// per process, so a reload does not void every ticket.
func (a *App) randomKeys() waitroom.KeyPair {
	a.keysOnce.Do(func() {
		if a.demo {
			a.log.Info("the demo's tickets last as long as it runs (random keys)")
		} else {
			a.log.Warn("cookie.hash_keys and cookie.block_keys are empty: using random keys; " +
				"every visitor loses their place when waitroom restarts. Set keys for production " +
				"(openssl rand -base64 32)")
		}
		a.keys = waitroom.GenerateKeyPair()
	})
	return a.keys
}

// ready is /readyz: a configuration is in service and the listeners are
// up. The store's state is in the body, not the status: a Redis blip must
// not mark every instance not ready at once, which would hand visitors the
// ingress's error page instead of waitroom's own hold page (unless
// admin.ready_requires_store asks for that). A Redis that may evict keys
// is a warning, or not ready with store.redis.require_noeviction.
func (a *App) ready(ctx context.Context) ([]string, error) {
	if a.gen.Load() == nil {
		return nil, errors.New("no configuration loaded")
	}
	if err := a.lameDuck.ready(); err != nil {
		return nil, err
	}
	if err := a.store.Ping(ctx); err != nil {
		if a.readyRequiresStore {
			return nil, err
		}
		return []string{storeDownLine(a.store, err)}, nil
	}
	lines := []string{"store: up"}
	ev, ok := waitroom.As[evictionPolicy](a.store)
	if !ok {
		return lines, nil
	}
	policy, err := ev.EvictionPolicy(ctx)
	switch {
	case err != nil:
		return append(lines, "warning: could not read Redis's maxmemory-policy: "+err.Error()), nil
	case policy == redisstore.NoEviction:
		return lines, nil
	case a.requireNoEviction:
		return nil, fmt.Errorf("redis maxmemory-policy is %s and store.redis.require_noeviction is set", policy)
	}
	return append(lines, "warning: "+evictionWarning(policy)), nil
}

// evictionPolicy is a store that can say whether it may drop keys under
// memory pressure: redisstore.Store answers with Redis's maxmemory-policy
// (redisstore.NoEviction when it never drops). ready and checkEviction find
// it with waitroom.As.
type evictionPolicy interface {
	EvictionPolicy(ctx context.Context) (string, error)
}

// checkEviction looks at Redis's maxmemory-policy once at start: a policy
// that may evict is logged loudly, or refused with require_noeviction. A
// Redis that does not answer yet is checked again by every /readyz.
func (a *App) checkEviction(log *zap.Logger) error {
	ev, ok := waitroom.As[evictionPolicy](a.store)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	policy, err := ev.EvictionPolicy(ctx)
	switch {
	case err != nil:
		log.Warn("could not read Redis's maxmemory-policy now; /readyz will report it", zap.Error(err))
	case policy == redisstore.NoEviction:
	case a.requireNoEviction:
		return fmt.Errorf("store.redis: Redis's maxmemory-policy is %q and require_noeviction is set; "+
			"run CONFIG SET maxmemory-policy noeviction (or set it in the service's parameter group)", policy)
	default:
		log.Error(evictionWarning(policy), zap.String("maxmemory_policy", policy))
	}
	return nil
}

func evictionWarning(policy string) string {
	return fmt.Sprintf("Redis's maxmemory-policy is %s: under memory pressure Redis may drop a room's line or sessions "+
		"and visitors lose their places silently; set it to noeviction (store.redis.require_noeviction refuses to run otherwise)", policy)
}

// current is the generation in service.
func (a *App) current() *generation { return a.gen.Load() }

// stdLog routes net/http's own complaints (TLS handshakes, bad requests) to
// zap at warn.
func stdLog(log *zap.Logger) *stdlog.Logger {
	return stdlog.New(serverLog{log}, "", 0)
}

// serverLog takes net/http's server messages to zap at warn, but for a
// failed TLS handshake, which scanners and clients with old or wrong
// settings cause all day: at debug, so the log is not a line per probe.
type serverLog struct{ log *zap.Logger }

func (s serverLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := zap.WarnLevel
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = zap.DebugLevel
	}
	if ce := s.log.Check(level, msg); ce != nil {
		ce.Write()
	}
	return len(p), nil
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
// done and server.shutdown_delay has passed, then drains in-flight requests
// for up to server.shutdown_timeout. SIGHUP, and a change of the watched
// file, reload the configuration.
func (a *App) Run(ctx context.Context) error {
	ctx, stopLameDuck := a.lameDuck.wrap(ctx, a.log)
	defer stopLameDuck()
	a.log.Info("waitroom listening", zap.String("addr", a.Addr().String()),
		zap.Int("rooms", len(a.current().cfg.Rooms)), zap.String("version", buildVersion()))
	hup, stop := hangups()
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.rooms.Run(gctx) })
	g.Go(func() error { a.syncDefinitions(gctx); return nil })
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
	if a.redirect != nil {
		serve(a.redirect, a.redirectLn, "the HTTPS redirect")
	}
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
	for _, ln := range []net.Listener{a.listener, a.adminLn, a.redirectLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	_ = a.access.Close()
	_ = a.geo.Close() // nil without geo.db_file
	if a.hooks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.hooks.close(ctx)
		cancel()
	}
	if a.store == nil {
		return nil
	}
	return a.store.Close()
}

// onceAMinute reports whether a log line whose last time last holds may
// be written at now (a minute or more since), recording now if so; of
// concurrent callers, one wins.
func onceAMinute(last *atomic.Int64, now time.Time) bool {
	prev := last.Load()
	return now.UnixNano()-prev >= int64(time.Minute) && last.CompareAndSwap(prev, now.UnixNano())
}

// connRefused counts a connection closed for server.max_conns_per_client
// and says so in the log at most once a minute: a flood must not become a
// flood of log lines.
func (a *App) connRefused(network string) {
	a.metrics.ConnRefused()
	if !onceAMinute(&a.connLogged, time.Now()) {
		return
	}
	a.log.Warn("closing connections over server.max_conns_per_client (logged once a minute)", zap.String("network", network))
}
