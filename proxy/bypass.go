package proxy

import (
	"github.com/waitroom/waitroom/waitroom/conf"

	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/netip"
)

// minSecretLen is the shortest bypass secret accepted: 16 bytes, 128 bits if
// random, so that guessing it is no shortcut past the line.
const minSecretLen = 16

// BypassConfig is the `bypass:` section: requests that skip the waiting room
// and go straight to the route's upstream.
type BypassConfig struct {
	// Paths are clean path prefixes ("/static/", "/favicon.ico"), matched like
	// route paths: whole segments, without case, ";" parameters left out.
	// Default none.
	Paths []string `mapstructure:"paths" yaml:"paths" json:"paths"`
	// CIDRs are client networks ("10.0.0.0/8") or single addresses, matched
	// against the client address the front door worked out (ClientAddr:
	// the peer, or what a trusted proxy forwarded for it), which Match is
	// given. A forwarding header from an untrusted peer never counts.
	// Default none.
	CIDRs []string `mapstructure:"cidrs" yaml:"cidrs" json:"cidrs"`
	// Header lets requests that carry a shared secret through. Default off.
	Header BypassHeader `mapstructure:"header" yaml:"header" json:"header"`
}

// BypassHeader names a request header and the secret value it must carry.
// Both are set, or neither.
type BypassHeader struct {
	// Name is the header's name ("X-Waitroom-Bypass").
	Name string `mapstructure:"name" yaml:"name" json:"name"`
	// Secret is the value, at least 16 bytes; write it as "${ENV}" in the file.
	Secret string `mapstructure:"secret" yaml:"secret" json:"secret"`
}

// DefaultBypass returns the default: nothing bypasses the room.
// Its lists are empty, not nil, so a configuration loader can tell they are
// lists (and take them from the environment).
func DefaultBypass() BypassConfig { return BypassConfig{Paths: []string{}, CIDRs: []string{}} }

// Bypass decides whether a request skips the waiting room. It is immutable
// once built and safe for concurrent use. A nil *Bypass bypasses nothing.
type Bypass struct {
	paths    []string // lower case
	prefixes []netip.Prefix
	header   string   // canonical name; "" when off
	secret   [32]byte // SHA-256 of the secret
}

// Build checks the section and prepares it for Match; the error lists
// every problem, with keys relative to the section. The secret's value
// never appears in a message.
func (c BypassConfig) Build() (*Bypass, error) {
	var p conf.Problems
	b := &Bypass{}
	for i, path := range c.Paths {
		if rule := checkPrefix(path); rule != "" {
			p.Add(fmt.Sprintf("paths[%d]", i), "%s", rule)
		}
		b.paths = append(b.paths, lowerASCII(path))
	}
	for i, cidr := range c.CIDRs {
		pfx, err := ParsePrefix(cidr)
		if err != nil {
			p.Add(fmt.Sprintf("cidrs[%d]", i), "%v", err)
		}
		b.prefixes = append(b.prefixes, pfx)
	}
	h := c.Header
	switch {
	case h.Name == "" && h.Secret != "":
		p.Add("header.name", "required when header.secret is set, got %q", h.Name)
	case h.Name != "" && h.Secret == "":
		p.Add("header.secret", "required when header.name is set, got none")
	case h.Name != "" && !isToken(h.Name):
		p.Add("header.name", "must be an HTTP header name (letters, digits and \"-\"), got %q", h.Name)
	}
	if h.Secret != "" && len(h.Secret) < minSecretLen {
		p.Add("header.secret", "must be at least %d bytes, got %d bytes", minSecretLen, len(h.Secret))
	}
	if h.Name != "" {
		b.header = http.CanonicalHeaderKey(h.Name)
		b.secret = sha256.Sum256([]byte(h.Secret))
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

// Match reports whether r skips the room: cleanPath (from CleanPath), in
// its MatchPath form, lies under a bypass path, client (the address the
// front door worked out with ClientAddr) is in a bypass network, or the
// bypass header carries the secret.
func (b *Bypass) Match(r *http.Request, client netip.Addr, cleanPath string) bool {
	if b == nil {
		return false
	}
	if len(b.paths) > 0 {
		p := MatchPath(cleanPath)
		for _, prefix := range b.paths {
			if underPath(p, prefix) {
				return true
			}
		}
	}
	return len(b.prefixes) > 0 && containsAddr(b.prefixes, client) || b.headerMatches(r.Header)
}

// HeaderName is the canonical name of the bypass header, "" when the header
// rule is off. The caller may pass it to Options.DropHeaders so the secret
// does not travel on to the upstream.
func (b *Bypass) HeaderName() string {
	if b == nil {
		return ""
	}
	return b.header
}

// headerMatches compares digests rather than the values themselves so that
// the comparison takes the same time whatever the length of the guess.
func (b *Bypass) headerMatches(h http.Header) bool {
	if b.header == "" {
		return false
	}
	v := h.Get(b.header)
	if v == "" {
		return false
	}
	got := sha256.Sum256([]byte(v))
	return subtle.ConstantTimeCompare(got[:], b.secret[:]) == 1
}
