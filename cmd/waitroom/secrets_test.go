package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secrets come from mounted files as well as from the file or ${ENV}; a
// rotated one is a change a reload picks up.
func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	token := write("token", "admin-token-from-a-file-0123\n")
	hash := write("hash", testKey+"\n")
	block := write("block", testKey+"\n")
	pass := write("redis", "s3cret\n")
	cfg := fmt.Sprintf(`
admin: { listen: "127.0.0.1:0", token_file: %q }
cookie: { hash_keys_file: %q, block_keys_file: %q }
store: { redis: { password_file: %q } }
upstreams: { site: { url: "http://127.0.0.1:3000" } }
rooms: { concert: {} }
routes: [ { path: /, upstream: site, room: concert } ]
`, token, hash, block, pass)
	s, err := parseConfig("secrets.yaml", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if s.Admin.Token != "admin-token-from-a-file-0123" || len(s.Cookie.HashKeys) != 1 || s.Cookie.HashKeys[0] != testKey ||
		len(s.keys) != 1 || s.Store.Redis.Password != "s3cret" {
		t.Fatalf("secrets from files: token %q, hash keys %v, built keys %d, password %q", s.Admin.Token, s.Cookie.HashKeys, len(s.keys), s.Store.Redis.Password)
	}
	before := s.fingerprint()
	write("hash", "MTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTE=\n"+testKey+"\n")
	write("block", testKey+"\n"+testKey+"\n")
	s2, err := parseConfig("secrets.yaml", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if string(s2.fingerprint()) == string(before) || len(s2.keys) != 2 {
		t.Fatalf("a rotated key file: same fingerprint %t, %d keys", string(s2.fingerprint()) == string(before), len(s2.keys))
	}
	for _, tt := range []struct{ yaml, want string }{
		{strings.Replace(cfg, "token_file:", `token: "inline-token-0123456789", token_file:`, 1), "admin.token_file: give the secret or its file, not both"},
		{strings.Replace(cfg, token, filepath.Join(dir, "missing"), 1), "admin.token_file: cannot read a secret"},
		{strings.Replace(cfg, pass, write("empty", "\n"), 1), "store.redis.password_file: cannot read a secret"},
	} {
		if _, err := parseConfig("secrets.yaml", []byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("want %q, got %v", tt.want, err)
		}
	}
}
