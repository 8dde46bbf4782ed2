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
	a.loaded = fingerprint(path, a.current().cfg)
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
			a.Reload("SIGHUP")
		}
	}
}

// Reload reads the file again and, if it is valid and different, builds a
// new runtime completely and swaps it in. Queues stay in the store, requests
// in flight finish on the runtime they started on, and the admitters
// restart on the new rooms. An invalid file changes nothing: the problems
// are logged and counted, and the running configuration stays.
func (a *App) Reload(why string) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	log := a.log.With(zap.String("trigger", why))
	if a.path == "" {
		log.Warn("reload asked, but waitroom was not started from a file")
		return errors.New("no configuration file to reload")
	}
	cfg, err := loadConfig(a.path)
	if err != nil {
		a.metrics.Reload("error")
		log.Error("configuration not reloaded; the running one stays", zap.Error(err))
		return err
	}
	// The file and the page templates it names, as bytes: equal means
	// nothing to do, even after a change only a restart applies.
	fp := fingerprint(a.path, cfg)
	if bytes.Equal(fp, a.loaded) {
		a.metrics.Reload("unchanged")
		log.Debug("configuration unchanged")
		return nil
	}
	a.loaded = fp
	old := a.current()
	restart := needsRestart(old.cfg, cfg)
	if len(restart) > 0 {
		log.Warn("these changes need a restart and were not applied; the rest was", zap.Strings("keys", restart))
		// Keep what only a restart can change, so the runtime says what runs.
		cfg.Listen, cfg.Store, cfg.Admin, cfg.Server, cfg.Log = old.cfg.Listen, old.cfg.Store, old.cfg.Admin, old.cfg.Server, old.cfg.Log
	}
	rt, err := a.build(cfg)
	if err != nil {
		a.metrics.Reload("error")
		log.Error("configuration not reloaded; the running one stays", zap.Error(err))
		return err
	}
	rt.gate.Adopt(old.gate)
	a.rt.Store(rt)
	for name := range old.cfg.Rooms {
		if _, ok := cfg.Rooms[name]; !ok {
			log.Info("room removed; its visitors are told it is closed", zap.String("room", name))
		}
	}
	select {
	case a.swapped <- struct{}{}:
	default: // a restart is already due
	}
	old.close()
	a.metrics.Reload("ok")
	log.Info("configuration reloaded", zap.Int("rooms", len(cfg.Rooms)), zap.Int("routes", len(cfg.Routes)))
	return nil
}

// fingerprint is the configuration file's bytes followed by those of every
// room's page template, in room order.
func fingerprint(path string, cfg *Config) []byte {
	out, _ := os.ReadFile(path)
	for _, name := range sortedKeys(cfg.Rooms) {
		if t := cfg.Rooms[name].Page.Template; t != "" {
			b, _ := os.ReadFile(t)
			out = append(append(out, 0), b...)
		}
	}
	return out
}

// needsRestart lists the top-level keys whose change a running gateway
// cannot apply: its listeners and its store.
func needsRestart(old, cur *Config) []string {
	var keys []string
	if old.Listen != cur.Listen {
		keys = append(keys, "listen")
	}
	// on_error and session_cache are read when a runtime is built: a
	// reload applies them.
	was, is := old.Store, cur.Store
	was.OnError, was.SessionCache, is.OnError, is.SessionCache = "", "", "", ""
	if !reflect.DeepEqual(was, is) {
		keys = append(keys, "store")
	}
	if old.Admin != cur.Admin {
		keys = append(keys, "admin")
	}
	if !reflect.DeepEqual(old.Server, cur.Server) {
		keys = append(keys, "server")
	}
	if old.Log != cur.Log {
		keys = append(keys, "log")
	}
	return keys
}
