package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// IdentityHeader carries a signed account for clients without the site's
// cookie (apps), as the identity cookie would.
const IdentityHeader = "Waitroom-Identity"

// IdentityConfig is rooms.<name>.identity: the site's word on who a visitor
// is. At login the site sets a cookie (or an app sends IdentityHeader)
// holding "<account>.<expiry>.<mac>": expiry in Unix seconds, mac the
// unpadded base64url of HMAC-SHA256(secret, "<account>.<expiry>"). A valid
// one keys the visitor's place and session, so every browser, tab and
// device of one account shares one place and at most one session. A value
// past its expiry, or in the old "<account>.<mac>" form, is anonymous.
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

// MaxIdentityLifetime bounds how far ahead an identity's expiry may be: a
// value further out is refused, so no site mints one that works for as
// long as the secret lives, and an old two-part value whose account ends
// in ".<digits>" cannot pass for a new one that never expires.
const MaxIdentityLifetime = 30 * 24 * time.Hour

// maxExpiryDigits bounds the expiry part: Unix seconds fit in 11 digits
// until the year 5138.
const maxExpiryDigits = 11

// Identity checks a room's signed accounts; nil when the room has none.
type Identity struct {
	cookie   string
	key      []byte
	required bool
	// notUTF8 is 1 once a signed account that is not UTF-8 was refused,
	// 2 once the gate logged it (takeNotUTF8): the site's bug is logged
	// once per room, not per request.
	notUTF8 atomic.Int32
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
	now := time.Now()
	if v := r.Header.Get(IdentityHeader); v != "" {
		if account, ok := id.verify(v, now); ok {
			return account, true
		}
	}
	for _, c := range r.CookiesNamed(id.cookie) {
		if account, ok := id.verify(c.Value, now); ok {
			return account, true
		}
	}
	return "", false
}

// verify checks "<account>.<expiry>.<mac>" at now. The expiry and the MAC
// hold no '.', and the account may: the last two dots separate them. The
// MAC is compared first (in constant time), so only a value the site
// signed says anything about its expiry or its account.
func (id *Identity) verify(value string, now time.Time) (string, bool) {
	i := strings.LastIndexByte(value, '.')
	if i <= 0 || len(value)-i-1 != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return "", false
	}
	signed := value[:i]
	j := strings.LastIndexByte(signed, '.')
	if j <= 0 || j > maxAccount {
		return "", false
	}
	account := signed[:j]
	expiry, ok := parseExpiry(signed[j+1:])
	if !ok || !printable(account) {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(value[i+1:])
	if err != nil || !hmac.Equal(got, id.sign(signed)) {
		return "", false
	}
	if expiry <= now.Unix() || expiry > now.Add(MaxIdentityLifetime).Unix() {
		return "", false
	}
	if !utf8.ValidString(account) {
		id.notUTF8.CompareAndSwap(0, 1)
		return "", false // a pass, a webhook and a log line all need text
	}
	return account, true
}

// parseExpiry reads Unix seconds written as 1 to maxExpiryDigits decimal
// digits and nothing else: no sign, no space.
func parseExpiry(s string) (int64, bool) {
	if s == "" || len(s) > maxExpiryDigits {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// printable refuses spaces and control bytes in an account.
func printable(account string) bool {
	for j := 0; j < len(account); j++ {
		if c := account[j]; c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// takeNotUTF8 reports, once, that a signed account that is not UTF-8 was
// refused since the room was built, for the gate to log.
func (id *Identity) takeNotUTF8() bool {
	return id != nil && id.notUTF8.CompareAndSwap(1, 2)
}

func (id *Identity) sign(signed string) []byte {
	m := hmac.New(sha256.New, id.key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Sign makes the value a site sets for account, valid until expiry (to
// the second): what a site's login does, for tests and examples.
func (id *Identity) Sign(account string, expiry time.Time) string {
	signed := account + "." + strconv.FormatInt(expiry.Unix(), 10)
	return signed + "." + base64.RawURLEncoding.EncodeToString(id.sign(signed))
}

// VisitorID is the visitor id of account in room: the same for every
// device, shaped like NewVisitorID's, and not computable without the
// secret, so nobody can aim at another account's place by its name.
func (id *Identity) VisitorID(room, account string) string {
	m := hmac.New(sha256.New, id.key)
	m.Write([]byte("waitroom visitor\x00" + room + "\x00" + account))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}
