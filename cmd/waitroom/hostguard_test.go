package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `check` takes localhost and 127.0.0.1 (and [::1]) on one port for one
// site: a room bound to one host beside a host-less route to the other
// spelling is refused, and the documented remedy, the room's path on
// every host too, is accepted.
func TestCheck_LoopbackSpellingsAreOneSite(t *testing.T) {
	dir := t.TempDir()
	check := func(routes string) (int, string) {
		p := filepath.Join(dir, "loop.yaml")
		yaml := `
upstreams:
  app: { url: "http://localhost:3000" }
  app-direct: { url: "http://127.0.0.1:3000" }
  app-v6: { url: "http://[::1]:3000" }
rooms:
  concert: {}
routes:
` + routes
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"check", "--config", p}, &out, &errb)
		return code, errb.String()
	}
	for _, other := range []string{"app-direct", "app-v6"} {
		code, msg := check("  - { host: tickets.example.com, path: /events/, upstream: app, room: concert }\n" +
			"  - { path: /, upstream: " + other + " }\n")
		if code != 1 || !strings.Contains(msg, `the same site (http://localhost:3000) as upstream "app" under the name "`+other+`"`) {
			t.Fatalf("a host-only room on localhost beside %s: exit %d\n%s", other, code, msg)
		}
	}
	if code, msg := check("  - { host: tickets.example.com, path: /events/, upstream: app, room: concert }\n" +
		"  - { path: /events/, upstream: app-direct, room: concert }\n" +
		"  - { path: /, upstream: app-direct }\n"); code != 0 {
		t.Fatalf("the room on every host too: exit %d\n%s", code, msg)
	}
}
