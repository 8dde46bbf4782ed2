package pass

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfig_Build(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := newKey(t), newKey(t)
	pa := writeFile(t, dir, "a.pem", pemOf(t, a))
	pb := writeFile(t, dir, "b.pem", pemOf(t, b))
	c := DefaultConfig()
	c.KeyFiles = []string{pa, pb}
	s, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID() != Thumbprint(pub(a)) || s.TTL() != 10*time.Second {
		t.Fatalf("kid %s ttl %v: want the first key's kid and 10s", s.KeyID(), s.TTL())
	}
	if _, err := s.Key(t.Context(), Thumbprint(pub(b))); err != nil {
		t.Fatal("the second key is not published")
	}
	if !c.Enabled() || DefaultConfig().Enabled() {
		t.Fatal("Enabled: want true with key files only")
	}
	off, err := DefaultConfig().Build()
	if off != nil || err != nil {
		t.Fatalf("no key files: %v %v, want passes off and no error", off, err)
	}
}

// Every problem is reported under its key, all at once.
func TestConfig_Problems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := writeFile(t, dir, "k.pem", pemOf(t, newKey(t)))
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"bare number", func(c *Config) { c.TTL = "60" }, []string{`ttl: want a duration with a unit such as "60s", got "60"`}},
		{"too short", func(c *Config) { c.TTL = "4s" }, []string{`ttl: must be between 5s and 1h0m0s, got "4s"`}},
		{"too long", func(c *Config) { c.TTL = "61m" }, []string{`ttl: must be between 5s and 1h0m0s, got "61m"`}},
		{"fraction", func(c *Config) { c.TTL = "7500ms" }, []string{`ttl: must be a whole number of seconds, got "7500ms"`}},
		{"no unit words", func(c *Config) { c.TTL = "a minute" }, []string{`ttl: want a duration such as`}},
		{"empty issuer", func(c *Config) { c.Issuer = "" }, []string{`issuer: must not be empty, got ""`}},
		{"control issuer", func(c *Config) { c.Issuer = "wait\nroom" }, []string{`issuer: must be printable, got "wait\nroom"`}},
		{"spaced issuer", func(c *Config) { c.Issuer = " waitroom" }, []string{`issuer: must not start or end with a space`}},
		{"long issuer", func(c *Config) { c.Issuer = strings.Repeat("w", 257) }, []string{`issuer: must be at most 256 bytes`}},
		{"missing file", func(c *Config) { c.KeyFiles = []string{k, missing} }, []string{`key_files[1]: reading "` + missing + `": no such file or directory`}},
		{"empty path", func(c *Config) { c.KeyFiles = []string{" "} }, []string{`key_files[0]: must be a file path`}},
		{"same key twice", func(c *Config) { c.KeyFiles = []string{k, k} }, []string{`key_files[1]: holds the same key as key_files[0]`}},
		{"too many", func(c *Config) { c.KeyFiles = make([]string, 17) }, []string{`key_files: at most 16 files, got 17`}},
		{"all at once", func(c *Config) { c.TTL, c.Issuer, c.KeyFiles = "0", "", []string{missing} },
			[]string{"issuer: ", "ttl: ", "key_files[0]: "}},
	} {
		c := DefaultConfig()
		c.KeyFiles = []string{k}
		tc.edit(&c)
		s, err := c.Build()
		if err == nil || s != nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted what Build refused", tc.name)
		}
		lines := strings.Split(err.Error(), "\n")
		for _, w := range tc.want {
			found := false
			for _, l := range lines {
				found = found || strings.HasPrefix(l, w)
			}
			if !found {
				t.Errorf("%s: problems %q, want a line starting %q", tc.name, lines, w)
			}
		}
		if tc.name == "all at once" && len(lines) != 3 {
			t.Errorf("all at once: %d problems, want 3: %q", len(lines), lines)
		}
	}
}

// pass.algorithm picks the signing key's kind: ES256 signs with a P-256
// key and publishes it as an EC JWK; a first key of the other kind, or an
// unknown algorithm, is refused by key.
func TestConfig_Algorithm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pe := writeFile(t, dir, "p256.pem", pemOf(t, ec))
	pd := writeFile(t, dir, "ed.pem", pemOf(t, newKey(t)))
	c := DefaultConfig()
	c.Algorithm, c.KeyFiles = AlgES256, []string{pe, pd}
	s, err := c.Build()
	if err != nil || s.Algorithm() != AlgES256 || !strings.Contains(string(s.JWKS()), `"kty":"EC","crv":"P-256"`) || !strings.Contains(string(s.JWKS()), `"alg":"EdDSA"`) {
		t.Fatalf("ES256 with an Ed25519 key published beside: %v %s", err, s.JWKS())
	}
	c.KeyFiles = []string{pd, pe}
	if _, err := c.Build(); err == nil || !strings.Contains(err.Error(), "key_files[0]: signs, so must be a key for algorithm ES256") {
		t.Fatalf("ES256 with an Ed25519 key first: %v", err)
	}
	c.Algorithm = "RS256"
	if _, err := c.Build(); err == nil || !strings.Contains(err.Error(), `algorithm: must be "EdDSA" or "ES256"`) {
		t.Fatalf("RS256: %v", err)
	}
}
