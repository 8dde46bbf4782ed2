package waitroom

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// CookieConfig is the `cookie:` section.
type CookieConfig struct {
	// Name is the cookie name prefix; a room's cookie is "<name>_<room>".
	// Default "waitroom".
	Name string `mapstructure:"name" yaml:"name" json:"name"`
	// HashKeys sign tickets: standard base64, 32 or 64 bytes each. The first
	// key signs; every key verifies. Empty: random keys at start (memory
	// store only; tickets then do not survive a restart).
	HashKeys []string `mapstructure:"hash_keys" yaml:"hash_keys" json:"hash_keys"`
	// BlockKeys encrypt tickets (AES): standard base64, 16, 24 or 32 bytes,
	// one for each hash key.
	BlockKeys []string `mapstructure:"block_keys" yaml:"block_keys" json:"block_keys"`
	// HashKeysFile and BlockKeysFile name files holding the keys, one per
	// line (a mounted secret), instead of HashKeys and BlockKeys; they are
	// read again on every reload. Default "".
	HashKeysFile  string `mapstructure:"hash_keys_file" yaml:"hash_keys_file" json:"hash_keys_file"`
	BlockKeysFile string `mapstructure:"block_keys_file" yaml:"block_keys_file" json:"block_keys_file"`
	// Secure sends the cookie over HTTPS only. Default true.
	Secure bool `mapstructure:"secure" yaml:"secure" json:"secure"`
	// SameSite is "lax" (default), "strict" or "none" (needs secure).
	SameSite string `mapstructure:"same_site" yaml:"same_site" json:"same_site"`
	// Domain of the cookie; default "" (the host that set it).
	Domain string `mapstructure:"domain" yaml:"domain" json:"domain"`
	// MaxAge is how long a ticket stays valid, waiting or inside. Default "24h".
	MaxAge string `mapstructure:"max_age" yaml:"max_age" json:"max_age"`
}

// DefaultCookie returns the cookie defaults.
func DefaultCookie() CookieConfig {
	return CookieConfig{Name: "waitroom", Secure: true, SameSite: "lax", MaxAge: "24h",
		HashKeys: []string{}, BlockKeys: []string{}}
}

var cookieNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Build parses the section into a Cookie and its key pairs (nil when no keys
// are configured). The error lists every problem.
func (c CookieConfig) Build() (Cookie, []KeyPair, error) {
	var p conf.Problems
	out := Cookie{Name: c.Name, Secure: c.Secure, Domain: c.Domain}
	if !cookieNamePattern.MatchString(c.Name) {
		p.Add("name", "must be 1 to 32 letters, digits, '-' or '_', got %q", c.Name)
	}
	switch strings.ToLower(c.SameSite) {
	case "lax":
		out.SameSite = http.SameSiteLaxMode
	case "strict":
		out.SameSite = http.SameSiteStrictMode
	case "none":
		out.SameSite = http.SameSiteNoneMode
		if !c.Secure {
			p.Add("same_site", `"none" needs secure: true (browsers drop such cookies otherwise)`)
		}
	default:
		p.Add("same_site", `must be "lax", "strict" or "none", got %q`, c.SameSite)
	}
	out.MaxAge = p.Duration("max_age", c.MaxAge, time.Minute)
	if len(c.HashKeys) != len(c.BlockKeys) {
		p.Add("block_keys", "need one block key for each hash key, got %d block keys for %d hash keys", len(c.BlockKeys), len(c.HashKeys))
	}
	var keys []KeyPair
	for i, h := range c.HashKeys {
		hk, err := decodeKey(h, 32, 64)
		if err != nil {
			p.Add(fmt.Sprintf("hash_keys[%d]", i), "%v", err)
		}
		var bk []byte
		if i < len(c.BlockKeys) {
			if bk, err = decodeKey(c.BlockKeys[i], 16, 24, 32); err != nil {
				p.Add(fmt.Sprintf("block_keys[%d]", i), "%v", err)
			}
		}
		keys = append(keys, KeyPair{Hash: hk, Block: bk})
	}
	for i := len(c.HashKeys); i < len(c.BlockKeys); i++ {
		if _, err := decodeKey(c.BlockKeys[i], 16, 24, 32); err != nil {
			p.Add(fmt.Sprintf("block_keys[%d]", i), "%v", err)
		}
	}
	return out, keys, p.Err()
}

// decodeKey never puts the key itself into the error.
func decodeKey(s string, sizes ...int) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("must be standard base64 (try: openssl rand -base64 %d)", sizes[0])
	}
	for _, n := range sizes {
		if len(b) == n {
			return b, nil
		}
	}
	want := fmt.Sprint(sizes[0])
	for i, n := range sizes[1:] {
		if i == len(sizes)-2 {
			want += fmt.Sprintf(" or %d", n)
		} else {
			want += fmt.Sprintf(", %d", n)
		}
	}
	return nil, fmt.Errorf("must decode to %s bytes, got %d", want, len(b))
}
