package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"reflect"
	"syscall"

	"go.uber.org/zap"
)

// WatchFile makes the app reload from path on SIGHUP and whenever the file
// changes; Run does the watching.
func (a *App) WatchFile(path string) {
	a.usePath(path)
	a.watch = true
}

// usePath makes path the file SIGHUP reloads from, as loaded now.
func (a *App) usePath(path string) {
	a.path = path
	a.loaded = a.file.fingerprint() // the file's own settings, without the API rooms
}

// hangups registers for SIGHUP; Run calls it before it serves, so that a
// SIGHUP to a gateway that answers always reloads and never kills it.
func hangups() (<-chan os.Signal, func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}

// watchSignals reloads on every SIGHUP until ctx is done.
func (a *App) watchSignals(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := a.access.reopen(); err != nil {
				a.log.Warn("access log", zap.Error(err))
			}
			a.Reload("SIGHUP")
		}
	}
}

// Reload reads the file again and, if it is valid and different, builds a
// new generation completely and swaps it in. Queues stay in the store,
// the rooms keep their live state, requests in flight finish on the
// generation they started on, and the admitters go on with the new
// settings. An invalid file changes nothing: the problems are logged and
// counted, and the running configuration stays.
func (a *App) Reload(why string) error {
	_, err := a.reload(why)
	return err
}

// ReloadNow is POST /admin/api/reload: Reload, saying whether anything
// changed ("ok" or "unchanged") and, when refused, the problems by key.
func (a *App) ReloadNow(context.Context) (string, []string, error) {
	result, err := a.reload("admin API")
	var cerr *ConfigError
	if errors.As(err, &cerr) {
		return "", cerr.Problems, err
	}
	return result, nil, err
}

func (a *App) reload(why string) (string, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	log := a.log.With(zap.String("trigger", why))
	if a.path == "" {
		log.Warn("reload asked, but waitroom was not started from a file")
		return "", errNoFile
	}
	cfg, err := loadConfig(a.path)
	if err != nil {
		a.metrics.Reload("error")
		a.refused = true
		log.Error("configuration not reloaded; the running one stays", zap.Error(err))
		return "", err
	}
	// The file and the page templates it names, as bytes: equal means
	// nothing to do, even after a change only a restart applies.
	fp := cfg.fingerprint()
	if bytes.Equal(fp, a.loaded) {
		a.metrics.Reload("unchanged")
		if a.refused {
			// The operator put back the file in service after a refused
			// edit: say so, or the last word in the log is the refusal.
			log.Info("configuration file valid again; the one in service is unchanged")
			a.refused = false
			return "unchanged", nil
		}
		log.Debug("configuration unchanged")
		return "unchanged", nil
	}
	a.loaded = fp
	old := a.current()
	restart := needsRestart(old.cfg.Config, cfg.Config)
	if len(restart) > 0 {
		log.Warn("these changes need a restart and were not applied; the rest was", zap.Strings("keys", restart))
		cfg.keepRunning(old.cfg)
	}
	// The store is the one started with (a change to it needs a restart),
	// so is its failover figure.
	cfg.useFailover(a.failover)
	if _, err := a.serve(cfg, a.defs, a.defsVersion); err != nil {
		a.metrics.Reload("error")
		a.refused = true
		log.Error("configuration not reloaded; the running one stays", zap.Error(err))
		return "", err
	}
	if a.adminAPI != nil && cfg.Admin.Token != old.cfg.Admin.Token {
		a.adminAPI.SetToken(cfg.Admin.Token)
		log.Info("admin token replaced")
	}
	if a.adminAPI != nil && cfg.Admin.ReleaseToken != old.cfg.Admin.ReleaseToken {
		a.adminAPI.SetReleaseToken(cfg.Admin.ReleaseToken)
		log.Info("admin release token replaced")
	}
	a.metrics.Reload("ok")
	log.Info("configuration reloaded", zap.Int("rooms", len(cfg.Rooms)), zap.Int("routes", len(cfg.Routes)),
		zap.Bool("after_a_refused_file", a.refused))
	a.refused = false
	return "ok", nil
}

// errNoFile: the gateway was not started from a file, so there is nothing
// to reload.
var errNoFile = errors.New("no configuration file to reload")

// needsRestart lists the top-level keys whose change a running gateway
// cannot apply: its listeners and its store.
func needsRestart(old, cur *Config) []string {
	var keys []string
	if old.Listen != cur.Listen {
		keys = append(keys, "listen")
	}
	// on_error, open_after and session_cache are read when a runtime is
	// built: a reload applies them.
	was, is := old.Store, cur.Store
	was.OnError, was.SessionCache, is.OnError, is.SessionCache = "", "", "", ""
	was.OpenAfter, is.OpenAfter = "", ""
	if !reflect.DeepEqual(was, is) {
		keys = append(keys, "store")
	}
	// The admin token is put in service by a reload (App.adminAPI.SetToken);
	// the rest of the section needs a restart.
	was2, is2 := old.Admin, cur.Admin
	was2.Token, was2.TokenFile, is2.Token, is2.TokenFile = "", "", "", ""
	was2.ReleaseToken, was2.ReleaseTokenFile, is2.ReleaseToken, is2.ReleaseTokenFile = "", "", "", ""
	if was2 != is2 {
		keys = append(keys, "admin")
	}
	if !reflect.DeepEqual(old.Server, cur.Server) {
		keys = append(keys, "server")
	}
	if old.Log != cur.Log {
		keys = append(keys, "log")
	}
	if !reflect.DeepEqual(old.TLS, cur.TLS) {
		keys = append(keys, "tls")
	}
	if old.Geo != cur.Geo {
		keys = append(keys, "geo")
	}
	return keys
}

// keepRunning puts back what only a restart can change, so the settings in
// service say what runs: the listeners, the store (but for on_error,
// open_after and session_cache, which a reload applies), the server, the
// log and geo.db_file.
func (s *Settings) keepRunning(old *Settings) {
	c := *s.Config
	admin := c.Admin
	c.Listen, c.Admin, c.Server, c.Log, c.TLS, c.Geo = old.Listen, old.Admin, old.Server, old.Log, old.TLS, old.Geo
	c.Admin.Token, c.Admin.TokenFile = admin.Token, admin.TokenFile
	c.Admin.ReleaseToken, c.Admin.ReleaseTokenFile = admin.ReleaseToken, admin.ReleaseTokenFile
	onError, openAfter, cache := c.Store.OnError, c.Store.OpenAfter, c.Store.SessionCache
	c.Store = old.Store
	c.Store.OnError, c.Store.OpenAfter, c.Store.SessionCache = onError, openAfter, cache
	s.Config, s.server, s.trusted, s.tls = &c, old.server, old.trusted, old.tls
	s.forwarders = old.forwarders
}
