package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// TestDocs_RedisConf runs the Redis and Sentinel block of
// docs/reliability.md ("The knobs", marked `run by: TestDocs_RedisConf`)
// as an operator does (STYLE 11): a master and two replicas are
// `redis-server redis.conf` with the block's redis.conf lines, three
// sentinels are `redis-server sentinel.conf --sentinel` with its
// sentinel.conf lines, the monitor's address and port replaced by the
// master's. It checks what the doc promises of them: the sentinels
// monitor with quorum 2, down-after 5000 and failover-timeout 10000; the
// nodes run min-replicas-to-write 1, min-replicas-max-lag 10 and
// noeviction; a write succeeds with both replicas and is refused
// (NOREPLICAS) once neither has acknowledged for 10 s, not sooner. Then a
// gateway on the yaml block that follows (its addrs the sentinels') starts
// with the store up, and `waitroom check` prints open_after 10s learned
// from the sentinels: down-after 5 s plus the 5 s margin.
func TestDocs_RedisConf(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed (Debian's redis-server; make deps installs it): the block cannot be run")
	}
	// The binary builds while the nodes start.
	built := make(chan struct{})
	go func() {
		_, _ = docsBinaryPath()
		close(built)
	}()
	start := time.Now()
	conf, gw := redisConfBlocks(t)
	sentinelConf, redisConf := splitConfBlock(t, conf)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// What the test adds to the operator's lines (redistest.StartFile adds
	// port, bind and dir): a replica syncs at once, not after the 5 s a
	// diskless sync waits for more replicas by default.
	const testLines = "\n# the test's\nrepl-diskless-sync-delay 0\n"
	master := redistest.StartFile(t, redistest.FileOptions{Conf: redisConf + testLines})
	mhost, mport, _ := strings.Cut(master.Addr(), ":")
	var replicas []*redistest.Node
	for range 2 {
		replicas = append(replicas, redistest.StartFile(t, redistest.FileOptions{
			Conf: redisConf + testLines + "replicaof " + mhost + " " + mport + "\n"}))
	}
	name, monitored := monitorMaster(t, sentinelConf, mhost, mport)
	var sentinels []*redistest.Node
	var addrs []string
	for range 3 {
		s := redistest.StartFile(t, redistest.FileOptions{Sentinel: true, Conf: monitored})
		sentinels = append(sentinels, s)
		addrs = append(addrs, s.Addr())
	}

	// The redis.conf lines are in effect on each node (a replica applies
	// them once promoted).
	for _, n := range append([]*redistest.Node{master}, replicas...) {
		for key, want := range map[string]string{"min-replicas-to-write": "1", "min-replicas-max-lag": "10", "maxmemory-policy": "noeviction"} {
			got, err := n.Client().ConfigGet(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got[key] != want {
				t.Errorf("%s: CONFIG GET %s = %q, want %q (the doc's)", n, key, got[key], want)
			}
		}
	}
	// The sentinels monitor the master as the doc says, and each comes to
	// know both replicas and the two other sentinels: the group can gather
	// its quorum of 2 and the majority a failover needs.
	for _, s := range sentinels {
		var f map[string]string
		waitDoc(t, time.Minute, s.String()+" knowing the group", func() (bool, string) {
			v, err := s.Client().Do(ctx, "SENTINEL", "MASTER", name).Result()
			if err != nil {
				return false, err.Error()
			}
			f = replyFields(v)
			return f["num-slaves"] == "2" && f["num-other-sentinels"] == "2", fmt.Sprint(f)
		})
		for key, want := range map[string]string{"ip": mhost, "port": mport, "quorum": "2",
			"down-after-milliseconds": "5000", "failover-timeout": "10000"} {
			if f[key] != want {
				t.Errorf("%s: SENTINEL MASTER %s: %s = %q, want %q", s, name, key, f[key], want)
			}
		}
	}
	// Both replicas acknowledge: a write succeeds.
	mc := master.Client()
	waitDoc(t, time.Minute, "both replicas acknowledging the master", func() (bool, string) {
		info, err := mc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "connected_slaves:2\r\n") && strings.Contains(info, "min_slaves_good_slaves:2\r\n"), info
	})
	if err := mc.Set(ctx, "docs-redis-conf", "1", 0).Err(); err != nil {
		t.Fatalf("a write with both replicas: %v", err)
	}

	// The gateway on the yaml block, its addrs the test's sentinels.
	<-built
	bin := buildDocsBinary(t)
	runDocGateway(t, bin, gw, name, addrs)

	// Both replicas cut off (frozen, their connections open, as behind a
	// partition): the master takes writes until neither has acknowledged
	// for min-replicas-max-lag, then refuses them, so a master split from
	// its replicas stops diverging within 10 s.
	for _, r := range replicas {
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	paused := time.Now()
	var refused error
	waitDoc(t, time.Minute, "the master refusing writes", func() (bool, string) {
		err := mc.Set(ctx, "docs-redis-conf", "2", 0).Err()
		if err != nil && strings.HasPrefix(err.Error(), "NOREPLICAS") {
			refused = err
			return true, ""
		}
		if err != nil {
			t.Fatalf("a write with the replicas cut off: %v", err)
		}
		return false, fmt.Sprintf("writes still taken %v after the replicas stopped", time.Since(paused).Round(time.Millisecond))
	})
	took := time.Since(paused)
	// The last acknowledgement came up to 1 s before the pause, and Redis
	// counts the lag in whole seconds: a refusal before 8 s would be a lag
	// shorter than the doc's 10. A busy machine only makes it later.
	if took < 8*time.Second {
		t.Errorf("writes refused %v after the replicas stopped: sooner than min-replicas-max-lag 10 allows", took)
	}
	t.Logf("refused %v after the replicas stopped: %v; the whole test took %v", took.Round(time.Millisecond), refused, time.Since(start).Round(time.Millisecond))
}

// redisConfBlocks are the block of docs/reliability.md marked run by
// TestDocs_RedisConf and the yaml block that follows it.
func redisConfBlocks(t *testing.T) (conf, gw docBlock) {
	t.Helper()
	const file = "docs/reliability.md"
	text, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseDocBlocks(file, string(text))
	if err != nil {
		t.Fatal(err)
	}
	found := -1
	for i, b := range blocks {
		if b.runBy == "TestDocs_RedisConf" {
			if found >= 0 {
				t.Fatalf("%s and %s are both marked run by TestDocs_RedisConf", blocks[found], b)
			}
			found = i
		}
	}
	if found < 0 {
		t.Fatalf("%s has no block marked <!-- run by: TestDocs_RedisConf (how) -->", file)
	}
	if blocks[found].lang != "conf" {
		t.Fatalf("%s: the block marked run by TestDocs_RedisConf is not a conf block", blocks[found])
	}
	if found+1 >= len(blocks) || blocks[found+1].lang != "yaml" {
		t.Fatalf("%s: no yaml block follows it (waitroom's side)", blocks[found])
	}
	return blocks[found], blocks[found+1]
}

// confPart begins a part of the block: "# sentinel.conf, on ..." or
// "# redis.conf, on ...".
var confPart = regexp.MustCompile(`^#\s*(sentinel|redis)\.conf\b`)

// splitConfBlock splits the block at its `# sentinel.conf` and
// `# redis.conf` comment lines; each part must hold settings.
func splitConfBlock(t *testing.T, b docBlock) (sentinelConf, redisConf string) {
	t.Helper()
	parts := map[string][]string{}
	part := ""
	for _, l := range strings.Split(b.body, "\n") {
		if m := confPart.FindStringSubmatch(l); m != nil {
			part = m[1]
		}
		if part == "" && strings.TrimSpace(l) != "" {
			t.Fatalf("%s: %q comes before the first `# sentinel.conf` or `# redis.conf` line", b, l)
		}
		parts[part] = append(parts[part], l)
	}
	for _, p := range []string{"sentinel", "redis"} {
		settings := 0
		for _, l := range parts[p] {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				settings++
			}
		}
		if settings == 0 {
			t.Fatalf("%s: no %s.conf settings (a `# %s.conf` line, then settings)", b, p, p)
		}
	}
	return strings.Join(parts["sentinel"], "\n") + "\n", strings.Join(parts["redis"], "\n") + "\n"
}

var monitorLine = regexp.MustCompile(`(?m)^sentinel monitor (\S+) (\S+) (\S+) (\d+)\s*$`)

// monitorMaster is the sentinel.conf part with only the address and port
// of its one `sentinel monitor` line replaced, and the name it monitors.
func monitorMaster(t *testing.T, conf, host, port string) (name, out string) {
	t.Helper()
	m := monitorLine.FindAllStringSubmatch(conf, -1)
	if len(m) != 1 {
		t.Fatalf("the sentinel.conf part has %d `sentinel monitor NAME HOST PORT QUORUM` lines, want 1:\n%s", len(m), conf)
	}
	name = m[0][1]
	return name, monitorLine.ReplaceAllString(conf, "sentinel monitor $1 "+host+" "+port+" $4")
}

// runDocGateway starts `waitroom serve` on the yaml block gw (a fragment,
// merged into docBase as the docs runner does) with its store.redis.addrs
// replaced by addrs, the keys from docEnv, and waits for /readyz to say
// the store is up; then `waitroom check` on the same file must print the
// open_after the sentinels' down-after 5000 gives: 10s.
func runDocGateway(t *testing.T, bin string, gw docBlock, name string, addrs []string) {
	t.Helper()
	var doc struct {
		Store struct {
			Redis struct {
				MasterName string `yaml:"master_name"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(gw.body), &doc); err != nil {
		t.Fatalf("%s: %v", gw, err)
	}
	if doc.Store.Redis.MasterName != name {
		t.Errorf("%s: master_name %q, but the sentinels monitor %q", gw, doc.Store.Redis.MasterName, name)
	}
	addrsLine := regexp.MustCompile(`(?m)^(\s*addrs:\s*)\[[^\]\n]*\]`)
	if n := len(addrsLine.FindAllString(gw.body, -1)); n != 1 {
		t.Fatalf("%s: %d `addrs: [...]` lines, want 1", gw, n)
	}
	quoted := make([]string, len(addrs))
	for i, a := range addrs {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	local := gw
	local.body = addrsLine.ReplaceAllString(gw.body, "${1}["+strings.Join(quoted, ", ")+"]")
	file, err := docConfigFile(local)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "waitroom.yaml")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	admin := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--config", path)
	cmd.Env = append(append(os.Environ(), docEnv...), "WAITROOM_LISTEN="+freeAddr(t), "WAITROOM_ADMIN_LISTEN="+admin)
	p := startProcess(t, cmd)
	waitDoc(t, time.Minute, "the gateway's /readyz saying the store is up", func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("the gateway exited (%v):\n%s%s", p.err, p.stdout, p.stderr)
		default:
		}
		code, body := probe("http://" + admin + "/readyz")
		return code == 200 && strings.Contains(body, "store: up"), fmt.Sprintf("%d %q", code, body)
	})
	log := p.stdout.String() + p.stderr.String()
	if !strings.Contains(log, "store.open_after follows the failover detection time") || strings.Contains(log, "store.open_after defaults") {
		t.Errorf("the gateway's start log does not say open_after follows the sentinels:\n%s", log)
	}

	check := exec.Command(bin, "check", "--config", path)
	check.Env = append(os.Environ(), docEnv...)
	out, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("waitroom check: %v\n%s", err, out)
	}
	// Its head (before the configuration it prints) says the figure and
	// where it came from; the configuration runs with it.
	head, _, _ := strings.Cut(string(out), "\n\n")
	var missing []string
	for _, want := range []string{
		"store.open_after: 10s (",
		"Sentinel 127.0.0.1:",
		fmt.Sprintf("down-after-milliseconds of %q 5s + 5s margin", name),
	} {
		if !strings.Contains(head, want) {
			missing = append(missing, want)
		}
	}
	if !strings.Contains(string(out), "\n  open_after: 10s\n") {
		missing = append(missing, "open_after: 10s (in the configuration printed)")
	}
	if len(missing) > 0 || strings.Contains(head, "warning:") {
		t.Errorf("waitroom check, want %q and no warning:\n%s", missing, head)
	}
}

// waitDoc polls ok every 50 ms until it holds, failing after within with
// what and ok's last word on the state.
func waitDoc(t *testing.T, within time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, state := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, within, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replyFields turns SENTINEL MASTER's reply, a flat list (RESP2) or a map
// (RESP3), into a map.
func replyFields(v any) map[string]string {
	out := map[string]string{}
	switch a := v.(type) {
	case []any:
		for i := 0; i+1 < len(a); i += 2 {
			out[fmt.Sprint(a[i])] = fmt.Sprint(a[i+1])
		}
	case map[any]any:
		for k, val := range a {
			out[fmt.Sprint(k)] = fmt.Sprint(val)
		}
	}
	return out
}
