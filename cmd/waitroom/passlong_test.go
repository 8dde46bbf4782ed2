package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// A path too long for a pass (past pass.MaxTokenSize once in the claims):
// the request goes on to the site without a pass, and a client sending
// such paths over and over gets one log line a minute, not one a request.
func TestPass_LongPathLoggedOnce(t *testing.T) {
	site, url := newPassSite(t)
	key := filepath.Join(t.TempDir(), "pass.pem")
	writeEd25519(t, key)
	cfg := gwConfig(url, "    max_active: 5") + fmt.Sprintf("pass: { key_files: [%q] }\n", key)
	_, base, _, logs := fileGateway(t, cfg, false)
	v := newVisitor(t, base)
	if r := v.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("admitted request: %d %.200s", r.status, r.body)
	}
	if p, _ := site.last(); p == "" {
		t.Fatal("a short path's request carried no pass")
	}
	const requests = 30
	for i := range requests {
		path := fmt.Sprintf("/events/%d/%s", i, strings.Repeat("a", 3500))
		if r := v.do(http.MethodGet, path); r.body != "site:"+path {
			t.Fatalf("a long path: %d %.200s", r.status, r.body)
		}
		if p, _ := site.last(); p != "" {
			t.Fatalf("a long path's request carried a pass of %d bytes", len(p))
		}
	}
	if n := logs.FilterMessageSnippet("signing an admission pass").Len(); n != 1 {
		t.Fatalf("%d requests with a path too long for a pass logged %d lines, want 1", requests, n)
	}
}
