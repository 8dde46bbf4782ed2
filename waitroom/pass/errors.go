package pass

import (
	"errors"
	"fmt"
)

// The reasons a pass is refused. Verify wraps one of them with a detail
// (never the token itself), so callers tell them apart with errors.Is and
// Reason names them in logs and metrics. The Java and Node verifiers use the
// same reason codes.
var (
	// ErrMissing: the request carries no pass (or more than one).
	ErrMissing = errors.New("no pass")
	// ErrMalformed: too long, not three base64url segments, not JSON, a
	// claim of the wrong type, or a header this verifier must not accept
	// (crit).
	ErrMalformed = errors.New("malformed pass")
	// ErrAlgorithm: the header's alg is not EdDSA ("none", "HS256", ...).
	ErrAlgorithm = errors.New("algorithm not allowed")
	// ErrUnknownKey: the kid is not in the key set.
	ErrUnknownKey = errors.New("unknown key")
	// ErrKeysUnavailable: no key set could be loaded; the pass could not be
	// checked at all. Middleware answers 503 rather than 403.
	ErrKeysUnavailable = errors.New("keys unavailable")
	// ErrSignature: the signature does not match the header and claims.
	ErrSignature = errors.New("bad signature")
	// ErrExpired: exp (plus the leeway) has passed.
	ErrExpired = errors.New("expired")
	// ErrNotYetValid: iat lies further in the future than the leeway.
	ErrNotYetValid = errors.New("issued in the future")
	// ErrIssuer: iss is not the expected issuer.
	ErrIssuer = errors.New("wrong issuer")
	// ErrAudience: aud does not name the expected audience.
	ErrAudience = errors.New("wrong audience")
	// ErrRoom: room is not the expected room.
	ErrRoom = errors.New("wrong room")
	// ErrPath: path is not the path of the request the site answers.
	ErrPath = errors.New("wrong path")
)

// reasons maps each sentinel to its code, the same in every verifier.
var reasons = []struct {
	err  error
	code string
}{
	{ErrMissing, "missing"},
	{ErrMalformed, "malformed"},
	{ErrAlgorithm, "algorithm"},
	{ErrUnknownKey, "unknown_key"},
	{ErrKeysUnavailable, "keys_unavailable"},
	{ErrSignature, "signature"},
	{ErrExpired, "expired"},
	{ErrNotYetValid, "not_yet_valid"},
	{ErrIssuer, "issuer"},
	{ErrAudience, "audience"},
	{ErrRoom, "room"},
	{ErrPath, "path"},
}

// Reason is the short code of a refusal ("expired", "signature", ...), for
// logs and metric labels; "" for nil and "error" for anything else.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.code
		}
	}
	return "error"
}

// refuse wraps a sentinel with a detail.
func refuse(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
