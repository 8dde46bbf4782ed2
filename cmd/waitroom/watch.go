package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// settle is how long the file must stay quiet before a reload: an editor
// or a deploy tool that writes in several steps is not read half-way.
const settle = 300 * time.Millisecond

// watchFile reloads when the configuration file changes, until ctx is
// done. It watches the directory, not the file, so an editor that replaces
// the file, or a delete and re-create, is followed (the fsnotify that viper
// uses underneath; viper's own watcher can neither be stopped nor report
// its errors here). A Kubernetes ConfigMap mounts the file as a symlink
// into "..data", itself a symlink that an update swaps: no event names the
// file then, so any event in the directory that changes where the file
// really lives counts too.
func (a *App) watchFile(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Error("cannot watch the configuration file; SIGHUP still reloads", zap.Error(err))
		return
	}
	defer w.Close()
	dir, name := filepath.Split(filepath.Clean(a.path))
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		a.log.Error("cannot watch the configuration file; SIGHUP still reloads", zap.String("dir", dir), zap.Error(err))
		return
	}
	real, _ := filepath.EvalSymlinks(a.path)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			changed := filepath.Base(ev.Name) == name && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0
			if now, err := filepath.EvalSymlinks(a.path); err == nil && now != real {
				real, changed = now, true
			}
			if changed {
				timer.Reset(settle)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			a.log.Warn("watching the configuration file", zap.Error(err))
		case <-timer.C:
			_ = a.Reload("file change")
		}
	}
}
