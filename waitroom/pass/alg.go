package pass

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
)

// The signature algorithms of a pass (RFC 7518, RFC 8037). EdDSA (Ed25519)
// is the default; ES256 (ECDSA on P-256 with SHA-256) is for sites whose
// stock JOSE stack has no EdDSA, such as Spring Security's resource server.
const (
	AlgEdDSA = "EdDSA"
	AlgES256 = "ES256"
)

// sigSize is the size of a signature of either algorithm: Ed25519's, and
// ES256's r and s as two 32-byte big-endian integers (RFC 7518 3.4).
const sigSize = 64

// algOf names the algorithm a public key signs with, "" for a key of
// another kind.
func algOf(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		if len(k) == ed25519.PublicKeySize {
			return AlgEdDSA
		}
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return AlgES256
		}
	}
	return ""
}

// publicOf is the public half of a signing key.
func publicOf(key crypto.Signer) crypto.PublicKey { return key.Public() }

// signWith signs the JWS signing input with key in its algorithm.
func signWith(key crypto.Signer, input []byte) ([]byte, error) {
	switch k := key.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(k, input), nil
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return nil, fmt.Errorf("signing a pass: %w", err)
		}
		sig := make([]byte, sigSize)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
		return sig, nil
	}
	return nil, fmt.Errorf("signing a pass: a %T key", key)
}

// verifySig checks a signature made with pub's algorithm.
func verifySig(pub crypto.PublicKey, input, sig []byte) bool {
	if len(sig) != sigSize {
		return false
	}
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(k, input, sig)
	case *ecdsa.PublicKey:
		sum := sha256.Sum256(input)
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, sum[:], r, s)
	}
	return false
}

// ecPoint returns the x and y coordinates of a P-256 key, 32 bytes each.
func ecPoint(k *ecdsa.PublicKey) (x, y []byte) {
	b, err := k.Bytes() // 0x04 || X || Y
	if err != nil || len(b) != 65 {
		panic(fmt.Sprintf("pass: a P-256 key that does not encode: %v", err))
	}
	return b[1:33], b[33:]
}

// parseECPoint makes a P-256 public key of its coordinates, refusing a
// point off the curve.
func parseECPoint(x, y []byte) (*ecdsa.PublicKey, error) {
	if len(x) != 32 || len(y) != 32 {
		return nil, fmt.Errorf("want 32-byte coordinates")
	}
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), bytes.Join([][]byte{{4}, x, y}, nil))
}
