package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// configMapDir lays out dir as Kubernetes mounts a ConfigMap: the file a
// symlink into "..data", itself a symlink to a timestamped directory.
func configMapDir(t *testing.T, dir, version, yaml string) {
	t.Helper()
	data := filepath.Join(dir, "..2026_11_23_"+version)
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "waitroom.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(data), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "waitroom.yaml")
	if _, err := os.Lstat(link); os.IsNotExist(err) {
		if err := os.Symlink("..data/waitroom.yaml", link); err != nil {
			t.Fatal(err)
		}
	}
}

// A ConfigMap update (the ..data symlink swapped) reloads once.
func TestWatch_ConfigMapSymlinkSwap(t *testing.T) {
	_, site := newUpstream(t)
	dir := t.TempDir()
	before := gwConfig(site.URL, "    max_active: 1\n    tick: 50ms")
	configMapDir(t, dir, "a", before)
	path := filepath.Join(dir, "waitroom.yaml")
	core, logs := observer.New(zapcore.InfoLevel)
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	app.WatchFile(path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; _ = app.Close() })
	time.Sleep(200 * time.Millisecond) // the watcher is up
	configMapDir(t, dir, "b", strings.Replace(before, "max_active: 1", "max_active: 7", 1))
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_23_a")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { return app.current().cfg.Rooms["concert"].MaxActive == 7 })
	time.Sleep(2 * settle)
	if n := logs.FilterMessage("configuration reloaded").Len(); n != 1 {
		t.Fatalf("%d reloads for one ConfigMap update, want 1", n)
	}
}

// POST /admin/api/reload answers the problems of a broken file and keeps
// the running configuration; a good file is applied.
func TestAdmin_ReloadEndpoint(t *testing.T) {
	_, site := newUpstream(t)
	good := gwConfig(site.URL, "    max_active: 1")
	app, _, path, _ := fileGateway(t, good, false)
	admin := newAdmin(t, app)
	rewrite(t, path, strings.Replace(good, "max_active: 1", "max_active: -3", 1))
	code, v, body := admin.do("POST", "/admin/api/reload", "")
	if code != http.StatusBadRequest || !strings.Contains(body, "rooms.concert.max_active: must be >= 0") || v["result"] != "refused" {
		t.Fatalf("a broken file: %d %s", code, body)
	}
	if app.current().cfg.Rooms["concert"].MaxActive != 1 {
		t.Fatal("the running configuration changed")
	}
	rewrite(t, path, strings.Replace(good, "max_active: 1", "max_active: 4", 1))
	if code, v, body := admin.do("POST", "/admin/api/reload", ""); code != 200 || v["result"] != "ok" {
		t.Fatalf("a good file: %d %s", code, body)
	}
	if code, v, _ := admin.do("POST", "/admin/api/reload", ""); code != 200 || v["result"] != "unchanged" {
		t.Fatalf("the same file again: %d %v", code, v)
	}
	if app.current().cfg.Rooms["concert"].MaxActive != 4 {
		t.Fatal("the good file was not applied")
	}
}

// Redis stopped: /readyz stays 200 with the store's state in its body, or
// 503 with admin.ready_requires_store.
func TestReadyz_StoreStateInTheBody(t *testing.T) {
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 1", srv.Addr(), "closed", "")
	relaxed, _ := startGateway(t, cfg)
	strict, _ := startGateway(t, strings.Replace(cfg, "admin: {", "admin: { ready_requires_store: true,", 1))
	probe := func(app *App) (int, string) {
		code, _, body := (&adminClient{t: t, base: "http://" + app.AdminAddr().String()}).do("GET", "/readyz", "")
		return code, body
	}
	if code, body := probe(strict); code != 200 || !strings.Contains(body, "store: up") {
		t.Fatalf("strict with Redis up: %d %q", code, body)
	}
	srv.Stop()
	if code, body := probe(relaxed); code != 200 || !strings.Contains(body, "store: down") {
		t.Fatalf("Redis stopped: %d %q", code, body)
	}
	if code, body := probe(strict); code != 503 {
		t.Fatalf("Redis stopped with ready_requires_store: %d %q", code, body)
	}
}
