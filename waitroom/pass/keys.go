package pass

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxKeyFile bounds a key file: an Ed25519 PKCS#8 PEM is 119 bytes, so
// anything near this is not a key and is not read whole.
const maxKeyFile = 64 << 10

// b64 is the JOSE encoding: base64url without padding. Strict refuses
// non-zero trailing bits, so one value has one spelling.
var b64 = base64.RawURLEncoding.Strict()

// ParsePrivateKey reads an Ed25519 or ECDSA P-256 private key from a PEM
// "PRIVATE KEY" (PKCS#8) block, as `openssl genpkey -algorithm ed25519`
// (or `-algorithm EC -pkeyopt ec_paramgen_curve:P-256`) writes it. Its
// errors describe the file's shape, never its bytes.
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New(`no PEM block; want a "PRIVATE KEY" block as openssl genpkey -algorithm ed25519 writes`)
	}
	if next, _ := pem.Decode(rest); next != nil {
		return nil, errors.New("more than one PEM block; put one key in each file")
	}
	switch block.Type {
	case "PRIVATE KEY":
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("the key is encrypted; write it without a passphrase and protect the file instead")
	default:
		return nil, fmt.Errorf(`want a PKCS#8 "PRIVATE KEY" PEM block, got %q`, block.Type)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		// The parser's message may quote ASN.1 details; the key stays out.
		return nil, errors.New("not a valid PKCS#8 private key")
	}
	switch k := key.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return k, nil
		}
		return nil, fmt.Errorf("want an Ed25519 or a P-256 key, got ECDSA on %s", k.Curve.Params().Name)
	}
	return nil, fmt.Errorf("want an Ed25519 or a P-256 key, got %s", keyKind(key))
}

// LoadPrivateKey reads and parses one key file; errors name the file.
func LoadPrivateKey(path string) (crypto.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", path, unwrapPath(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading %q: %w", path, unwrapPath(err))
	case len(raw) > maxKeyFile:
		return nil, fmt.Errorf("reading %q: larger than %d bytes, not a key file", path, maxKeyFile)
	}
	key, err := ParsePrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", path, err)
	}
	return key, nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// keyKind names the algorithm of a key that is not Ed25519.
func keyKind(key any) string {
	switch key.(type) {
	case *rsa.PrivateKey:
		return "RSA"
	case *ecdsa.PrivateKey:
		return "ECDSA"
	case *ecdh.PrivateKey:
		return "X25519 (an encryption key; use -algorithm ed25519)"
	default:
		return fmt.Sprintf("%T", key)
	}
}

// Thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 or P-256 public
// key: the base64url SHA-256 of {"crv":"Ed25519","kty":"OKP","x":"..."} or
// {"crv":"P-256","kty":"EC","x":"...","y":"..."}, with exactly these
// members in this order and no spaces. It is the pass's kid: the same key
// always has the same kid, and anyone holding the key can compute it. ""
// for a key of another kind.
func Thumbprint(pub crypto.PublicKey) string {
	var b bytes.Buffer
	switch k := pub.(type) {
	case ed25519.PublicKey:
		b.WriteString(`{"crv":"Ed25519","kty":"OKP","x":"`)
		b.WriteString(b64.EncodeToString(k))
		b.WriteString(`"}`)
	case *ecdsa.PublicKey:
		if algOf(k) != AlgES256 {
			return ""
		}
		x, y := ecPoint(k)
		b.WriteString(`{"crv":"P-256","kty":"EC","x":"`)
		b.WriteString(b64.EncodeToString(x))
		b.WriteString(`","y":"`)
		b.WriteString(b64.EncodeToString(y))
		b.WriteString(`"}`)
	default:
		return ""
	}
	sum := sha256.Sum256(b.Bytes())
	return b64.EncodeToString(sum[:])
}
