package metrics

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/waitroom/waitroom/waitroom"
)

// Geo reads the country of a client address from a MaxMind-format
// database (GeoLite2-Country, GeoIP2-City, DB-IP's, or one of the site's
// own), the file the operator names in geo.db_file. Nothing is downloaded:
// the operator keeps the file current. Safe for concurrent use.
type Geo struct {
	db *maxminddb.Reader
}

// OpenGeo opens the database at path and checks that it answers lookups.
func OpenGeo(path string) (*Geo, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geo.db_file %s: %w", path, err)
	}
	if err := db.Lookup(netip.IPv4Unspecified()).Err(); err != nil {
		db.Close()
		return nil, fmt.Errorf("geo.db_file %s: not a database lookups can read: %w", path, err)
	}
	return &Geo{db: db}, nil
}

// Close releases the database's file.
func (g *Geo) Close() error {
	if g == nil {
		return nil
	}
	return g.db.Close()
}

// Country is addr's country as the database's country.iso_code says: two
// capital letters, else "other" (a value that is no ISO code), or
// "unknown" (no address, not in the database, no country). The label set
// is so bounded by 26² + 2 values whatever the file holds.
func (g *Geo) Country(addr netip.Addr) string {
	if g == nil || !addr.IsValid() {
		return "unknown"
	}
	var code string
	res := g.db.Lookup(addr.Unmap())
	if !res.Found() || res.DecodePath(&code, "country", "iso_code") != nil || code == "" {
		return "unknown"
	}
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return "other"
	}
	return code
}

// clientOf is a request's client address: the one the front door
// believed (the request's waitroom.Scope, which honours
// server.trusted_proxies), else the peer's.
func clientOf(r *http.Request) netip.Addr {
	if sc := waitroom.ScopeOf(r.Context()); sc != nil && sc.Client.IsValid() {
		return sc.Client
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a
}
