package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// k8sDocs reads every YAML document under deploy/kubernetes, by kind.
func k8sDocs(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	docs := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var d map[string]any
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kind, _ := d["kind"].(string)
			if kind == "" {
				t.Fatalf("%s: a document without a kind", f)
			}
			docs[kind] = d
		}
	}
	return docs
}

// at walks a decoded YAML tree by keys and indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func list(v any) []any { l, _ := v.([]any); return l }

// The manifests agree with each other and with the configuration they
// carry, which the gateway's own loader reads.
func TestDeploy_Kubernetes(t *testing.T) {
	docs := k8sDocs(t)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap", "Secret", "PodDisruptionBudget", "ServiceMonitor"} {
		if docs[kind] == nil {
			t.Fatalf("no %s", kind)
		}
	}
	dep, cm, sec := docs["Deployment"], docs["ConfigMap"], docs["Secret"]
	// The configuration loads, with the secrets the Secret holds.
	raw, _ := at(cm, "data", "waitroom.yaml").(string)
	secretKeys := map[string]string{}
	for k, v := range at(sec, "stringData").(map[string]any) {
		secretKeys[k] = v.(string)
	}
	spec := at(dep, "spec", "template", "spec")
	c := at(spec, "containers", 0)
	mounts := map[string]string{} // mountPath -> volume
	for _, m := range list(at(c, "volumeMounts")) {
		mounts[at(m, "mountPath").(string)] = at(m, "name").(string)
	}
	volumes := map[string]any{}
	for _, v := range list(at(spec, "volumes")) {
		volumes[at(v, "name").(string)] = v
	}
	for path, vol := range mounts {
		v := volumes[vol]
		if v == nil {
			t.Fatalf("mount %s names volume %q, which does not exist", path, vol)
		}
		if name := at(v, "configMap", "name"); name != nil && name != at(cm, "metadata", "name") {
			t.Errorf("volume %s names ConfigMap %v", vol, name)
		}
		if name := at(v, "secret", "secretName"); name != nil && name != at(sec, "metadata", "name") {
			t.Errorf("volume %s names Secret %v", vol, name)
		}
	}
	// Every *_file of the configuration is a key of the Secret mounted there.
	dir := t.TempDir()
	files := regexp.MustCompile(`(\w+_file): (\S+)`).FindAllStringSubmatch(raw, -1)
	if len(files) < 4 {
		t.Fatalf("the configuration reads %d secret files, want the token, the Redis password and both keys", len(files))
	}
	local := raw
	for _, f := range files {
		mountDir, key := filepath.Dir(f[2]), filepath.Base(f[2])
		vol := volumes[mounts[mountDir]]
		if at(vol, "secret") == nil {
			t.Errorf("%s reads %s, but %s is not a Secret's mount", f[1], f[2], mountDir)
		}
		val, ok := secretKeys[key]
		if !ok {
			t.Errorf("%s reads %s, but the Secret has no key %q", f[1], f[2], key)
		}
		// Loaded here with valid stand-ins for the placeholders.
		if strings.Contains(f[1], "keys") {
			val = testKey
		}
		p := filepath.Join(dir, key)
		if err := os.WriteFile(p, []byte(val), 0o600); err != nil {
			t.Fatal(err)
		}
		local = strings.Replace(local, f[2], p, 1)
	}
	s, err := parseConfig("configmap waitroom.yaml", []byte(local))
	if err != nil {
		t.Fatalf("the ConfigMap's configuration does not load: %v", err)
	}
	// The config directory is mounted whole (a subPath would never see a
	// ConfigMap update), and --config names the file in it.
	args := strings.Join(toStrings(list(at(c, "args"))), " ")
	if mounts["/etc/waitroom"] == "" || !strings.Contains(args, "--config /etc/waitroom/waitroom.yaml") {
		t.Errorf("args %q, mounts %v", args, mounts)
	}
	for _, m := range list(at(c, "volumeMounts")) {
		if at(m, "subPath") != nil {
			t.Errorf("a subPath mount never sees a ConfigMap update: %v", m)
		}
	}
	// Ports: the container's, the probes', the Service's and the
	// ServiceMonitor's name the listeners the configuration opens.
	ports := map[string]int{}
	for _, p := range list(at(c, "ports")) {
		ports[at(p, "name").(string)] = at(p, "containerPort").(int)
	}
	_, listen, _ := net.SplitHostPort(s.Listen)
	adminHost, admin, _ := net.SplitHostPort(s.Admin.Listen)
	if strconv.Itoa(ports["http"]) != listen || strconv.Itoa(ports["admin"]) != admin || adminHost != "0.0.0.0" {
		t.Errorf("container ports %v, listen %s, admin.listen %s (the kubelet must reach it)", ports, s.Listen, s.Admin.Listen)
	}
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		if at(c, probe, "httpGet", "path") != path || at(c, probe, "httpGet", "port") != "admin" {
			t.Errorf("%s: %v", probe, at(c, probe))
		}
	}
	for _, p := range list(at(docs["Service"], "spec", "ports")) {
		if _, ok := ports[at(p, "targetPort").(string)]; !ok {
			t.Errorf("the Service targets port %v, which the container lacks", at(p, "targetPort"))
		}
	}
	sm := at(docs["ServiceMonitor"], "spec", "endpoints", 0)
	if at(sm, "port") != "admin" || at(sm, "path") != "/metrics" || at(sm, "authorization", "credentials", "key") != "admin-token" {
		t.Errorf("ServiceMonitor endpoint: %v", sm)
	}
	// Selectors match the pods.
	labels := at(dep, "spec", "template", "metadata", "labels")
	for _, sel := range []any{at(docs["Service"], "spec", "selector"), at(docs["PodDisruptionBudget"], "spec", "selector", "matchLabels"), at(dep, "spec", "selector", "matchLabels")} {
		for k, v := range sel.(map[string]any) {
			if at(labels, k) != v {
				t.Errorf("selector %v does not select the pods %v", sel, labels)
			}
		}
	}
	if r := at(dep, "spec", "replicas"); r != 3 {
		t.Errorf("replicas %v", r)
	}
}

func toStrings(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i], _ = v.(string)
	}
	return out
}

// The systemd unit reads its configuration as a credential and keeps its
// hardening (TestSystemd_UnitRunsAsDynamicUser runs it).
func TestDeploy_Systemd(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", "waitroom.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{"LoadCredential=config:", "ExecStart=/usr/local/bin/waitroom serve --config %d/config",
		"NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "DynamicUser=yes", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
}

// Every query of the Grafana dashboard names a metric a gateway's
// /metrics exposes.
func TestDeploy_GrafanaQueriesNameRealMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "waitroom.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	_, site := newUpstream(t)
	// A room whose every counter can move, a template, and a webhook to
	// nowhere, so that every series the dashboard queries exists.
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 1\n    tick: 100ms\n    join_limit: 2/m\n    session_clients: 1"),
		"routes:\n", "  \"t-{id}\": { max_active: 1 }\nroutes:\n  - { path: \"/t/{id}/\", upstream: site, room: \"t-{id}\" }\n", 1) +
		"webhooks:\n  - { url: \"http://127.0.0.1:1/hook\", events: [queue.started], secret: \"" + hookSecret + "\" }\n"
	app, base := startGateway(t, cfg+"server: { trusted_proxies: [127.0.0.1/32] }\n")
	v := newVisitor(t, base)
	v.get("/events/1") // a request and an admission, so histograms have series
	w := newVisitor(t, base)
	w.getJSON("/events/1")
	w.getJSON("/events/1") // the line starts: a webhook to nowhere, retried
	time.Sleep(400 * time.Millisecond)
	v.get("/events/done") // a session a release ended
	w.waitAdmitted("concert", 5*time.Second)
	w.get("/events/2")
	newVisitor(t, base).get("/events/1") // past join_limit from 127.0.0.1
	newVisitor(t, base).get("/t/1/")
	w.do(http.MethodGet, "/events/3", "X-Forwarded-For", "198.51.100.7") // the session from a second network
	var body string
	waitFor(t, 10*time.Second, func() bool {
		body = metricsText(t, app)
		return strings.Contains(body, "waitroom_webhooks_total{") && strings.Contains(body, "waitroom_template_rooms{")
	})
	exposed := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "# TYPE ") {
			f := strings.Fields(l)
			exposed[f[2]] = true
			if f[3] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exposed[f[2]+s] = true
				}
			}
		}
	}
	metric := regexp.MustCompile(`\bwaitroom_[a-z_]+`)
	var named []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range metric.FindAllString(tg.Expr, -1) {
				named = append(named, m)
				if !exposed[m] {
					t.Errorf("panel %q queries %s, which /metrics does not expose", p.Title, m)
				}
			}
		}
	}
	sort.Strings(named)
	if len(named) < 12 {
		t.Fatalf("only %d metrics named: %v", len(named), named)
	}
}
