package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The values of the symmetric test case in the Standard Webhooks reference
// libraries: a secret, a message, and the signature every implementation
// must produce for them.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSign_StandardWebhooksVector(t *testing.T) {
	t.Parallel()
	secret, err := ParseSecret(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := Sign(secret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody)); got != vectorSignature {
		t.Errorf("Sign = %q, want %q", got, vectorSignature)
	}
	h := vectorHeader()
	if err := verifyAt(secret, h, []byte(vectorBody), time.Minute, time.Unix(vectorTimestamp+30, 0)); err != nil {
		t.Errorf("verifying the vector: %v", err)
	}
}

func vectorHeader() http.Header {
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, fmt.Sprint(vectorTimestamp))
	h.Set(HeaderSignature, vectorSignature)
	return h
}

func TestVerify_RefusesWhatIsNotSignedNow(t *testing.T) {
	t.Parallel()
	secret, _ := ParseSecret(vectorSecret)
	other, _ := ParseSecret("whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of 32 bytes......")))
	now := time.Unix(vectorTimestamp, 0)
	bogus := "v1," + base64.StdEncoding.EncodeToString(make([]byte, 32))
	tests := []struct {
		name   string
		edit   func(h http.Header) // changes the vector's headers
		body   string              // "" for the vector's
		secret Secret              // nil for the vector's
		tol    time.Duration
		now    time.Time
		want   error // nil: verifies
	}{
		{name: "the vector", want: nil},
		{name: "one of several entries", edit: set(HeaderSignature, "v1a,xyz "+bogus+" v2,abc "+vectorSignature+" "+bogus)},
		{name: "other versions only", edit: set(HeaderSignature, "v2,"+vectorSignature[3:]), want: ErrSignature},
		{name: "body changed", body: `{"test": 2432232315}`, want: ErrSignature},
		{name: "body re-encoded", body: `{"test":2432232314}`, want: ErrSignature},
		{name: "id changed", edit: set(HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJeK"), want: ErrSignature},
		{name: "timestamp moved", edit: set(HeaderTimestamp, fmt.Sprint(vectorTimestamp+1)), want: ErrSignature},
		{name: "another secret", secret: other, want: ErrSignature},
		{name: "empty secret", secret: Secret{}, want: ErrSignature},
		{name: "bad base64", edit: set(HeaderSignature, "v1,!!!!"), want: ErrSignature},
		{name: "empty signature", edit: set(HeaderSignature, "v1,"), want: ErrSignature},
		{name: "no comma", edit: set(HeaderSignature, "v1"+vectorSignature[3:]), want: ErrSignature},
		{name: "too old", now: now.Add(5*time.Minute + time.Second), want: ErrTimestamp},
		{name: "too new", now: now.Add(-5*time.Minute - time.Second), want: ErrTimestamp},
		{name: "just within", now: now.Add(5 * time.Minute)},
		{name: "default tolerance", tol: -1, now: now.Add(4 * time.Minute)},
		{name: "default tolerance exceeded", tol: -1, now: now.Add(6 * time.Minute), want: ErrTimestamp},
		{name: "no id", edit: del(HeaderID), want: ErrHeader},
		{name: "no timestamp", edit: del(HeaderTimestamp), want: ErrHeader},
		{name: "no signature", edit: del(HeaderSignature), want: ErrHeader},
		{name: "id with a dot", edit: set(HeaderID, "msg.1"), want: ErrHeader},
		{name: "long id", edit: set(HeaderID, strings.Repeat("a", 257)), want: ErrHeader},
		{name: "fractional timestamp", edit: set(HeaderTimestamp, "1614265330.0"), want: ErrHeader},
		{name: "negative timestamp", edit: set(HeaderTimestamp, "-1614265330"), want: ErrHeader},
		{name: "huge timestamp", edit: set(HeaderTimestamp, "99999999999999999999"), want: ErrHeader},
		{name: "huge signature list", edit: set(HeaderSignature, strings.Repeat(bogus+" ", 100)+vectorSignature), want: ErrHeader},
		{name: "match past 16 entries", edit: set(HeaderSignature, strings.Repeat("v2,x ", 16)+vectorSignature), want: ErrSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := vectorHeader()
			if tc.edit != nil {
				tc.edit(h)
			}
			body, sec, tol, at := vectorBody, secret, tc.tol, tc.now
			if tc.body != "" {
				body = tc.body
			}
			if tc.secret != nil {
				sec = tc.secret
			}
			if tol == 0 {
				tol = 5 * time.Minute
			}
			if at.IsZero() {
				at = now
			}
			err := verifyAt(sec, h, []byte(body), tol, at)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func set(k, v string) func(http.Header) { return func(h http.Header) { h.Set(k, v) } }
func del(k string) func(http.Header)    { return func(h http.Header) { h.Del(k) } }

func TestParseSecret_ChecksAndNeverEchoes(t *testing.T) {
	t.Parallel()
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n))) }
	tests := []struct {
		in   string
		n    int    // decoded length wanted, or 0
		want string // the error's end, or ""
	}{
		{in: "whsec_" + b64(24), n: 24},
		{in: "whsec_" + b64(64), n: 64},
		{in: "whsec_" + strings.TrimRight(b64(32), "="), n: 32},
		{in: "whsec_" + strings.TrimRight(b64(25), "="), n: 25},
		{in: "", want: "got none"},
		{in: b64(32), want: `got no "whsec_" prefix`},
		{in: "WHSEC_" + b64(32), want: `got no "whsec_" prefix`},
		{in: "whsec_" + b64(16), want: "got 16 bytes"},
		{in: "whsec_" + b64(65), want: "got 65 bytes"},
		{in: "whsec_", want: "got 0 bytes"},
		{in: "whsec_kkkkkkkkkkkk*kkkkkkkkkkkkkkkkkkkkkk", want: "got something that is not base64"},
		{in: "whsec_" + base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xff", 30))), want: "got something that is not base64"},
	}
	for _, tc := range tests {
		s, err := ParseSecret(tc.in)
		switch {
		case tc.want == "" && (err != nil || len(s) != tc.n):
			t.Errorf("ParseSecret(%q) = %d bytes, %v; want %d bytes", tc.in, len(s), err, tc.n)
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("ParseSecret(%q) error %v, want one ending %q", tc.in, err, tc.want)
		case err != nil && len(tc.in) > 6 && strings.Contains(err.Error(), tc.in[6:]):
			t.Errorf("ParseSecret error %q holds the secret", err)
		}
	}
}

func TestSecret_PrintsRedacted(t *testing.T) {
	t.Parallel()
	s, _ := ParseSecret(vectorSecret)
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x"} {
		got := fmt.Sprintf(verb, s)
		if !strings.Contains(got, "REDACTED") && !strings.Contains(got, fmt.Sprintf("%x", "REDACTED")) {
			t.Errorf("Sprintf(%s, secret) = %q, want REDACTED", verb, got)
		}
	}
	if got := fmt.Sprintf("%v", struct{ S Secret }{s}); !strings.Contains(got, "REDACTED") {
		t.Errorf("in a struct: %q", got)
	}
}
