package pass

import (
	"context"
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
	Key(ctx context.Context, kid string) (ed25519.PublicKey, error)
}

// maxKeys bounds the keys a set may hold: rotation needs two or three.
const maxKeys = 64

// JWKS is a fixed key set: kid to public key.
type JWKS map[string]ed25519.PublicKey

// Key implements KeySet.
func (s JWKS) Key(_ context.Context, kid string) (ed25519.PublicKey, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return nil, refuse(ErrUnknownKey, "kid %.64q is not in the key set", kid)
}

// jwk is one key as RFC 8037 writes an Ed25519 public key.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

// marshalJWKS writes the public halves of keys as a JWK Set, each with its
// thumbprint as kid.
func marshalJWKS(keys []ed25519.PublicKey) []byte {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, jwk{
			Kty: "OKP", Crv: "Ed25519", X: b64.EncodeToString(k),
			Kid: Thumbprint(k), Alg: "EdDSA", Use: "sig",
		})
	}
	out, err := json.Marshal(set)
	if err != nil {
		panic(fmt.Sprintf("pass: marshalling a key set of fixed shape: %v", err))
	}
	return out
}

// ParseJWKS reads a JWK Set and keeps its Ed25519 signing keys. Keys of
// other types, curves, algorithms or uses are skipped, as RFC 7517 asks of
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
		if k.Kty != "OKP" || k.Crv != "Ed25519" || (k.Alg != "" && k.Alg != "EdDSA") || (k.Use != "" && k.Use != "sig") {
			continue
		}
		x, err := b64.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			continue
		}
		pub := ed25519.PublicKey(x)
		if k.Kid == "" {
			k.Kid = Thumbprint(pub)
		}
		if _, dup := out[k.Kid]; !dup {
			out[k.Kid] = pub
		}
	}
	if len(out) == 0 {
		return nil, errors.New("reading the key set: no Ed25519 signing key in it")
	}
	return out, nil
}
