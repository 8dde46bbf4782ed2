package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// pod is what the kubelet would set up for the Deployment's container,
// under a temporary root standing for the container's filesystem.
type pod struct {
	root      string
	spec      any               // the Deployment's pod spec
	container any               // its container
	files     *strings.Replacer // a mount path to the same path under root
	config    *Settings         // the ConfigMap's configuration, as loaded
	remap     map[int]string    // containerPort -> the loopback address it got
}

// newPod writes every volume the container mounts at its mountPath under
// root, as the kubelet does: files 0644 in a timestamped directory that
// a "..data" symlink names, each key a symlink into "..data". Paths in the
// args and in the ConfigMap's files are rewritten with root in front of
// each mountPath (longest first); nothing else is changed, but for the
// Secret's placeholder cookie keys, which an operator must replace (they
// decode to 33 bytes) and which get valid stand-ins here.
func newPod(t *testing.T, docs map[string]map[string]any) *pod {
	t.Helper()
	root, err := os.MkdirTemp("", "kube")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	// Traversable by the pod's non-root uid, as a container's / is.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := at(docs["Deployment"], "spec", "template", "spec")
	p := &pod{root: root, spec: spec, container: at(spec, "containers", 0), remap: map[int]string{}}
	var mounts, pairs []string
	for _, m := range list(at(p.container, "volumeMounts")) {
		mounts = append(mounts, at(m, "mountPath").(string))
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		pairs = append(pairs, m+"/", root+m+"/")
	}
	p.files = strings.NewReplacer(pairs...)
	for _, m := range list(at(p.container, "volumeMounts")) {
		data := p.volumeData(t, docs, spec, at(m, "name").(string))
		writeVolume(t, filepath.Join(root, at(m, "mountPath").(string)), data)
	}
	return p
}

// volumeData is the contents of the named volume, keys to file contents.
func (p *pod) volumeData(t *testing.T, docs map[string]map[string]any, spec any, name string) map[string]string {
	data := map[string]string{}
	for _, v := range list(at(spec, "volumes")) {
		switch {
		case at(v, "name") != name:
		case at(v, "configMap") != nil:
			for k, val := range at(docs["ConfigMap"], "data").(map[string]any) {
				data[k] = p.files.Replace(val.(string))
			}
		case at(v, "secret") != nil:
			for k, val := range at(docs["Secret"], "stringData").(map[string]any) {
				data[k] = val.(string)
				if strings.HasPrefix(val.(string), "REPLACE") && strings.HasSuffix(k, "-keys") {
					data[k] = testKey + "\n"
				}
			}
		}
	}
	if len(data) == 0 {
		t.Fatalf("volume %q holds nothing", name)
	}
	return data
}

// writeVolume lays files out as the kubelet's atomic writer does.
func writeVolume(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	ts := "..2025_01_01_00_00_00.000000001"
	if err := os.MkdirAll(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
}

// command is the container's process: the image's ENTRYPOINT (/waitroom,
// see the Dockerfile) with exactly the container's args (paths under root)
// and env. The listeners move to free loopback ports, the Redis and the
// shop to the test's, only through WAITROOM_* overrides the binary reads
// like any other env, appended to the manifest's; the manifest's ports
// are then found again by containerPort.
func (p *pod) command(t *testing.T, bin, redisAddr, shop string) *exec.Cmd {
	t.Helper()
	args := toStrings(list(at(p.container, "args")))
	for i := range args {
		args[i] = p.files.Replace(args[i])
	}
	cfgPath, err := configFlag("serve", args[1:], os.Stderr)
	if err != nil {
		t.Fatalf("args %q: %v", args, err)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		t.Fatalf("the mounted configuration does not load: %v", err)
	}
	p.config = cfg
	env := []string{}
	for _, e := range list(at(p.container, "env")) {
		env = append(env, fmt.Sprintf("%s=%s", at(e, "name"), at(e, "value")))
	}
	for key, listen := range map[string]string{"WAITROOM_LISTEN": cfg.Listen, "WAITROOM_ADMIN_LISTEN": cfg.Admin.Listen} {
		_, port, _ := net.SplitHostPort(listen)
		n, _ := strconv.Atoi(port)
		p.remap[n] = freeAddr(t)
		env = append(env, key+"="+p.remap[n])
	}
	env = append(env, "WAITROOM_STORE_REDIS_ADDRS="+redisAddr, "WAITROOM_UPSTREAMS_SHOP_URL="+shop)
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, p.root
	// As the pod's user when the test may switch (its files are 0644, the
	// Redis socket opened to it); the image's USER gives the group.
	if os.Geteuid() == 0 {
		uid := uint32(at(p.spec, "securityContext", "runAsUser").(int))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	return cmd
}

// url is where the kubelet would reach a container port, by name or number.
func (p *pod) url(t *testing.T, port any, path string) string {
	t.Helper()
	n, isNumber := port.(int)
	for _, cp := range list(at(p.container, "ports")) {
		if !isNumber && at(cp, "name") == port {
			n = at(cp, "containerPort").(int)
		}
	}
	addr, ok := p.remap[n]
	if !ok {
		t.Fatalf("port %v: the configuration listens on no container port by that name or number", port)
	}
	return "http://" + addr + path
}

// The Deployment runs as shipped: the real binary with exactly its args,
// env and mounted ConfigMap and Secret answers the probes on the ports
// they name, serves a visitor through Redis, and on SIGTERM keeps serving
// with /readyz at 503 for server.shutdown_delay, then exits 0.
func TestKube_DeploymentRunsAsShipped(t *testing.T) {
	t.Parallel()
	docs := k8sDocs(t)
	p := newPod(t, docs)
	bin := buildBinary(t, p.root)
	up, site := newUpstream(t)
	srv := redistest.Start(t)
	// The Secret's password, required as the cluster's Redis would; the
	// socket opened to the pod's uid (in a cluster Redis is over the network).
	pw := at(docs["Secret"], "stringData", "redis-password").(string)
	if err := srv.Client().ConfigSet(t.Context(), "requirepass", pw).Err(); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{filepath.Dir(srv.Addr()): 0o755, srv.Addr(): 0o777} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	proc := startProcess(t, p.command(t, bin, srv.Addr(), site.URL))
	for _, name := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		pr := at(p.container, name)
		if pr == nil {
			continue
		}
		body := waitStatus(t, proc, p.url(t, at(pr, "httpGet", "port"), at(pr, "httpGet", "path").(string)), 200, time.Minute)
		if name == "readinessProbe" && !strings.Contains(body, "store: up") {
			t.Errorf("/readyz: %q, want the Redis it was given up", body)
		}
	}
	visit := p.url(t, "http", "/events/1")
	if code, body := probe(visit); code != 200 || body != "site:/events/1" {
		t.Fatalf("a visitor: %d %q", code, body)
	}
	// SIGTERM: /readyz goes 503 while a visitor is still served.
	stopped := time.Now()
	proc.signal(t, syscall.SIGTERM)
	ready := at(p.container, "readinessProbe", "httpGet")
	waitStatus(t, proc, p.url(t, at(ready, "port"), at(ready, "path").(string)), 503, 10*time.Second)
	if code, body := probe(visit); code != 200 || body != "site:/events/1" {
		t.Fatalf("a visitor during server.shutdown_delay: %d %q", code, body)
	}
	if code := proc.exitCode(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, proc.stderr)
	}
	if took, delay := time.Since(stopped), p.config.server.delay; delay == 0 || took < delay {
		t.Errorf("exited %s after SIGTERM; server.shutdown_delay is %s", took, delay)
	}
	if up.count() < 2 {
		t.Errorf("the shop saw %d requests, want both visits", up.count())
	}
}

// The Deployment's budgets fit what the configuration does: the grace
// period outlasts the lame duck and the drain, GOMEMLIMIT sits under the
// memory limit, and kube-prometheus-stack's Prometheus selects the
// ServiceMonitor.
func TestKube_ManifestBudgets(t *testing.T) {
	docs := k8sDocs(t)
	spec := at(docs["Deployment"], "spec", "template", "spec")
	// The server section over its defaults (TestDeploy_Kubernetes loads
	// the whole file with its secrets).
	file := struct {
		Server ServerConfig `yaml:"server"`
	}{DefaultConfig().Server}
	if err := yaml.Unmarshal([]byte(at(docs["ConfigMap"], "data", "waitroom.yaml").(string)), &file); err != nil {
		t.Fatal(err)
	}
	s := file.Server
	delay, _ := time.ParseDuration(s.ShutdownDelay)
	drain, _ := time.ParseDuration(s.ShutdownTimeout)
	grace := time.Duration(at(spec, "terminationGracePeriodSeconds").(int)) * time.Second
	if delay < 5*time.Second || grace <= delay+drain {
		t.Errorf("terminationGracePeriodSeconds %s, server.shutdown_delay %s + shutdown_timeout %s", grace, delay, drain)
	}
	c := at(spec, "containers", 0)
	var limit string
	for _, e := range list(at(c, "env")) {
		if at(e, "name") == "GOMEMLIMIT" {
			limit, _ = at(e, "value").(string)
		}
	}
	mem := bytesOf(t, at(c, "resources", "limits", "memory").(string), "i")
	if got := bytesOf(t, limit, "iB"); got <= 0 || got > mem*85/100 {
		t.Errorf("GOMEMLIMIT %q, want at most 85%% of limits.memory %d bytes", limit, mem)
	}
	if at(docs["ServiceMonitor"], "metadata", "labels", "release") != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels: %v", at(docs["ServiceMonitor"], "metadata", "labels"))
	}
}

// bytesOf reads "512Mi" (a Kubernetes quantity, suffix "i") or "400MiB"
// (GOMEMLIMIT, suffix "iB").
func bytesOf(t *testing.T, v, suffix string) int64 {
	t.Helper()
	for i, unit := range []string{"K", "M", "G"} {
		if n, ok := strings.CutSuffix(v, unit+suffix); ok {
			x, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", v, err)
			}
			return x << (10 * (i + 1))
		}
	}
	t.Fatalf("%q: want a number of Ki, Mi or Gi", v)
	return 0
}
