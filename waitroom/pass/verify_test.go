package pass

import (
	"context"
	"crypto/ed25519"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func goVerifier(tb testing.TB, keys KeySet, now time.Time) *Verifier {
	tb.Helper()
	v, err := NewVerifier(VerifierOptions{Keys: keys, Audience: testAudience, Issuer: testIssuer, Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestVerify_Cases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Unix(1_800_000_000, 0))
	keys, err := ParseJWKS(f.signer.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	v := goVerifier(t, keys, f.now.Add(time.Second))
	for _, tc := range f.cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := v.VerifyFor(context.Background(), tc.token, Expect{Room: tc.room, Path: tc.path})
			if got := Reason(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
			if tc.want != nil && !reflect.DeepEqual(c, *tc.want) {
				t.Fatalf("claims %+v, want %+v", c, *tc.want)
			}
			if err != nil && strings.Contains(err.Error(), tc.token) {
				t.Fatal("the error quotes the token")
			}
		})
	}
}

// Each refusal wraps exactly the sentinel its reason names, so callers can
// use errors.Is.
func TestVerify_Sentinels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Unix(1_800_000_000, 0))
	v := goVerifier(t, f.signer, f.now)
	for _, tc := range f.cases(t) {
		if tc.reason == "" {
			continue
		}
		_, err := v.VerifyFor(context.Background(), tc.token, Expect{Room: tc.room, Path: tc.path})
		for _, r := range reasons {
			if errors.Is(err, r.err) != (r.code == tc.reason) {
				t.Errorf("%s: errors.Is(%v, %v) is %v", tc.name, err, r.err, !(r.code == tc.reason))
			}
		}
	}
	if Reason(nil) != "" || Reason(errors.New("other")) != "error" {
		t.Fatal("Reason of nil or a foreign error")
	}
	if _, err := v.Verify(context.Background(), "", ""); !errors.Is(err, ErrMissing) {
		t.Fatalf("an empty pass: %v, want ErrMissing", err)
	}
}

// The leeway is the clock skew allowed on either side, and nothing more.
func TestVerify_Leeway(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Unix(1_800_000_000, 0))
	tok := sign(t, f.signer, f.pass, f.now) // exp = now + 60
	for _, tc := range []struct {
		leeway time.Duration
		at     time.Duration // after f.now
		reason string
	}{
		{0, 64 * time.Second, ""}, // default 5s
		{0, 65 * time.Second, "expired"},
		{5 * time.Second, 64 * time.Second, ""},
		{5 * time.Second, 65 * time.Second, "expired"},
		{5 * time.Second, -5 * time.Second, ""},
		{5 * time.Second, -6 * time.Second, "not_yet_valid"},
	} {
		at := f.now.Add(tc.at)
		v, err := NewVerifier(VerifierOptions{Keys: f.signer, Audience: testAudience, Leeway: tc.leeway, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), tok, testRoom); Reason(err) != tc.reason {
			t.Errorf("leeway %v at now%+v: %v, want %q", tc.leeway, tc.at, err, tc.reason)
		}
	}
}

// Without an expected issuer any iss passes; the audience is never optional.
func TestNewVerifier(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v, err := NewVerifier(VerifierOptions{Keys: f.signer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, f.otherIssuer, f.pass, time.Now()), testRoom); err != nil {
		t.Fatalf("no issuer configured, any iss: %v", err)
	}
	for name, o := range map[string]VerifierOptions{
		"no keys":        {Audience: testAudience},
		"no audience":    {Keys: f.signer},
		"negative leway": {Keys: f.signer, Audience: testAudience, Leeway: -time.Second},
	} {
		if _, err := NewVerifier(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A pass of any shape never panics the verifier, and nothing but a pass the
// key signed is accepted.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f, time.Unix(1_800_000_000, 0))
	for _, tc := range fx.cases(f) {
		f.Add(tc.token)
	}
	v := goVerifier(f, fx.signer, fx.now)
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := v.Verify(context.Background(), tok, "")
		if err != nil {
			return
		}
		i := strings.LastIndexByte(tok, '.')
		sig, _ := b64.DecodeString(tok[i+1:])
		signed := ed25519.Verify(pub(fx.cur), []byte(tok[:i]), sig) || ed25519.Verify(pub(fx.old), []byte(tok[:i]), sig)
		if !signed || len(tok) > MaxTokenSize || c.ExpiresAt+30 <= fx.now.Unix() {
			t.Fatalf("accepted %q", tok)
		}
	})
}
