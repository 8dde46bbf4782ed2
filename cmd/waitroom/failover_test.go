package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// storeSection is a store section with on_error open and the addresses
// and open_after given ("" leaves it out).
func storeSection(addrs []string, masterName, openAfter string) string {
	q := make([]string, len(addrs))
	for i, a := range addrs {
		q[i] = fmt.Sprintf("%q", a)
	}
	s := fmt.Sprintf("\nstore:\n  kind: redis\n  on_error: open\n  redis: { addrs: [%s], master_name: %q, key_prefix: gw%d, dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms }\n",
		strings.Join(q, ", "), masterName, prefixSeq.Add(1))
	if openAfter != "" {
		s += "  open_after: " + openAfter + "\n"
	}
	return s
}

// TestFailover_OpenAfterDefaults: with on_error open, open_after defaults
// to 2s on one Redis and to 10s with Sentinel or a Cluster, so a failover
// is held (until the deployment says more: openafter_test.go); a smaller
// value set there is kept, and warned about by `waitroom check`, which
// prints the value in effect and its source.
func TestFailover_OpenAfterDefaults(t *testing.T) {
	cluster := []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
	for _, c := range []struct {
		name      string
		addrs     []string
		master    string
		openAfter string
		want      time.Duration
		warned    bool
	}{
		{"one server", []string{"127.0.0.1:6379"}, "", "", 2 * time.Second, false},
		{"sentinel", []string{"127.0.0.1:26379", "127.0.0.1:26380"}, "mymaster", "", 10 * time.Second, false},
		{"one sentinel", []string{"127.0.0.1:26379"}, "mymaster", "", 10 * time.Second, false},
		{"cluster", cluster, "", "", 10 * time.Second, false},
		{"cluster, shorter kept", cluster, "", "3s", 3 * time.Second, true},
		{"cluster, longer kept", cluster, "", "30s", 30 * time.Second, false},
		{"one server, shorter kept", []string{"127.0.0.1:6379"}, "", "1s", time.Second, false},
	} {
		yaml := gwConfig("http://127.0.0.1:1", "    max_active: 1") + storeSection(c.addrs, c.master, c.openAfter)
		cfg, err := parseConfig("t.yaml", []byte(yaml))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.openAfter != c.want || (len(cfg.warnings) > 0) != c.warned {
			t.Errorf("%s: open_after %v, warnings %q; want %v, warned %v", c.name, cfg.openAfter, cfg.warnings, c.want, c.warned)
		}
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"check", "--config", path}, &out, &errb); code != 0 {
			t.Fatalf("%s: check: %d %s", c.name, code, errb.String())
		}
		if warned := strings.Contains(out.String(), "warning: store.open_after 3s is shorter than a failover"); warned != c.warned {
			t.Errorf("%s: check's output warns %v, want %v:\n%s", c.name, warned, c.warned, out.String())
		}
		// Nothing answers at these addresses: the figure stays the floor,
		// and check prints it with where it came from.
		source := "the default on one Redis server"
		switch {
		case c.openAfter != "":
			source = "set in the file"
		case c.want == failoverOpenAfter:
			source = "the 10s floor, as the deployment's detection time could not be read"
		}
		if line := fmt.Sprintf("store.open_after: %s (%s)\n", conf.Short(c.want), source); !strings.Contains(out.String(), line) {
			t.Errorf("%s: check's output lacks %q:\n%s", c.name, line, out.String())
		}
	}
}

// TestFailover_ClusterOutageHeld: a gateway on a Redis Cluster with
// on_error open and the default open_after holds its waiting visitors
// through a store outage longer than the old 2s default (here the whole
// Cluster gone, as its master is during a failover): nobody reaches the
// site, and /readyz says the store is failing over.
func TestFailover_ClusterOutageHeld(t *testing.T) {
	c, err := redistest.NewCluster(3)
	redistest.Require(t, err)
	defer c.Close()
	up, site := newUpstream(t)
	app, base := startGateway(t, gwConfig(site.URL, "    max_active: 0\n    tick: 100ms")+storeSection(c.Addrs(), "", ""))
	v := newVisitor(t, base)
	if r := v.getJSON("/events/a"); r.state() != "waiting" {
		t.Fatalf("before: %v", r.json)
	}
	reached := func() int {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.visitors[""] + len(up.paths)
	}
	before := reached()
	c.Close()
	down := time.Now()
	admin := &adminClient{t: t, base: "http://" + app.AdminAddr().String()}
	sawFailover := false
	// Past the old default (2s) by well over a second, within the new one
	// (10s) by as much: only requests sent in that span count.
	for i := 0; time.Since(down) < 5*time.Second; i++ {
		r := v.getJSON(fmt.Sprintf("/events/%d", i))
		if time.Since(down) < 8*time.Second && (r.state() != "hold" || reached() != before) {
			t.Fatalf("%v into the outage: %d %v (site reached %d times); want held", time.Since(down).Round(time.Millisecond),
				r.status, r.json, reached()-before)
		}
		if code, _, body := admin.do("GET", "/readyz", ""); code == 200 && strings.Contains(body, "store: failing over") {
			sawFailover = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	body := metricsText(t, app)
	if m := regexp.MustCompile(`(?m)^waitroom_store_errors_total\{kind="unreachable"\} (\d+)`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("/metrics after the outage: %v, want waitroom_store_errors_total{kind=\"unreachable\"} counted", m)
	}
	if !strings.Contains(body, `waitroom_store_errors_total{kind="readonly"} 0`) {
		t.Error("/metrics lacks the other kinds at 0")
	}
	if !sawFailover {
		_, _, body := admin.do("GET", "/readyz", "")
		t.Errorf("/readyz during the Cluster's outage: %q, want \"store: failing over\"", body)
	}
}
