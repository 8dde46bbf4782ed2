package pass

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// HeaderName is the request header that carries the pass to the site.
const HeaderName = "Waitroom-Pass"

// MaxTokenSize bounds a pass, in bytes. Signer refuses to make a longer one
// and every verifier refuses to read one.
const MaxTokenSize = 4096

// maxSafeInt is the largest integer a JavaScript number holds exactly;
// ticket numbers and times stay below it so Node reads them as written.
const maxSafeInt = 1<<53 - 1

// Pass is what the gateway knows of an admitted visitor, the claims a pass
// carries besides the issuer and times the Signer adds.
type Pass struct {
	// Audience names the site the pass is for: the upstream's name.
	Audience string
	// Room is the room the visitor was admitted to.
	Room string
	// Subject is the visitor id, or the account when the visitor brought a
	// site-signed identity.
	Subject string
	// Ticket is the visitor's ticket number.
	Ticket int64
	// Visitor is the visitor id when Subject is an account, so the site
	// can release the session with the pass; "" when Subject is the
	// visitor id. Written as the "vid" claim.
	Visitor string
	// Path is the path of the request the pass vouches for, as the site
	// receives it: escaped, without the query ("/events/7/checkout"). A
	// pass copied off one request is no good for another path.
	Path string
}

// check refuses what would not read back as written.
func (p Pass) check() error {
	for _, f := range []struct{ name, v string }{{"audience", p.Audience}, {"room", p.Room}, {"subject", p.Subject}} {
		if f.v == "" {
			return fmt.Errorf("signing a pass: %s is empty", f.name)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("signing a pass: %s is not UTF-8", f.name)
		}
	}
	if !strings.HasPrefix(p.Path, "/") {
		return fmt.Errorf("signing a pass: path must start with a slash, got %.64q", p.Path)
	}
	if p.Ticket < 0 || p.Ticket > maxSafeInt {
		return fmt.Errorf("signing a pass: ticket must be within 0..2^53-1, got %d", p.Ticket)
	}
	return nil
}

// Claims are the claims of a verified pass, as the wire names them.
type Claims struct {
	Issuer    string   `json:"iss"`
	Audience  Audience `json:"aud"`
	Subject   string   `json:"sub"`
	Room      string   `json:"room"`
	Path      string   `json:"path,omitempty"`
	Visitor   string   `json:"vid,omitempty"`
	Ticket    int64    `json:"tkt"`
	IssuedAt  int64    `json:"iat"` // seconds since the Unix epoch
	ExpiresAt int64    `json:"exp"` // seconds since the Unix epoch
}

// Expires is ExpiresAt as a time.
func (c Claims) Expires() time.Time { return time.Unix(c.ExpiresAt, 0) }

// Audience is the aud claim: RFC 7519 allows one string or an array of them.
// A single audience is written as a string.
type Audience []string

// Contains reports whether aud names a.
func (aud Audience) Contains(a string) bool {
	for _, x := range aud {
		if x == a {
			return true
		}
	}
	return false
}

// MarshalJSON writes one audience as a string, several as an array.
func (aud Audience) MarshalJSON() ([]byte, error) {
	if len(aud) == 1 {
		return json.Marshal(aud[0])
	}
	return json.Marshal([]string(aud))
}

// UnmarshalJSON reads a string or an array of strings.
func (aud *Audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*aud = Audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud: want a string or an array of strings")
	}
	*aud = many
	return nil
}

// parseClaims reads the payload. Member names match exactly (encoding/json
// alone would also take "EXP"), and each claim must have its JSON type:
// exp and iat are required integers, aud a string or an array of strings.
func parseClaims(payload []byte) (Claims, error) {
	var m map[string]json.RawMessage
	if tooDeep(payload) || json.Unmarshal(payload, &m) != nil || m == nil {
		return Claims{}, refuse(ErrMalformed, "the claims are not a JSON object")
	}
	var c Claims
	fields := []struct {
		name     string
		dst      any
		required bool
	}{
		{"iss", &c.Issuer, false},
		{"aud", &c.Audience, false},
		{"sub", &c.Subject, false},
		{"room", &c.Room, false},
		{"path", &c.Path, false},
		{"vid", &c.Visitor, false},
		{"tkt", &c.Ticket, false},
		{"iat", &c.IssuedAt, true},
		{"exp", &c.ExpiresAt, true},
	}
	for _, f := range fields {
		raw, ok := m[f.name]
		if !ok {
			if f.required {
				return Claims{}, refuse(ErrMalformed, "claim %s is missing", f.name)
			}
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil || string(raw) == "null" {
			return Claims{}, refuse(ErrMalformed, "claim %s has the wrong type", f.name)
		}
	}
	return c, nil
}
