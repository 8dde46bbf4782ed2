package metrics

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/waitroom/waitroom/waitroom/metrics/geotest"
)

// Country reads the ISO code a generated database gives an address, folds
// anything else into "other", and says "unknown" where it knows nothing.
func TestGeo_Country(t *testing.T) {
	g, err := OpenGeo(geotest.Write(t, map[string]string{
		"198.51.100.0/24": "KR", "203.0.113.0/24": "JP", "192.0.2.0/25": "Korea", "192.0.2.128/25": "kr",
		"2001:db8::/32": "DE",
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for addr, want := range map[string]string{
		"198.51.100.7": "KR", "203.0.113.250": "JP", "::ffff:198.51.100.7": "KR", "2001:db8::1": "DE",
		"192.0.2.1": "other", "192.0.2.200": "other", "10.1.2.3": "unknown", "": "unknown",
	} {
		a, _ := netip.ParseAddr(addr)
		if got := g.Country(a); got != want {
			t.Errorf("Country(%q) = %s, want %s", addr, got, want)
		}
	}
}

// A file that is no database is refused at start, with its name.
func TestGeo_OpenRefusesJunk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.mmdb")
	if err := os.WriteFile(path, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenGeo(path); err == nil {
		t.Fatal("a junk file opened")
	}
	if _, err := OpenGeo(filepath.Join(t.TempDir(), "missing.mmdb")); err == nil {
		t.Fatal("a missing file opened")
	}
}
