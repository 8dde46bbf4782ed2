package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The demo must start and show a newcomer the waiting room when the
// simulated visitors fill the room first.
func TestDemo_ServesTheWaitingRoom(t *testing.T) {
	d, err := startDemo("127.0.0.1:0", "127.0.0.1:0", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.app.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + d.app.Addr().String()
	a, b := newVisitor(t, base), newVisitor(t, base)
	for _, v := range []*visitor{a, b} {
		if r := v.get("/"); !strings.Contains(r.body, "demo shop") {
			t.Fatalf("the first two visitors must reach the shop: %d", r.status)
		}
	}
	r := newVisitor(t, base).get("/")
	if r.status != 200 || !strings.Contains(r.body, "Demo ticket sale") || !strings.Contains(r.body, "/.waitroom/status") {
		t.Fatalf("the third visitor must see the waiting room, got %d:\n%.300s", r.status, r.body)
	}
	// Checking out frees a place: the release header acts and is hidden.
	co := a.do("POST", "/checkout")
	if co.header.Get("Waitroom-Command") != "" || !strings.Contains(co.body, "Thank you") {
		t.Fatalf("checkout: %d %v", co.status, co.header)
	}
}

func TestRun_Commands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "waitroom ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"check", "--config", "../../configs/waitroom.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("check of the shipped file: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "configuration OK") {
		t.Fatalf("check output: %q", out.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"check", "--config", "testdata/nope.yaml"}, &out, &errb); code != 1 {
		t.Fatalf("check of a missing file: exit %d", code)
	}
	for _, flagArg := range []string{"--version", "-v"} {
		out.Reset()
		if code := run(context.Background(), []string{flagArg}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "waitroom ") {
			t.Fatalf("%s: %d %q", flagArg, code, out.String())
		}
	}
	for _, flagArg := range []string{"--help", "-h"} {
		out.Reset()
		if code := run(context.Background(), []string{flagArg}, &out, &errb); code != 0 || !strings.Contains(out.String(), "waitroom check") {
			t.Fatalf("%s: %d %q", flagArg, code, out.String())
		}
	}
	if code := run(context.Background(), []string{"frobnicate"}, &out, &errb); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if code := run(ctx, []string{"demo", "--bots", "99"}, &out, &errb); code != 2 {
		t.Fatalf("demo --bots 99: exit %d", code)
	}
}

func TestCheck_RedactsSecrets(t *testing.T) {
	cfg, err := parseConfig("good.yaml", []byte(goodConfig+"\n  header: { name: X-Staff, secret: \"0123456789abcdef-very-secret\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeRedacted(&out, cfg.Config); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, testKey) || strings.Contains(s, "very-secret") || strings.Count(s, "REDACTED") != 3 {
		t.Fatalf("secrets not redacted:\n%s", s)
	}
	if !strings.Contains(s, "max_active: 500") {
		t.Fatalf("effective config missing:\n%s", s)
	}
}

// Every kind of secret the file may hold, in every section that holds one,
// is redacted by check: found by the key's name, so a section added later
// is covered too (webhook secrets and URL credentials were printed before).
func TestCheck_RedactsEverySecret(t *testing.T) {
	whsec := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef-hooks"))
	extra := fmt.Sprintf(`
  header: { name: X-Staff, secret: "0123456789abcdef-bypass-canary" }
webhooks:
  - url: "https://hookuser:hookpass-canary@shop.example/hooks/path-token-canary?token=query-canary"
    events: [queue.started]
    secret: %q
`, whsec)
	cfg, err := parseConfig("good.yaml", []byte(goodConfig+extra))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Config.Admin.Token = "admin-token-canary-0123456789"
	cfg.Config.Store.Redis.Password = "redis-password-canary"
	for name, rc := range cfg.Config.Rooms {
		rc.Identity.Secret = "identity-secret-canary-0123456789abcdef"
		cfg.Config.Rooms[name] = rc
	}
	var out bytes.Buffer
	if err := writeRedacted(&out, cfg.Config); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, secret := range []string{testKey, "bypass-canary", "hookpass-canary", "path-token-canary", "query-canary", whsec, "admin-token-canary", "redis-password-canary", "identity-secret-canary"} {
		if strings.Contains(s, secret) {
			t.Errorf("check printed %q:\n%s", secret, s)
		}
	}
	if !strings.Contains(s, "url: https://shop.example/…") || !strings.Contains(s, "max_active: 500") {
		t.Fatalf("the rest of the configuration is missing:\n%s", s)
	}
}

func TestVersionFrom_NamesTheCommit(t *testing.T) {
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	cases := []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{rev}}, "dev (0123456789ab)"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "true"}}}, "dev (0123456789ab, modified)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, c := range cases {
		if got := versionFrom(&c.bi); got != c.want {
			t.Errorf("versionFrom(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

// "waitroom serve --help" is serve's own help (its flags), not the list
// of commands; "waitroom --help" stays the list.
func TestServeHelp_IsServes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-config") || strings.Contains(out.String()+errb.String(), "waitroom check") {
		t.Fatalf("serve --help: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "waitroom check") {
		t.Fatalf("--help: exit %d\n%s", code, out.String())
	}
}

// The demo's first screen has no warnings: its tokenless admin listener
// (loopback on purpose) and its random ticket keys are said at info level;
// serve still warns (TestAdmin_LoopbackWithoutTokenWarns).
func TestDemo_StartsWithoutWarnings(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	d, err := startDemo("127.0.0.1:0", "127.0.0.1:0", zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.app.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if r := newVisitor(t, "http://"+d.app.Addr().String()).get("/"); !strings.Contains(r.body, "demo shop") {
		t.Fatalf("the demo's first visitor: %d", r.status)
	}
	for _, e := range logs.All() {
		if e.Level >= zapcore.WarnLevel {
			t.Errorf("the demo logged at %s: %s", e.Level, e.Message)
		}
	}
	if logs.FilterMessageSnippet("need no token").Len() != 1 {
		t.Errorf("the demo does not say its admin needs no token: %v", logs.All())
	}
}
