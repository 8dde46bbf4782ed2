package pass

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// verifyFunc asks one verifier about one pass: the refusal's reason, or ""
// and the claims.
type verifyFunc func(tb testing.TB, token, room string) (string, Claims)

// scenario holds a verifier to the contract: every case of fixture.cases
// against a key set served over HTTP, a flood of made-up kids, and a
// rotation. The verifier must fetch from srv with a MinRefetch of 1s.
func scenario(t *testing.T, f *fixture, srv *jwksServer, verify verifyFunc) {
	start := time.Now()
	for _, tc := range f.cases(t) {
		reason, c := verify(t, tc.token, tc.room)
		if reason != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.name, reason, tc.reason)
		}
		if tc.want != nil && reason == "" && !reflect.DeepEqual(c, *tc.want) {
			t.Errorf("%s: claims %+v, want %+v", tc.name, c, *tc.want)
		}
	}
	for range 50 {
		if reason, _ := verify(t, sign(t, f.strangerSigner, f.pass, f.now), testRoom); reason != "unknown_key" {
			t.Fatalf("a made-up kid: %q", reason)
		}
	}
	// One fetch to start, and at most one more per MinRefetch since.
	if n, most := srv.fetches.Load(), 2+int64(time.Since(start)/time.Second); n > most {
		t.Errorf("%d key set fetches in %v, want at most %d", n, time.Since(start), most)
	}

	// Rotation: the old key is withdrawn. A set fetched before still has
	// it; once a fetch is due (here, an unknown kid after MinRefetch) it is
	// gone, and passes it signed are refused.
	old, cur := sign(t, f.oldSigner, f.pass, time.Now()), sign(t, f.signer, f.pass, time.Now())
	srv.set(newSigner(t, testIssuer, testTTL, f.cur).JWKS(), 200)
	if reason, _ := verify(t, old, testRoom); reason != "" {
		t.Errorf("the old key, before the set is fetched again: %q, want it accepted", reason)
	}
	time.Sleep(1100 * time.Millisecond)
	if reason, _ := verify(t, sign(t, f.strangerSigner, f.pass, time.Now()), testRoom); reason != "unknown_key" {
		t.Errorf("a made-up kid after MinRefetch: %q", reason)
	}
	if reason, _ := verify(t, old, testRoom); reason != "unknown_key" {
		t.Errorf("the old key, withdrawn: %q, want unknown_key", reason)
	}
	if reason, _ := verify(t, cur, testRoom); reason != "" {
		t.Errorf("the current key after the rotation: %q", reason)
	}
}

func TestInterop_Go(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	srv := newJWKSServer(t, f.signer.JWKS())
	remote := newRemote(t, srv.URL, RemoteOptions{MinRefetch: time.Second})
	v, err := NewVerifier(VerifierOptions{Keys: remote, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	scenario(t, f, srv, func(tb testing.TB, token, room string) (string, Claims) {
		c, err := v.Verify(context.Background(), token, room)
		return Reason(err), c
	})
}
