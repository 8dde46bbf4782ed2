package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fileGateway runs an App from a config file it watches, with its logs
// observed.
func fileGateway(t *testing.T, yaml string, watch bool) (*App, string, string, *observer.ObservedLogs) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "waitroom.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	if watch {
		app.WatchFile(path)
	} else {
		app.usePath(path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = app.Close()
	})
	return app, "http://" + app.Addr().String(), path, logs
}

// rewrite replaces the file the way an editor does: a new file renamed over
// the old one.
func rewrite(t *testing.T, path, yaml string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A new max_active in the file applies within two ticks, and the 100
// visitors in line keep their order.
func TestReload_FileChangeKeepsEveryPlace(t *testing.T) {
	_, srv := newUpstream(t)
	// join_limit off: its visitors all come from one network, whose tickets past
	// PendingPerNetwork would otherwise be placed in the order they come back.
	before := gwConfig(srv.URL, "    max_active: 0\n    tick: 200ms\n    join_limit: unlimited")
	app, base, path, logs := fileGateway(t, before, true)
	codec := testTickets(t)
	type held struct {
		v      *visitor
		ticket int64
	}
	var line []held
	for range 100 {
		v := newVisitor(t, base)
		v.getJSON("/events/")
		tk, err := codec.Decode("concert", v.cookieValue("concert"))
		if err != nil {
			t.Fatal(err)
		}
		line = append(line, held{v, tk.Number})
	}
	sort.Slice(line, func(i, j int) bool { return line[i].ticket < line[j].ticket })
	rewrite(t, path, strings.Replace(before, "max_active: 0", "max_active: 10", 1))
	deadline := time.Now().Add(5 * time.Second)
	for app.current().cfg.Rooms["concert"].MaxActive != 10 {
		if time.Now().After(deadline) {
			t.Fatal("the file change was not picked up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2*200*time.Millisecond + 50*time.Millisecond) // two ticks
	for i, h := range line {
		r := h.v.getJSON("/.waitroom/status?room=concert")
		switch {
		case i < 10 && r.state() != "admitted":
			t.Fatalf("visitor %d of the line not admitted two ticks after the new limit: %v", i, r.json)
		case i >= 10 && (r.state() != "waiting" || r.position() != i-9):
			t.Fatalf("visitor %d of the line: %v, want waiting at %d", i, r.json, i-9)
		}
	}
	if logs.FilterMessage("configuration reloaded").Len() != 1 {
		t.Fatal("the reload was not logged once")
	}
}

// A broken file is logged and counted; the gateway keeps serving on the
// running configuration. SIGHUP reloads as a file change does.
func TestReload_BrokenFileKeepsServingAndSIGHUP(t *testing.T) {
	_, srv := newUpstream(t)
	good := gwConfig(srv.URL, "    max_active: 1\n    tick: 50ms")
	app, base, path, logs := fileGateway(t, good, false)
	newVisitor(t, base).get("/") // serving: SIGHUP is ours now, not the default that kills
	rewrite(t, path, good+"\nrooms: [this is not: valid\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, func() bool {
		return logs.FilterMessage("configuration not reloaded; the running one stays").Len() == 1
	})
	if r := newVisitor(t, base).get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("after a broken reload the gateway must still serve: %d", r.status)
	}
	_, _, text := newAdmin(t, app).do("GET", "/metrics", "")
	if !strings.Contains(text, `waitroom_config_reloads_total{result="error"} 1`) || !strings.Contains(text, "waitroom_config_last_reload_successful 0") {
		t.Fatalf("the failed reload was not counted:\n%s", grepLines(text, "reload"))
	}
	if !strings.Contains(text, `waitroom_build_info{goversion="go`) {
		t.Fatalf("no build info:\n%s", grepLines(text, "build_info"))
	}
	// The file in service put back: said at info, and the gauge is 1 again.
	rewrite(t, path, good)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if logs.FilterMessage("configuration file valid again; the one in service is unchanged").Len() != 1 {
		t.Fatal("the file put back after a refusal was not logged")
	}
	if _, _, text := newAdmin(t, app).do("GET", "/metrics", ""); !strings.Contains(text, "waitroom_config_last_reload_successful 1") {
		t.Fatalf("last reload gauge:\n%s", grepLines(text, "last_reload"))
	}
	// An unchanged file is a no-op; a changed one applies, again on SIGHUP.
	rewrite(t, path, strings.Replace(good, "max_active: 1", "max_active: 4", 1))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, func() bool { return app.current().cfg.Rooms["concert"].MaxActive == 4 })
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if logs.FilterMessage("configuration reloaded").Len() != 1 {
		t.Fatal("an unchanged file must not reload")
	}
}

// A room removed by a reload stops taking visitors; its waiting visitors'
// pages hear "closed", not an error.
func TestReload_RemovedRoomIsClosed(t *testing.T) {
	_, srv := newUpstream(t)
	before := gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms")
	app, base, path, _ := fileGateway(t, before, false)
	v := newVisitor(t, base)
	v.getJSON("/festival/") // festival has room for 5: admitted
	w := newVisitor(t, base)
	w.getJSON("/events/")
	after := strings.Replace(before, "  - { path: /events/, upstream: site, room: concert }\n", "", 1)
	after = strings.Replace(after, "  concert:\n    max_active: 0\n    tick: 50ms\n", "", 1)
	rewrite(t, path, after)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	r := w.getJSON("/.waitroom/status?room=concert")
	if r.status != 200 || r.state() != "closed" {
		t.Fatalf("a waiting visitor of a removed room: %d %v", r.status, r.json)
	}
	if r := v.get("/festival/"); r.body != "site:/festival/" {
		t.Fatalf("a visitor of a kept room after the reload: %d %q", r.status, r.body)
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The watcher follows a file that is deleted and created again, and waits
// for a file written in pieces to settle before reading it.
func TestReload_WatchFollowsRecreateAndSettles(t *testing.T) {
	_, srv := newUpstream(t)
	before := gwConfig(srv.URL, "    max_active: 1\n    tick: 50ms")
	app, _, path, logs := fileGateway(t, before, true)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	rewrite(t, path, strings.Replace(before, "max_active: 1", "max_active: 2", 1))
	waitFor(t, 3*time.Second, func() bool { return app.current().cfg.Rooms["concert"].MaxActive == 2 })

	// Written in two pieces, 100 ms apart: one reload, of the whole file.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	full := strings.Replace(before, "max_active: 1", "max_active: 3", 1)
	_, _ = f.WriteString(full[:len(full)/2])
	time.Sleep(100 * time.Millisecond)
	_, _ = f.WriteString(full[len(full)/2:])
	_ = f.Close()
	waitFor(t, 3*time.Second, func() bool { return app.current().cfg.Rooms["concert"].MaxActive == 3 })
	if n := logs.FilterMessage("configuration not reloaded; the running one stays").Len(); n != 0 {
		t.Fatalf("a half-written file was read %d times", n)
	}
}

// A room's page template is checked when the file loads and reloaded with
// it, even when only the template changed.
func TestReload_PageTemplate(t *testing.T) {
	_, srv := newUpstream(t)
	tpl := filepath.Join(t.TempDir(), "page.html")
	write := func(marker string) {
		src := `<!doctype html><html lang="{{.Lang}}"><style>{{.CSS}}</style><h1>` + marker + ` {{.Position}}</h1>` +
			`<script type="application/json" id="wr-data">{{.Data}}</script><script>{{.JS}}</script></html>`
		if err := os.WriteFile(tpl, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("FIRST")
	app, base, _, _ := fileGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms\n    page: { template: \""+tpl+"\" }"), false)
	v := newVisitor(t, base)
	if r := v.get("/events/"); !strings.Contains(r.body, "<h1>FIRST 1</h1>") {
		t.Fatalf("the room's own page was not used:\n%.300s", r.body)
	}
	write("SECOND")
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if r := v.get("/events/"); !strings.Contains(r.body, "<h1>SECOND 1</h1>") {
		t.Fatalf("the changed template was not reloaded:\n%.300s", r.body)
	}
	if err := os.WriteFile(tpl, []byte("<h1>{{.Position</h1>"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := app.Reload("test"); err == nil || !strings.Contains(err.Error(), "rooms.concert.page.template: template: "+tpl+":1") {
		t.Fatalf("a broken template must be refused by file and line, got %v", err)
	}
	if r := v.get("/events/"); !strings.Contains(r.body, "<h1>SECOND 1</h1>") {
		t.Fatal("after a broken template the running page must stay")
	}
}

// A new token in admin.token_file is in service after a reload (SIGHUP or
// the file's own change), with the YAML unchanged; the old one stops
// working at once, and nothing asks for a restart.
func TestReload_AdminTokenFile(t *testing.T) {
	_, srv := newUpstream(t)
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("first-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(gwConfig(srv.URL, "    max_active: 1"), fmt.Sprintf("token: %q", adminToken), fmt.Sprintf("token_file: %q", tokenPath), 1)
	app, _, _, logs := fileGateway(t, cfg, false)
	base := "http://" + app.AdminAddr().String() + "/admin/api/rooms"
	get := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, base, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if get("first-token-0123456789") != 200 {
		t.Fatal("the first token does not work")
	}
	if err := os.WriteFile(tokenPath, []byte("second-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := []int{get("second-token-0123456789"), get("first-token-0123456789")}; got[0] != 200 || got[1] != 401 {
		t.Fatalf("after the reload: new token %d, old token %d", got[0], got[1])
	}
	if logs.FilterMessage("these changes need a restart and were not applied; the rest was").Len() != 0 {
		t.Fatal("a new admin token was taken for a change that needs a restart")
	}
}
