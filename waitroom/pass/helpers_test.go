package pass

import (
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func newKey(tb testing.TB) ed25519.PrivateKey {
	tb.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// pemOf writes key as openssl genpkey does: PKCS#8 in a "PRIVATE KEY" block.
func pemOf(tb testing.TB, key any) []byte {
	tb.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// writeFile writes data to name in a fresh temp dir and returns the path.
func writeFile(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func newSigner(tb testing.TB, issuer string, ttl time.Duration, keys ...ed25519.PrivateKey) *Signer {
	tb.Helper()
	signers := make([]crypto.Signer, len(keys))
	for i, k := range keys {
		signers[i] = k
	}
	s, err := NewSigner(SignerOptions{Keys: signers, Issuer: issuer, TTL: ttl})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// forge signs header and claims given as JSON text with key, whatever they
// say, as an attacker holding a key (or a signer gone wrong) would.
func forge(key ed25519.PrivateKey, header, claims string) string {
	in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	return in + "." + b64.EncodeToString(ed25519.Sign(key, []byte(in)))
}

// forgeHMAC makes the classic algorithm-confusion token: HS256 keyed with the
// Ed25519 public key a verifier might mistake for a shared secret.
func forgeHMAC(secret []byte, header, claims string) string {
	in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return in + "." + b64.EncodeToString(m.Sum(nil))
}

// claimsJSON is the JSON of c, for forging.
func claimsJSON(tb testing.TB, c Claims) string {
	tb.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// headerJSON is the header a signer would write for key.
func headerJSON(key ed25519.PrivateKey) string {
	return `{"alg":"EdDSA","kid":"` + Thumbprint(pub(key)) + `","typ":"JWT"}`
}
