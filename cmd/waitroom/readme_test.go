package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// README's admin commands run in TestDocs_Executed (docs_exec_test.go),
// every answer's status checked.

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
