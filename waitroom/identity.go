package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// IdentityHeader carries a signed account for clients without the site's
// cookie (apps), as the identity cookie would.
const IdentityHeader = "Waitroom-Identity"

// IdentityConfig is rooms.<name>.identity: the site's word on who a visitor
// is. At login the site sets a cookie (or an app sends IdentityHeader)
// holding "<account>.<base64url(HMAC-SHA256(secret, account))>", unpadded.
// A valid one keys the visitor's place and session, so every browser, tab
// and device of one account shares one place and at most one session.
type IdentityConfig struct {
	// Cookie names the site's cookie. Default "": identity is off.
	Cookie string `mapstructure:"cookie" yaml:"cookie" json:"cookie"`
	// Secret is the HMAC key the site signs with, at least 32 bytes; write
	// it as "${ENV}".
	Secret string `mapstructure:"secret" yaml:"secret" json:"secret"`
	// Required refuses visitors without a valid identity (403) instead of
	// letting them wait anonymously. Default false.
	Required bool `mapstructure:"required" yaml:"required" json:"required"`
}

// minIdentitySecret: a shorter key would let a patient attacker sign
// accounts of their own choosing.
const minIdentitySecret = 32

// maxAccount bounds the account part, so a forged value costs one HMAC of
// a bounded input.
const maxAccount = 256

// Identity checks a room's signed accounts; nil when the room has none.
type Identity struct {
	cookie   string
	key      []byte
	required bool
}

// Build checks the section; nil, nil when identity is off.
func (c IdentityConfig) Build() (*Identity, error) {
	var p conf.Problems
	if c.Cookie == "" {
		if c.Secret != "" || c.Required {
			p.Add("cookie", "required when secret or required is set, got none")
		}
		return nil, p.Err()
	}
	if !cookieNamePattern.MatchString(c.Cookie) {
		p.Add("cookie", "must be 1 to 32 letters, digits, '-' or '_', got %q", c.Cookie)
	}
	if len(c.Secret) < minIdentitySecret {
		p.Add("secret", "must be at least %d bytes (openssl rand -base64 32), got %d bytes", minIdentitySecret, len(c.Secret))
	}
	return &Identity{cookie: c.Cookie, key: []byte(c.Secret), required: c.Required}, p.Err()
}

// Required reports whether visitors without a valid identity are refused.
func (id *Identity) Required() bool { return id != nil && id.required }

// Account returns the account a request proves, from IdentityHeader or the
// identity cookie; ok is false when neither holds a valid signature.
func (id *Identity) Account(r *http.Request) (string, bool) {
	if id == nil {
		return "", false
	}
	if v := r.Header.Get(IdentityHeader); v != "" {
		if account, ok := id.verify(v); ok {
			return account, true
		}
	}
	for _, c := range r.CookiesNamed(id.cookie) {
		if account, ok := id.verify(c.Value); ok {
			return account, true
		}
	}
	return "", false
}

// verify checks "<account>.<signature>". The signature is base64url, so it
// holds no '.', and the account may: the last dot separates them.
func (id *Identity) verify(value string) (string, bool) {
	i := strings.LastIndexByte(value, '.')
	if i <= 0 || i > maxAccount || len(value)-i-1 != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return "", false
	}
	account := value[:i]
	for j := 0; j < len(account); j++ {
		if c := account[j]; c < 0x21 || c == 0x7f {
			return "", false
		}
	}
	got, err := base64.RawURLEncoding.DecodeString(value[i+1:])
	if err != nil {
		return "", false
	}
	return account, hmac.Equal(got, id.sign(account))
}

func (id *Identity) sign(account string) []byte {
	m := hmac.New(sha256.New, id.key)
	m.Write([]byte(account))
	return m.Sum(nil)
}

// Sign makes the value a site sets for account: what a site's login does,
// for tests and examples.
func (id *Identity) Sign(account string) string {
	return account + "." + base64.RawURLEncoding.EncodeToString(id.sign(account))
}

// VisitorID is the visitor id of account in room: the same for every
// device, shaped like NewVisitorID's, and not computable without the
// secret, so nobody can aim at another account's place by its name.
func (id *Identity) VisitorID(room, account string) string {
	m := hmac.New(sha256.New, id.key)
	m.Write([]byte("waitroom visitor\x00" + room + "\x00" + account))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}
