package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// boundConfig is a gateway on Redis (nothing listens there: check and
// parseConfig do not need it) with one room expecting waiting visitors.
func boundConfig(store string, waiting int64, refreshMax, abandonAfter string) string {
	return fmt.Sprintf(`
listen: "127.0.0.1:8080"
store: %s
cookie: { hash_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="], block_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="] }
upstreams:
  shop: { url: "http://127.0.0.1:1" }
rooms:
  sale:
    abandon_after: %s
    expected_waiting: %d
    page: { refresh_max: %s }
routes:
  - { path: /, upstream: shop, room: sale }
`, store, abandonAfter, waiting, refreshMax)
}

const boundRedis = `{kind: redis, redis: {addrs: ["127.0.0.1:1"]}}`

func boundWarnings(t *testing.T, yaml string) []string {
	t.Helper()
	s, err := parseConfig("bound.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range s.warnings {
		if strings.Contains(w, "expected_waiting") {
			out = append(out, w)
		}
	}
	return out
}

// A room expected to hold more waiting than half a Redis core's worth of
// polls is warned about, by name, with the estimated share and what to
// change; one under it, one without an estimate and one on the memory
// store are not.
func TestRoomBound_CheckWarnsPastHalfACore(t *testing.T) {
	t.Parallel()
	// Defaults: refresh_max 30s, abandon_after 2m; 7,125,000 is half a core.
	w := boundWarnings(t, boundConfig(boundRedis, 10_000_000, "30s", "2m"))
	if len(w) != 1 {
		t.Fatalf("10,000,000 waiting at refresh_max 30s: warnings %q, want one", w)
	}
	for _, part := range []string{"rooms.sale.expected_waiting (10,000,000)", "about 70% of its Redis node's core",
		"2µs", "28.5s between polls", "holds 7,125,000 at 50%", "raise page.refresh_max", "abandon_after",
		"split the line into rooms"} {
		if !strings.Contains(w[0], part) {
			t.Errorf("warning %q lacks %q", w[0], part)
		}
	}
	for _, c := range []struct {
		name, yaml string
	}{
		{"just under half a core", boundConfig(boundRedis, 7_125_000, "30s", "2m")},
		{"a longer refresh_max", boundConfig(boundRedis, 10_000_000, "60s", "2m")},
		{"no estimate", boundConfig(boundRedis, 0, "30s", "2m")},
		{"the memory store", boundConfig("{kind: memory}", 100_000_000, "30s", "2m")},
	} {
		if w := boundWarnings(t, c.yaml); len(w) != 0 {
			t.Errorf("%s: warnings %q, want none", c.name, w)
		}
	}
	if _, err := parseConfig("bound.yaml", []byte(boundConfig(boundRedis, -1, "30s", "2m"))); err == nil ||
		!strings.Contains(err.Error(), "rooms.sale.expected_waiting: must be from 0") {
		t.Errorf("a negative expected_waiting: %v, want refused", err)
	}

	// And `waitroom check` prints it.
	path := filepath.Join(t.TempDir(), "bound.yaml")
	if err := os.WriteFile(path, []byte(boundConfig(boundRedis, 20_000_000, "30s", "2m")), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", path}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "warning: rooms.sale.expected_waiting (20,000,000) would take about 140%") {
		t.Errorf("check: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// The table of docs/scale.md ("A room's bound per Redis core") is this
// arithmetic: each row's waiting per core and at half a core.
func TestRoomBound_DocumentedTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "<!-- the room bound table: TestRoomBound_DocumentedTable -->\n")
	if !ok {
		t.Fatal("docs/scale.md has no room bound table")
	}
	rows := 0
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| `") {
			if rows > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("row %q: want 5 cells", line)
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`*")
		}
		refreshMax, err := time.ParseDuration(cells[0])
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		abandon, _ := time.ParseDuration(cells[1])
		if abandon < 2*refreshMax {
			t.Errorf("row %q: abandon_after under twice refresh_max", line)
		}
		interval := time.Duration(farBackInterval * float64(refreshMax))
		want := []string{conf.Short(interval), thousands(waitingPerCore(refreshMax, 1)), thousands(waitingPerCore(refreshMax, roomCoreShare))}
		if got := cells[2:]; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("row %q: want %q", line, want)
		}
		// And the bound is where the warning starts.
		if roomCoreUse(waitingPerCore(refreshMax, roomCoreShare), refreshMax) > roomCoreShare+1e-9 ||
			roomCoreUse(waitingPerCore(refreshMax, roomCoreShare)+1000, refreshMax) <= roomCoreShare {
			t.Errorf("row %q: the warning does not start at the bound", line)
		}
		rows++
	}
	if rows < 3 {
		t.Errorf("%d rows in the table, want the defaults and others", rows)
	}
}
