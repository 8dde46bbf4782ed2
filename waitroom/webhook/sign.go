package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of the Standard Webhooks scheme.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts a secret as written in configuration.
const SecretPrefix = "whsec_"

// Bounds of a secret's decoded key, in bytes: the scheme asks for at least
// 24; 64 is SHA-256's block, past which HMAC hashes the key first.
const (
	minSecret = 24
	maxSecret = 64
)

// DefaultTolerance is how far webhook-timestamp may be from the receiver's
// clock when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify, to tell apart with errors.Is.
var (
	// ErrHeader: a webhook header is missing or malformed.
	ErrHeader = errors.New("webhook: missing or malformed header")
	// ErrTimestamp: webhook-timestamp is too far from now (a replay, or a
	// clock badly off).
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no signature in webhook-signature matches.
	ErrSignature = errors.New("webhook: no matching signature")
)

// Secret is the key an endpoint's messages are signed with: the decoded
// bytes of a "whsec_<base64>" secret. It prints as REDACTED.
type Secret []byte

// ParseSecret reads "whsec_" followed by standard base64 (padded or not) of
// 24 to 64 bytes. The error never holds the secret.
func ParseSecret(s string) (Secret, error) {
	const rule = `must be "whsec_" followed by base64 of 24 to 64 bytes`
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	switch {
	case s == "":
		return nil, errors.New(rule + ", got none")
	case !ok:
		return nil, errors.New(rule + `, got no "whsec_" prefix`)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(rest)
	}
	if err != nil {
		return nil, errors.New(rule + ", got something that is not base64")
	}
	if len(key) < minSecret || len(key) > maxSecret {
		return nil, fmt.Errorf(rule+", got %d bytes", len(key))
	}
	return Secret(key), nil
}

// String keeps the key out of logs and error messages.
func (Secret) String() string { return "REDACTED" }

// GoString keeps the key out of %#v.
func (Secret) GoString() string { return "REDACTED" }

// Sign is the webhook-signature entry for one message: "v1," and the
// base64 HMAC-SHA256, keyed with secret, of "<id>.<unix seconds>.<body>".
func Sign(secret Secret, id string, timestamp time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(secret, id, strconv.FormatInt(timestamp.Unix(), 10), body))
}

// mac is the HMAC of the signed content, the timestamp as sent.
func mac(secret Secret, id, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(timestamp))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Bounds on what Verify reads from headers a stranger may send.
const (
	maxIDLen         = 256
	maxTimestampLen  = 12 // unix seconds until the year 33658
	maxSignatureLen  = 4096
	maxSignatureList = 16
)

// Verify checks a received message: h's webhook-id, webhook-timestamp and
// webhook-signature, and body exactly as received (read it with a bound,
// and do not re-encode it). The timestamp must be within tolerance of now
// (DefaultTolerance when tolerance <= 0), and one "v1," entry of the
// signature list must match, compared in constant time; other versions are
// skipped, so a sender may add them. Errors: ErrHeader, ErrTimestamp,
// ErrSignature. Dedupe on webhook-id after a message verifies: a sender
// may deliver it more than once.
func Verify(secret Secret, h http.Header, body []byte, tolerance time.Duration) error {
	return verifyAt(secret, h, body, tolerance, time.Now())
}

func verifyAt(secret Secret, h http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: empty secret", ErrSignature) // HMAC with no key proves nothing
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	switch {
	case id == "" || len(id) > maxIDLen || strings.ContainsRune(id, '.'):
		return fmt.Errorf("%w: %s", ErrHeader, HeaderID)
	case ts == "" || len(ts) > maxTimestampLen || strings.Trim(ts, "0123456789") != "":
		return fmt.Errorf("%w: %s", ErrHeader, HeaderTimestamp)
	case sigs == "" || len(sigs) > maxSignatureLen:
		return fmt.Errorf("%w: %s", ErrHeader, HeaderSignature)
	}
	sec, _ := strconv.ParseInt(ts, 10, 64) // digits only, at most 12: always fits
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := mac(secret, id, ts, body)
	for i, entry := range strings.Fields(sigs) {
		if i == maxSignatureList {
			break
		}
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}
