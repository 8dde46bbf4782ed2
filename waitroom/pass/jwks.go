package pass

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
)

// KeySet finds the public key a pass names in its kid. JWKS (fixed),
// RemoteJWKS (fetched and cached) and Signer implement it.
type KeySet interface {
	// Key returns the key with this kid, ErrUnknownKey when there is none,
	// or ErrKeysUnavailable when the set could not be loaded.
	// The key is an ed25519.PublicKey (alg EdDSA) or a P-256
	// *ecdsa.PublicKey (alg ES256).
	Key(ctx context.Context, kid string) (crypto.PublicKey, error)
}

// maxKeys bounds the keys a set may hold: rotation needs two or three.
const maxKeys = 64

// JWKS is a fixed key set: kid to public key.
type JWKS map[string]crypto.PublicKey

// Key implements KeySet.
func (s JWKS) Key(_ context.Context, kid string) (crypto.PublicKey, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return nil, refuse(ErrUnknownKey, "kid %.64q is not in the key set", kid)
}

// jwk is one key as RFC 8037 writes an Ed25519 public key, or RFC 7518 a
// P-256 one (with y).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y,omitempty"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

// marshalJWKS writes the public halves of keys as a JWK Set, each with its
// thumbprint as kid.
func marshalJWKS(keys []crypto.PublicKey) []byte {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	for _, k := range keys {
		switch k := k.(type) {
		case ed25519.PublicKey:
			set.Keys = append(set.Keys, jwk{
				Kty: "OKP", Crv: "Ed25519", X: b64.EncodeToString(k),
				Kid: Thumbprint(k), Alg: AlgEdDSA, Use: "sig",
			})
		case *ecdsa.PublicKey:
			x, y := ecPoint(k)
			set.Keys = append(set.Keys, jwk{
				Kty: "EC", Crv: "P-256", X: b64.EncodeToString(x), Y: b64.EncodeToString(y),
				Kid: Thumbprint(k), Alg: AlgES256, Use: "sig",
			})
		}
	}
	out, err := json.Marshal(set)
	if err != nil {
		panic(fmt.Sprintf("pass: marshalling a key set of fixed shape: %v", err))
	}
	return out
}

// ParseJWKS reads a JWK Set and keeps its Ed25519 and P-256 signing keys.
// Keys of other types, curves, algorithms or uses are skipped, as RFC 7517 asks of
// members a reader does not understand; a key without kid gets its
// thumbprint. A set with no usable key is an error, so a wrong URL is noticed.
func ParseJWKS(data []byte) (JWKS, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("reading the key set: not a JSON object with a keys array")
	}
	if len(set.Keys) > maxKeys {
		return nil, fmt.Errorf("reading the key set: %d keys, at most %d", len(set.Keys), maxKeys)
	}
	out := JWKS{}
	for _, raw := range set.Keys {
		var k jwk
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		pub := parseJWK(k)
		if pub == nil {
			continue
		}
		if k.Kid == "" {
			k.Kid = Thumbprint(pub)
		}
		if _, dup := out[k.Kid]; !dup {
			out[k.Kid] = pub
		}
	}
	if len(out) == 0 {
		return nil, errors.New("reading the key set: no Ed25519 or P-256 signing key in it")
	}
	return out, nil
}

// parseJWK is the public key of one JWK, nil unless it is an Ed25519 key
// for EdDSA or a P-256 key for ES256, for signing.
func parseJWK(k jwk) crypto.PublicKey {
	if k.Use != "" && k.Use != "sig" {
		return nil
	}
	x, err := b64.DecodeString(k.X)
	if err != nil {
		return nil
	}
	switch {
	case k.Kty == "OKP" && k.Crv == "Ed25519" && (k.Alg == "" || k.Alg == AlgEdDSA):
		if len(x) == ed25519.PublicKeySize {
			return ed25519.PublicKey(x)
		}
	case k.Kty == "EC" && k.Crv == "P-256" && (k.Alg == "" || k.Alg == AlgES256):
		y, err := b64.DecodeString(k.Y)
		if err != nil {
			return nil
		}
		if pub, err := parseECPoint(x, y); err == nil {
			return pub
		}
	}
	return nil
}
