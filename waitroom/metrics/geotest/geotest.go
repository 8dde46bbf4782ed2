// Package geotest writes small MaxMind-format databases for tests of
// geo.db_file, with MaxMind's own writer (github.com/maxmind/mmdbwriter),
// so the reader is tested against the format as its makers write it and
// nothing is downloaded.
package geotest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Write makes a country database in the test's temporary directory that
// gives each CIDR of countries its value as country.iso_code, and returns
// its path. Reserved networks (the documentation ranges tests use) are
// allowed.
func Write(t testing.TB, countries map[string]string) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "waitroom-test-country", RecordSize: 24,
		IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, code := range countries {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}
		if err := tree.Insert(network, rec); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
