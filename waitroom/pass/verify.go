package pass

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// DefaultLeeway is how far the site's clock may be behind or ahead of the
// gateway's before a pass is refused as expired or issued in the future.
// It adds to the time a revoked pass is still accepted (pass.ttl plus the
// leeway), so it is short: keep the site's clock synchronised (NTP).
const DefaultLeeway = 5 * time.Second

// VerifierOptions configure a Verifier.
type VerifierOptions struct {
	// Keys finds the public key a pass names: a RemoteJWKS on the
	// gateway's key set URL, a fixed JWKS, or a Signer. Required.
	Keys KeySet
	// Audience is the site's name as the gateway knows it (the upstream's
	// name); a pass must name it in aud. Required: without it a pass made
	// for another site of the same gateway would do.
	Audience string
	// Issuer, when set, must equal iss (the gateway's pass.issuer, default
	// "waitroom").
	Issuer string
	// Leeway tolerates clock skew on exp and iat. Default (zero) 5s;
	// negative is refused.
	Leeway time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Verifier checks passes. It is safe for concurrent use.
type Verifier struct {
	keys     KeySet
	audience string
	issuer   string
	leeway   int64 // seconds
	now      func() time.Time
	// anyAudience: the gateway checking its own passes, made for any of
	// its sites (Signer.Verify). Never for a site's verifier.
	anyAudience bool
}

// NewVerifier checks the options.
func NewVerifier(o VerifierOptions) (*Verifier, error) {
	switch {
	case o.Keys == nil:
		return nil, errors.New("making a pass verifier: no key set")
	case o.Audience == "":
		return nil, errors.New("making a pass verifier: no audience")
	case o.Leeway < 0:
		return nil, errors.New("making a pass verifier: negative leeway")
	}
	v := &Verifier{keys: o.Keys, audience: o.Audience, issuer: o.Issuer, leeway: int64(o.Leeway / time.Second), now: o.Now}
	if o.Leeway == 0 {
		v.leeway = int64(DefaultLeeway / time.Second)
	}
	if v.now == nil {
		v.now = time.Now
	}
	return v, nil
}

// Expect is what a pass must name besides the verifier's audience and
// issuer: both come from the request the site is answering.
type Expect struct {
	// Room, when not empty, must equal the room claim: the room that
	// guards the request (for template rooms, filled from the request,
	// such as "event-" + the event id in its path).
	Room string
	// Path, when not empty, must equal the path claim: the request's path
	// as the site received it, escaped, without the query (Go's
	// r.URL.EscapedPath(), Java's getRequestURI(), Node's URL path).
	Path string
}

// Verify checks a pass and returns its claims. room, when not empty, must
// equal the room claim; the path is not checked (see VerifyFor). Errors
// wrap one of the Err sentinels; they never quote the token.
func (v *Verifier) Verify(ctx context.Context, token, room string) (Claims, error) {
	return v.VerifyFor(ctx, token, Expect{Room: room})
}

// VerifyFor checks a pass against what the request names and returns its
// claims. The checks run in this order, the same in the Java and Node
// verifiers: size and shape, header (alg, kid, crit), key, signature,
// claims (exp, iat, iss, aud, room, path).
func (v *Verifier) VerifyFor(ctx context.Context, token string, want Expect) (Claims, error) {
	segs, err := split(token)
	if err != nil {
		return Claims{}, err
	}
	alg, kid, err := parseHeader(segs[0])
	if err != nil {
		return Claims{}, err
	}
	key, err := v.keys.Key(ctx, kid)
	if err != nil {
		return Claims{}, err
	}
	// The key decides the algorithm: a header may not make an Ed25519
	// key's signature be read as ECDSA, nor the other way round.
	if algOf(key) != alg {
		return Claims{}, refuse(ErrAlgorithm, "alg %s does not match key %.64q", alg, kid)
	}
	signed := token[:strings.LastIndexByte(token, '.')]
	if !verifySig(key, []byte(signed), segs[2]) {
		return Claims{}, refuse(ErrSignature, "the signature does not match key %.64q", kid)
	}
	c, err := parseClaims(segs[1])
	if err != nil {
		return Claims{}, err
	}
	return c, v.check(c, want)
}

// check holds the claims to the clock and the expected names.
func (v *Verifier) check(c Claims, want Expect) error {
	now := v.now().Unix()
	switch {
	case now >= c.ExpiresAt+v.leeway:
		return refuse(ErrExpired, "expired %ds ago", now-c.ExpiresAt)
	case c.IssuedAt > now+v.leeway:
		return refuse(ErrNotYetValid, "issued %ds in the future", c.IssuedAt-now)
	case v.issuer != "" && c.Issuer != v.issuer:
		return refuse(ErrIssuer, "iss is %.64q, want %q", c.Issuer, v.issuer)
	case !v.anyAudience && !c.Audience.Contains(v.audience):
		return refuse(ErrAudience, "aud does not name %q", v.audience)
	case want.Room != "" && c.Room != want.Room:
		return refuse(ErrRoom, "room is %.64q, want %.64q", c.Room, want.Room)
	case want.Path != "" && c.Path != want.Path:
		return refuse(ErrPath, "path is %.64q, want %.64q", c.Path, want.Path)
	}
	return nil
}

// split checks size and alphabet and decodes the three segments. Only
// base64url letters and two dots pass, and each segment must be the one
// canonical encoding of its bytes, so every verifier reads a token the same.
func split(token string) ([3][]byte, error) {
	var segs [3][]byte
	if token == "" {
		return segs, ErrMissing
	}
	if len(token) > MaxTokenSize {
		return segs, refuse(ErrMalformed, "longer than %d bytes", MaxTokenSize)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return segs, refuse(ErrMalformed, "want three dot-separated segments, got %d", len(parts))
	}
	for i, p := range parts {
		if p == "" || strings.Trim(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return segs, refuse(ErrMalformed, "segment %d is not base64url", i+1)
		}
		b, err := b64.DecodeString(p)
		if err != nil {
			return segs, refuse(ErrMalformed, "segment %d is not base64url", i+1)
		}
		segs[i] = b
	}
	return segs, nil
}

// parseHeader returns the alg and kid of a header that asks for EdDSA or
// ES256 and nothing this verifier does not understand.
func parseHeader(raw []byte) (string, string, error) {
	var h map[string]json.RawMessage
	if tooDeep(raw) || json.Unmarshal(raw, &h) != nil || h == nil {
		return "", "", refuse(ErrMalformed, "the header is not a JSON object")
	}
	var alg, kid string
	if json.Unmarshal(h["alg"], &alg) != nil || (alg != AlgEdDSA && alg != AlgES256) {
		return "", "", refuse(ErrAlgorithm, "alg %.32q is not EdDSA or ES256", string(h["alg"]))
	}
	if _, ok := h["crit"]; ok {
		return "", "", refuse(ErrMalformed, "the header has crit")
	}
	if json.Unmarshal(h["kid"], &kid) != nil || kid == "" {
		return "", "", refuse(ErrMalformed, "the header has no kid")
	}
	return alg, kid, nil
}

// maxDepth bounds the nesting of the header and the claims, the same in
// every verifier: a pass needs two levels (aud may be an array), and a
// recursive reader must not be walked into a stack overflow.
const maxDepth = 32

// tooDeep reports whether the JSON text b nests arrays and objects deeper
// than maxDepth. Brackets inside strings do not count.
func tooDeep(b []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			if depth++; depth > maxDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
