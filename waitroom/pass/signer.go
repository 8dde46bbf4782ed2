package pass

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// SignerOptions configure a Signer.
type SignerOptions struct {
	// Keys: the first signs, all are published. At least one; each an
	// ed25519.PrivateKey (EdDSA) or a P-256 *ecdsa.PrivateKey (ES256).
	Keys []crypto.Signer
	// Issuer is the iss claim. Required.
	Issuer string
	// TTL is how long a pass is valid, whole seconds, at least one.
	TTL time.Duration
}

// Signer makes passes with the first key and publishes every key's public
// half as a JWK Set. It is safe for concurrent use.
type Signer struct {
	key    crypto.Signer
	alg    string // of key: AlgEdDSA or AlgES256
	kid    string
	head   string // the encoded protected header, the same for every pass
	issuer string
	ttl    time.Duration
	public JWKS
	jwks   []byte
	cache  *passCache
}

// NewSigner checks the options and prepares the header and the key set.
func NewSigner(o SignerOptions) (*Signer, error) {
	switch {
	case len(o.Keys) == 0:
		return nil, errors.New("making a signer: no key")
	case o.Issuer == "":
		return nil, errors.New("making a signer: no issuer")
	case o.TTL < time.Second || o.TTL%time.Second != 0:
		return nil, fmt.Errorf("making a signer: ttl must be a whole number of seconds, at least 1s, got %v", o.TTL)
	}
	pubs := make([]crypto.PublicKey, 0, len(o.Keys))
	public := JWKS{}
	for i, k := range o.Keys {
		if ed, ok := k.(ed25519.PrivateKey); ok && len(ed) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("making a signer: key %d is not an Ed25519 private key", i)
		}
		if k == nil || algOf(publicOf(k)) == "" {
			return nil, fmt.Errorf("making a signer: key %d is not an Ed25519 or P-256 private key", i)
		}
		pub := publicOf(k)
		kid := Thumbprint(pub)
		if _, dup := public[kid]; dup {
			return nil, fmt.Errorf("making a signer: key %d repeats an earlier key", i)
		}
		public[kid] = pub
		pubs = append(pubs, pub)
	}
	s := &Signer{
		key:    o.Keys[0],
		alg:    algOf(pubs[0]),
		kid:    Thumbprint(pubs[0]),
		issuer: o.Issuer,
		ttl:    o.TTL,
		public: public,
		jwks:   marshalJWKS(pubs),
		cache:  newPassCache(o.TTL),
	}
	head, err := json.Marshal(header{Alg: s.alg, Kid: s.kid, Typ: "JWT"})
	if err != nil {
		return nil, fmt.Errorf("making a signer: %w", err)
	}
	s.head = b64.EncodeToString(head)
	return s, nil
}

// header is the protected header of every pass, members in this order.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// Algorithm is the alg of the passes made: AlgEdDSA or AlgES256, by the
// signing key.
func (s *Signer) Algorithm() string { return s.alg }

// KeyID is the kid of the signing key.
func (s *Signer) KeyID() string { return s.kid }

// TTL is how long each pass is valid.
func (s *Signer) TTL() time.Duration { return s.ttl }

// JWKS is the public key set, JSON, made once. Do not modify it.
func (s *Signer) JWKS() []byte { return s.jwks }

// Key implements KeySet over the signer's own keys, so the gateway (or a
// test) can verify what it signs without fetching anything.
func (s *Signer) Key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	return s.public.Key(ctx, kid)
}

// Sign makes a pass for p issued at now (to the second) and valid for the
// TTL. It refuses empty or non-UTF-8 names and a pass longer than
// MaxTokenSize.
func (s *Signer) Sign(p Pass, now time.Time) (string, error) {
	if err := p.check(); err != nil {
		return "", err
	}
	iat := now.Unix()
	return s.sign(Claims{
		Issuer: s.issuer, Audience: Audience{p.Audience}, Subject: p.Subject,
		Room: p.Room, Path: p.Path, Visitor: p.Visitor, Ticket: p.Ticket, IssuedAt: iat, ExpiresAt: iat + int64(s.ttl/time.Second),
	})
}

// sign encodes and signs the claims as given.
func (s *Signer) sign(c Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("signing a pass: %w", err)
	}
	n := len(s.head) + 1 + b64.EncodedLen(len(payload)) + 1 + b64.EncodedLen(sigSize)
	if n > MaxTokenSize {
		return "", fmt.Errorf("signing a pass: it would be %d bytes, more than %d", n, MaxTokenSize)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, s.head...)
	buf = append(buf, '.')
	buf = b64.AppendEncode(buf, payload)
	sig, err := signWith(s.key, buf)
	if err != nil {
		return "", err
	}
	buf = append(buf, '.')
	buf = b64.AppendEncode(buf, sig)
	return string(buf), nil
}

// JWKSHandler serves the key set as application/jwk-set+json. Sites cache
// it (RemoteJWKS refreshes every five minutes by default), so a new key
// must be published a while before it signs; see doc.go.
func (s *Signer) JWKSHandler() http.Handler {
	size := strconv.Itoa(len(s.jwks))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Content-Length", size)
		w.Header().Set("Cache-Control", "public, max-age=300")
		if r.Method == http.MethodGet {
			w.Write(s.jwks)
		}
	})
}

// Verify checks a pass this signer's keys made, for the gateway's own use
// (a site releasing its visitor with the pass): signature, issuer, times
// with DefaultLeeway, and room when not empty; any of the gateway's sites
// as audience, and no path.
func (s *Signer) Verify(ctx context.Context, token, room string, now time.Time) (Claims, error) {
	v := &Verifier{keys: s, issuer: s.issuer, leeway: int64(DefaultLeeway / time.Second),
		now: func() time.Time { return now }, anyAudience: true}
	return v.VerifyFor(ctx, token, Expect{Room: room})
}
