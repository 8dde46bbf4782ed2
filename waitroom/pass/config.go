package pass

import (
	"crypto"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultTTL is pass.ttl's default: with DefaultLeeway, a pass of a
// visitor who left or was released is refused within 15 seconds.
const DefaultTTL = 10 * time.Second

// Bounds of the pass section.
const (
	MinTTL         = 5 * time.Second
	MaxTTL         = time.Hour
	maxIssuerBytes = 256
	maxKeyFiles    = 16
)

// Config is the gateway's `pass:` section, as written in YAML.
type Config struct {
	// KeyFiles are private keys, PKCS#8 PEM: Ed25519 (openssl genpkey
	// -algorithm ed25519) or, for ES256, P-256 (openssl genpkey -algorithm
	// EC -pkeyopt ec_paramgen_curve:P-256). The first signs and must be of
	// Algorithm; all are published in the key set (a rotation from one
	// algorithm to the other publishes both). Default none: no pass is made.
	KeyFiles []string `mapstructure:"key_files" yaml:"key_files" json:"key_files"`
	// Algorithm is the alg passes are signed with: "EdDSA" (Ed25519, the
	// default) or "ES256" (ECDSA P-256 with SHA-256, which Spring
	// Security's resource server and other stock JOSE stacks without EdDSA
	// verify from the key set URL).
	Algorithm string `mapstructure:"algorithm" yaml:"algorithm" json:"algorithm"`
	// Issuer is the iss claim sites check. Default "waitroom".
	Issuer string `mapstructure:"issuer" yaml:"issuer" json:"issuer"`
	// TTL is how long a pass is valid, whole seconds from 5s to 1h. A
	// session's pass for a path is made again once a quarter of it is
	// left. It bounds revocation: a pass of a visitor who left or was
	// released is refused within TTL plus the verifiers' leeway (5s by
	// default), 15s with the defaults. Default "10s".
	TTL string `mapstructure:"ttl" yaml:"ttl" json:"ttl"`
}

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{KeyFiles: []string{}, Algorithm: AlgEdDSA, Issuer: "waitroom", TTL: DefaultTTL.String()}
}

// Enabled reports whether passes are configured at all.
func (c Config) Enabled() bool { return len(c.KeyFiles) > 0 }

// Validate reports every problem, each as "key: rule, got value" with keys
// relative to the section. It reads the key files.
func (c Config) Validate() error {
	_, err := c.Build()
	return err
}

// Build reads the key files and makes the Signer; the error lists every
// problem. With no key files it returns a nil Signer and no error (passes
// are off), after checking issuer and ttl all the same.
func (c Config) Build() (*Signer, error) {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	if msg := checkIssuer(c.Issuer); msg != "" {
		bad("issuer", "%s, got %q", msg, c.Issuer)
	}
	ttl, err := parseDuration(c.TTL)
	switch {
	case err != nil:
		bad("ttl", "%v", err)
	case ttl < MinTTL || ttl > MaxTTL:
		bad("ttl", "must be between %v and %v, got %q", MinTTL, MaxTTL, c.TTL)
	case ttl%time.Second != 0:
		bad("ttl", "must be a whole number of seconds, got %q", c.TTL)
	}
	if len(c.KeyFiles) > maxKeyFiles {
		bad("key_files", "at most %d files, got %d", maxKeyFiles, len(c.KeyFiles))
	}
	if c.Algorithm != AlgEdDSA && c.Algorithm != AlgES256 {
		bad("algorithm", `must be "EdDSA" or "ES256", got %q`, c.Algorithm)
	}
	var keys []crypto.Signer
	seen := map[string]int{}
	for i, path := range c.KeyFiles {
		key := fmt.Sprintf("key_files[%d]", i)
		if strings.TrimSpace(path) == "" {
			bad(key, "must be a file path, got %q", path)
			continue
		}
		k, err := LoadPrivateKey(path)
		if err != nil {
			bad(key, "%v", err)
			continue
		}
		if alg := algOf(k.Public()); i == 0 && alg != c.Algorithm && (c.Algorithm == AlgEdDSA || c.Algorithm == AlgES256) {
			bad(key, "signs, so must be a key for algorithm %s, got one for %s", c.Algorithm, alg)
			continue
		}
		kid := Thumbprint(k.Public())
		if j, dup := seen[kid]; dup {
			bad(key, "holds the same key as key_files[%d], got %q", j, path)
			continue
		}
		seen[kid] = i
		keys = append(keys, k)
	}
	if len(errs) > 0 || len(c.KeyFiles) == 0 {
		return nil, errors.Join(errs...)
	}
	return NewSigner(SignerOptions{Keys: keys, Issuer: c.Issuer, TTL: ttl})
}

// checkIssuer says what is wrong with an issuer, or "".
func checkIssuer(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > maxIssuerBytes:
		return fmt.Sprintf("must be at most %d bytes", maxIssuerBytes)
	case !utf8.ValidString(s):
		return "must be UTF-8"
	case strings.TrimSpace(s) != s:
		return "must not start or end with a space"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "must be printable"
		}
	}
	return ""
}

// parseDuration reads a Go duration that carries a unit ("60s", "2m"). A
// bare number is refused with a hint, since YAML would otherwise make 60
// mean 60ns. It mirrors waitroom.ParseDuration: this package imports
// nothing of the project's, so sites can use it as a library.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New(`want a duration such as "60s" or "5m", got ""`)
	}
	if strings.Trim(s, "0123456789.") == "" {
		return 0, fmt.Errorf(`want a duration with a unit such as "%ss", got %q`, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`want a duration such as "60s" or "5m", got %q`, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
	}
	return d, nil
}
