package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// shBlocks are README's ```sh blocks that hold s.
func shBlocks(t *testing.T, s string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(m[1], s) {
			out = append(out, m[1])
		}
	}
	return out
}

// The README's admin API commands run as an operator copies them, against
// a real gateway: each answers 2xx (a release of the README's made-up
// visitor id, 404), never 415 for a missing Content-Type or 400 for a
// body the API does not take. curl is real (its answer reduced to the
// status); jq, which only formats, passes that on.
func TestREADME_AdminCommands(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is not installed; make deps installs it")
	}
	_, site := newUpstream(t)
	cfg := strings.Replace(gwConfig(site.URL, "    max_active: 5"), "  site: {", "  shop: { url: "+`"`+site.URL+`"`+" }\n  site: {", 1)
	app, _ := startGateway(t, cfg)
	blocks := shBlocks(t, "http://127.0.0.1:9090")
	if len(blocks) != 2 {
		t.Fatalf("README's admin blocks: found %d, want the admin API's and the API rooms'", len(blocks))
	}
	admin := "http://" + app.AdminAddr().String()
	for _, block := range blocks {
		script := "set -eu\n" +
			`curl() { command "$CURL" -sS -o /dev/null -w '%{http_code} %{url_effective}\n' "$@"; }` + "\n" +
			"jq() { cat; }\n" +
			strings.ReplaceAll(block, "http://127.0.0.1:9090", admin)
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "CURL="+curl, "WAITROOM_ADMIN_TOKEN="+adminToken)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the block failed: %v\n%s\n%s", err, block, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != strings.Count(block, "curl -s") {
			t.Fatalf("%d answers for %d commands:\n%s", len(lines), strings.Count(block, "curl -s"), out)
		}
		for _, l := range lines {
			code, url, _ := strings.Cut(l, " ")
			if code[0] != '2' && !(code == "404" && strings.HasSuffix(url, "/release")) {
				t.Errorf("README command to %s answered %s", url, code)
			}
		}
	}
}

// docBlocks are the fenced blocks of language lang in a file under docs/.
func docBlocks(t *testing.T, file, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// docs/webhooks.md's configuration block loads as written (its
// webhook_delivery section was refused as an unknown key), and a wrong
// value in that section is refused by its key.
func TestDocs_WebhooksConfigLoads(t *testing.T) {
	blocks := docBlocks(t, "webhooks.md", "yaml")
	if len(blocks) == 0 || !strings.Contains(blocks[0], "webhook_delivery:") {
		t.Fatalf("docs/webhooks.md's configuration block: %q", blocks)
	}
	t.Setenv("WAITROOM_WEBHOOK_SECRET", "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("WAITROOM_OPS_WEBHOOK_SECRET", "whsec_ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=")
	base := `upstreams: { site: { url: "http://127.0.0.1:3000" } }
rooms: { concert: {} }
routes: [ { path: /, upstream: site, room: concert } ]
`
	s, err := parseConfig("webhooks.yaml", []byte(base+blocks[0]))
	if err != nil {
		t.Fatalf("the documented block is refused: %v", err)
	}
	if len(s.webhooks) != 2 || s.delivery.MaxAttempts != 8 || s.delivery.ClaimTTL != time.Hour {
		t.Fatalf("built: %d endpoints, delivery %+v", len(s.webhooks), s.delivery)
	}
	bad := strings.Replace(blocks[0], "backoff_max: 5m", "backoff_max: soon", 1)
	if _, err := parseConfig("webhooks.yaml", []byte(base+bad)); err == nil || !strings.Contains(err.Error(), "webhook_delivery.backoff_max") {
		t.Fatalf("a bad delivery value: %v", err)
	}
}
