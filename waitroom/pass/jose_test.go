package pass

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// joseDir installs the stock `jose` package from npm (panva/jose, what a
// Node site would use) into a directory of its own, with the script that
// drives it; npm's cache makes a second install quick.
func joseDir(t *testing.T) (node, dir string) {
	t.Helper()
	node, npm := lookPath(t, "node"), lookPath(t, "npm")
	dir = t.TempDir()
	cmd := exec.Command(npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, "jose@6")
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install jose: %v\n%s", err, out)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "node", "jose.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jose.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, dir
}

func runJose(t *testing.T, node, dir string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "jose.mjs")}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("node jose.mjs %s: %v\n%s", args[0], err, stderr.String())
	}
	if stderr.Len() > 0 && err != nil && !strings.HasPrefix(string(out), "refused") {
		t.Fatalf("node jose.mjs %s: %v\n%s", args[0], err, stderr.String())
	}
	return strings.TrimSpace(string(out)), err == nil
}

// The Go signer and verifier against stock jose from npm, for both
// algorithms: jose's jwtVerify takes the gateway's passes from its key set
// URL (createRemoteJWKSet), and refuses one for another audience; the Go
// verifier takes jose's JWTs, with jose's RFC 7638 thumbprint as kid, which
// is the kid Go computes for the same key.
func TestInterop_StockJose(t *testing.T) {
	t.Parallel()
	node, dir := joseDir(t)
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		alg string
		key crypto.Signer
	}{{AlgEdDSA, newKey(t)}, {AlgES256, p256}} {
		t.Run(tc.alg, func(t *testing.T) {
			s, err := NewSigner(SignerOptions{Keys: []crypto.Signer{tc.key}, Issuer: testIssuer, TTL: time.Minute})
			if err != nil || s.Algorithm() != tc.alg {
				t.Fatalf("signer: %v, algorithm %q", err, s.Algorithm())
			}
			srv := newJWKSServer(t, s.JWKS())
			p := Pass{Audience: testAudience, Room: "event-7", Subject: `acct:"zoë"`, Ticket: 42, Path: "/events/7/checkout"}
			token := sign(t, s, p, time.Now())
			out, ok := runJose(t, node, dir, "verify", tc.alg, srv.URL, testIssuer, testAudience, token)
			var got struct {
				Payload Claims         `json:"payload"`
				Header  map[string]any `json:"header"`
			}
			if !ok || json.Unmarshal([]byte(out), &got) != nil {
				t.Fatalf("jose refused the gateway's pass: %s", out)
			}
			if got.Payload.Room != p.Room || got.Payload.Path != p.Path || got.Payload.Subject != p.Subject || got.Header["kid"] != s.KeyID() {
				t.Fatalf("jose read %+v %v", got.Payload, got.Header)
			}
			if out, ok := runJose(t, node, dir, "verify", tc.alg, srv.URL, testIssuer, "another-site", token); ok || !strings.Contains(out, "ERR_JWT_CLAIM_VALIDATION_FAILED") {
				t.Fatalf("jose, another audience: %s", out)
			}
			var keys struct {
				Keys []json.RawMessage `json:"keys"`
			}
			if err := json.Unmarshal(s.JWKS(), &keys); err != nil || len(keys.Keys) != 1 {
				t.Fatalf("key set: %v", err)
			}
			if kid, _ := runJose(t, node, dir, "thumbprint", string(keys.Keys[0])); kid != s.KeyID() {
				t.Fatalf("jose's thumbprint %q, Go's kid %q", kid, s.KeyID())
			}

			now := time.Now().Unix()
			claims, _ := json.Marshal(map[string]any{"iss": testIssuer, "aud": testAudience, "sub": "v1", "room": "event-7",
				"path": "/events/7/checkout", "tkt": 7, "iat": now, "exp": now + 60})
			out, _ = runJose(t, node, dir, "sign", tc.alg, string(claims))
			var signed struct {
				JWKS  json.RawMessage `json:"jwks"`
				Token string          `json:"token"`
			}
			if err := json.Unmarshal([]byte(out), &signed); err != nil {
				t.Fatalf("jose sign: %q: %v", out, err)
			}
			set, err := ParseJWKS(signed.JWKS)
			if err != nil {
				t.Fatal(err)
			}
			v, err := NewVerifier(VerifierOptions{Keys: set, Audience: testAudience, Issuer: testIssuer})
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.VerifyFor(context.Background(), signed.Token, Expect{Room: "event-7", Path: "/events/7/checkout"})
			if err != nil || c.Subject != "v1" || c.Ticket != 7 {
				t.Fatalf("Go verifier on jose's JWT: %+v %v", c, err)
			}
			for kid, k := range set {
				if Thumbprint(k) != kid {
					t.Fatalf("Go's thumbprint of jose's key %q, jose's %q", Thumbprint(k), kid)
				}
			}
			if _, err := v.VerifyFor(context.Background(), signed.Token, Expect{Room: "event-8"}); Reason(err) != "room" {
				t.Fatalf("jose's JWT for another room: %v", err)
			}
		})
	}
}

// The shipped verifiers take ES256 passes from a gateway with
// pass.algorithm: ES256, and hold the key to its algorithm: the same claims
// under an EdDSA header naming the P-256 key are refused.
func TestInterop_ShippedVerifiersES256(t *testing.T) {
	t.Parallel()
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(SignerOptions{Keys: []crypto.Signer{p256, newKey(t)}, Issuer: testIssuer, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, time.Now())
	token := sign(t, s, f.pass, time.Now())
	segs := strings.Split(token, ".")
	confused := segs0(`{"alg":"EdDSA","kid":"`+s.KeyID()+`","typ":"JWT"}`) + "." + segs[1] + "." + segs[2]
	jwks := writeFile(t, t.TempDir(), "jwks.json", s.JWKS())
	tools := map[string][]string{"node": {lookPath(t, "node"), nodeModule}}
	if java, err := exec.LookPath("java"); err == nil {
		tools["java"] = []string{java, javaSource}
	}
	for name, cmd := range tools {
		args := append(cmd[1:len(cmd):len(cmd)], "--jwks", jwks, "--issuer", testIssuer, "--audience", testAudience)
		p := startBatch(t, cmd[0], args...)
		want := Expect{Room: testRoom, Path: testPath}
		if reason, c := p.verify(t, token, want); reason != "" || c.Subject != f.pass.Subject {
			t.Errorf("%s: an ES256 pass: %q %+v", name, reason, c)
		}
		if reason, _ := p.verify(t, confused, want); reason != "algorithm" {
			t.Errorf("%s: EdDSA claimed for a P-256 key: %q, want algorithm", name, reason)
		}
	}
	v, err := NewVerifier(VerifierOptions{Keys: s, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), confused, testRoom); Reason(err) != "algorithm" {
		t.Errorf("go: EdDSA claimed for a P-256 key: %v", err)
	}
}
