package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// checkOutput is what `waitroom check` prints for the configuration yaml.
func checkOutput(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", path}, &out, &errb); code != 0 {
		t.Fatalf("check: %d %s", code, errb.String())
	}
	return out.String()
}

// openAfterWarnings are the WARN lines about store.open_after.
func openAfterWarnings(logs *observer.ObservedLogs) []string {
	var out []string
	for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
		if strings.HasPrefix(e.Message, storeWarningPrefix) {
			out = append(out, e.Message)
		}
	}
	return out
}

// setAll runs CONFIG SET key value on every node at addrs.
func setAll(t *testing.T, addrs []string, args ...any) {
	t.Helper()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, DialTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxRetries: -1})
		err := c.Do(context.Background(), args...).Err()
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenAfter_FollowsSentinel: with Sentinel and no open_after, the
// default is the sentinels' own down-after-milliseconds (8 s here, past
// the 10 s floor once the margin is added) plus failoverMargin: the
// gateway runs on it, says so at start, keeps it across reloads, and
// `waitroom check` prints it with its source. An explicit open_after
// shorter than it is kept, applied by a reload, and warned about by name.
func TestOpenAfter_FollowsSentinel(t *testing.T) {
	t.Parallel()
	g := redistest.StartSentinel(t, redistest.SentinelOptions{DownAfter: 8 * time.Second})
	_, site := newUpstream(t)
	store := storeSection(g.SentinelAddrs(), g.MasterName(), "")
	yaml := gwConfig(site.URL, "    max_active: 1") + store
	app, _, path, logs := fileGateway(t, yaml, false)
	const want = 13 * time.Second
	if got := app.current().cfg.openAfter; got != want {
		t.Fatalf("open_after %v, want %v (down-after 8s + 5s)", got, want)
	}
	if w := openAfterWarnings(logs); len(w) != 0 {
		t.Errorf("warnings at start: %q", w)
	}
	learned := logs.FilterMessageSnippet("store.open_after follows").All()
	if len(learned) != 1 || !strings.Contains(learned[0].ContextMap()["source"].(string), "down-after-milliseconds") {
		t.Errorf("start's log of the learned figure: %v", learned)
	}

	out := checkOutput(t, yaml)
	if !strings.Contains(out, "store.open_after: 13s (Sentinel 127.0.0.1:") || !strings.Contains(out, "down-after-milliseconds") ||
		!strings.Contains(out, "8s + 5s margin)") || !strings.Contains(out, "open_after: 13s\n") || strings.Contains(out, "warning:") {
		t.Errorf("check's output:\n%s", out)
	}

	// A reload of another max_active keeps the figure: the store is the
	// one started with.
	rewrite(t, path, gwConfig(site.URL, "    max_active: 2")+store)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := app.current().cfg.openAfter; got != want {
		t.Errorf("after a reload: open_after %v, want %v", got, want)
	}
	// An explicit 10s (the old default) is what runs after a reload, and
	// check names the learned figure it falls short of.
	short := gwConfig(site.URL, "    max_active: 2") + strings.Replace(store, "  on_error: open\n", "  on_error: open\n  open_after: 10s\n", 1)
	rewrite(t, path, short)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := app.current().cfg.openAfter; got != 10*time.Second {
		t.Errorf("after a reload to open_after 10s: %v", got)
	}
	out = checkOutput(t, short)
	if !strings.Contains(out, "store.open_after: 10s (set in the file)") ||
		!strings.Contains(out, "warning: store.open_after 10s is shorter than a failover (13s: Sentinel 127.0.0.1:") {
		t.Errorf("check's output with open_after 10s:\n%s", out)
	}
}

// TestOpenAfter_FollowsCluster: with a Cluster, the default follows
// cluster-node-timeout: at 3 s the 10 s floor wins and check says so; at
// 5 s (NewCluster's, the recommended value) the figure meets the floor and
// check names it; at 8 s, the default is 13 s.
func TestOpenAfter_FollowsCluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	_, site := newUpstream(t)
	yaml := gwConfig(site.URL, "    max_active: 1") + storeSection(addrs, "", "")
	out := checkOutput(t, yaml)
	if !strings.Contains(out, "store.open_after: 10s (Cluster node 127.0.0.1:") ||
		!strings.Contains(out, "cluster-node-timeout 5s + 5s margin)") {
		t.Errorf("check's output, cluster-node-timeout 5000:\n%s", out)
	}
	setAll(t, addrs, "CONFIG", "SET", "cluster-node-timeout", "3000")
	out = checkOutput(t, yaml)
	if !strings.Contains(out, "store.open_after: 10s (the 10s floor; Cluster node 127.0.0.1:") ||
		!strings.Contains(out, "cluster-node-timeout 3s + 5s margin is less)") {
		t.Errorf("check's output, cluster-node-timeout 3000:\n%s", out)
	}
	setAll(t, addrs, "CONFIG", "SET", "cluster-node-timeout", "8000")
	out = checkOutput(t, yaml)
	if !strings.Contains(out, "store.open_after: 13s (Cluster node 127.0.0.1:") || !strings.Contains(out, "cluster-node-timeout 8s + 5s margin)") {
		t.Errorf("check's output, cluster-node-timeout 8000:\n%s", out)
	}
	app, _ := startGateway(t, yaml)
	if got := app.current().cfg.openAfter; got != 13*time.Second {
		t.Errorf("open_after %v, want 13s", got)
	}
}

// TestOpenAfter_FallbackWarns: a deployment that does not say its
// detection time (a Cluster user whose ACL refuses CONFIG; sentinels
// nobody listens for) gives the 10 s floor and one WARN that says what to
// set; the gateway starts all the same, and soon.
func TestOpenAfter_FallbackWarns(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	setAll(t, addrs, "ACL", "SETUSER", "gw", "on", ">gw-pass", "~*", "&*", "+@all", "-@dangerous")
	_, site := newUpstream(t)
	acl := strings.Replace(storeSection(addrs, "", ""), "key_prefix:", "username: gw, password: gw-pass, key_prefix:", 1)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	_ = closed.Close()
	for _, c := range []struct {
		name, store, why string
	}{
		{"ACL refuses CONFIG", acl, "NOPERM"},
		{"no sentinel answers", storeSection([]string{gone}, "mymaster", ""), "refused"},
	} {
		start := time.Now()
		app, _, _, logs := fileGateway(t, gwConfig(site.URL, "    max_active: 1")+c.store, false)
		took := time.Since(start)
		if got := app.current().cfg.openAfter; got != failoverOpenAfter {
			t.Errorf("%s: open_after %v, want the %v floor", c.name, got, failoverOpenAfter)
		}
		w := openAfterWarnings(logs)
		if len(w) != 1 || !strings.Contains(w[0], "defaults to 10s, but the failover detection time could not be read") ||
			!strings.Contains(w[0], c.why) || !strings.Contains(w[0], "set store.open_after to it plus 5s") {
			t.Errorf("%s: warnings %q, want one that says why (%s) and what to set", c.name, w, c.why)
		}
		if strings.Contains(strings.Join(w, ""), "gw-pass") {
			t.Errorf("%s: a warning names the password: %q", c.name, w)
		}
		// detectTimeout is 1.5 s; a busy machine may add much to the start.
		if took > 15*time.Second {
			t.Errorf("%s: the gateway took %v to start", c.name, took)
		}
	}
}
