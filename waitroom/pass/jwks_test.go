package pass

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The published set is RFC 8037's shape, one key per configured key, the
// signing key first, each kid its thumbprint; it reads back as the same keys.
func TestSigner_JWKS(t *testing.T) {
	t.Parallel()
	a, b := newKey(t), newKey(t)
	s := newSigner(t, testIssuer, testTTL, a, b)
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(s.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("%d keys, want 2", len(set.Keys))
	}
	for i, k := range []ed25519.PrivateKey{a, b} {
		want := map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64.EncodeToString(pub(k)),
			"kid": Thumbprint(pub(k)), "alg": "EdDSA", "use": "sig"}
		if fmt.Sprint(set.Keys[i]) != fmt.Sprint(want) {
			t.Errorf("keys[%d] = %v, want %v", i, set.Keys[i], want)
		}
	}
	if s.KeyID() != Thumbprint(pub(a)) {
		t.Fatal("the first key must sign")
	}
	parsed, err := ParseJWKS(s.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []ed25519.PrivateKey{a, b} {
		got, err := parsed.Key(context.Background(), Thumbprint(pub(k)))
		if err != nil || !pub(k).Equal(got) {
			t.Fatalf("key %s: %v", Thumbprint(pub(k)), err)
		}
	}
}

func TestParseJWKS(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	x := b64.EncodeToString(pub(k))
	okp := func(extra string) string { return `{"kty":"OKP","crv":"Ed25519","x":"` + x + `"` + extra + `}` }
	set := func(keys ...string) string { return `{"keys":[` + strings.Join(keys, ",") + `]}` }
	for _, tc := range []struct {
		name, in string
		kids     []string // the kids kept; nil: an error
	}{
		{"one key", set(okp(`,"kid":"a"`)), []string{"a"}},
		{"no kid: the thumbprint", set(okp("")), []string{Thumbprint(pub(k))}},
		{"others skipped", set(`{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"}`, okp(`,"kid":"a"`),
			okp(`,"kid":"enc","use":"enc"`), okp(`,"kid":"es","alg":"ES256"`),
			`{"kty":"OKP","crv":"X25519","x":"`+x+`","kid":"x"}`, `{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"short"}`,
			`{"kty":"OKP","crv":"Ed25519","x":"`+x+`=","kid":"padded"}`, `"not an object"`), []string{"a"}},
		{"the first of a kid wins", set(okp(`,"kid":"a"`), `{"kty":"OKP","crv":"Ed25519","x":"`+b64.EncodeToString(pub(newKey(t)))+`","kid":"a"}`), []string{"a"}},
		{"no usable key", set(`{"kty":"RSA"}`), nil},
		{"empty", set(), nil},
		{"not JSON", "<html>", nil},
		{"no keys member", `{"key":[]}`, nil},
		{"too many", set(strings.Repeat(okp("")+",", maxKeys) + okp("")), nil},
	} {
		got, err := ParseJWKS([]byte(tc.in))
		if tc.kids == nil {
			if err == nil {
				t.Errorf("%s: accepted", tc.name)
			}
			continue
		}
		if err != nil || len(got) != len(tc.kids) {
			t.Errorf("%s: %v %v, want kids %v", tc.name, got, err, tc.kids)
			continue
		}
		for _, kid := range tc.kids {
			if !pub(k).Equal(got[kid]) {
				t.Errorf("%s: kid %s is not the key", tc.name, kid)
			}
		}
	}
	if _, err := (JWKS{}).Key(context.Background(), "nope"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown kid: %v", err)
	}
}
