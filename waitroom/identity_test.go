package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testIdentitySecret = "an-identity-secret-of-32-bytes-or-more"

func testIdentity(t testing.TB) *Identity {
	t.Helper()
	id, err := IdentityConfig{Cookie: "acct", Secret: testIdentitySecret}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// macOf is the site's side by hand: the unpadded base64url HMAC of signed.
func macOf(signed string) string {
	m := hmac.New(sha256.New, []byte(testIdentitySecret))
	m.Write([]byte(signed))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// A value is good only until its expiry; the old two-part form, a tampered
// expiry and an expiry past MaxIdentityLifetime are anonymous.
func TestIdentity_ExpiresAndOldFormatIsAnonymous(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	now := time.Now()
	exp := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	good := id.Sign("kim@example.com", now.Add(time.Hour))
	for name, c := range map[string]struct {
		value, account string
	}{
		"valid":                {good, "kim@example.com"},
		"by hand":              {"a.b.c." + exp(time.Minute) + "." + macOf("a.b.c."+exp(time.Minute)), "a.b.c"},
		"expired":              {id.Sign("kim@example.com", now.Add(-time.Second)), ""},
		"expires now":          {id.Sign("kim@example.com", now), ""},
		"old two-part":         {"kim@example.com." + macOf("kim@example.com"), ""},
		"old two-part, digits": {"kim.123." + macOf("kim.123"), ""},
		"old, far-off digits":  {"kim." + exp(365*24*time.Hour) + "." + macOf("kim."+exp(365*24*time.Hour)), ""},
		"past the lifetime":    {id.Sign("kim@example.com", now.Add(MaxIdentityLifetime+time.Hour)), ""},
		"expiry moved":         {strings.Replace(good, "."+exp(time.Hour)+".", "."+exp(2*time.Hour)+".", 1), ""},
		"signed sign":          {"kim.+" + exp(time.Hour) + "." + macOf("kim.+"+exp(time.Hour)), ""},
		"no account":           {"." + exp(time.Hour) + "." + macOf("."+exp(time.Hour)), ""},
		"tampered mac":         {good[:len(good)-2] + "AA", ""},
	} {
		got, ok := id.verify(c.value, now)
		if ok != (c.account != "") || got != c.account {
			t.Errorf("%s: verify = %q, %v; want %q", name, got, ok, c.account)
		}
	}
}

// Both doors read the same format: the header and the cookie.
func TestIdentity_HeaderAndCookie(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set(IdentityHeader, id.Sign("kim@example.com", time.Now().Add(time.Minute)))
	if a, ok := id.Account(r); !ok || a != "kim@example.com" {
		t.Fatalf("header: %q %v", a, ok)
	}
	r = httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Cookie", "acct="+id.Sign("lee@example.com", time.Now().Add(time.Minute)))
	if a, ok := id.Account(r); !ok || a != "lee@example.com" {
		t.Fatalf("cookie: %q %v", a, ok)
	}
	r.Header.Set("Cookie", "acct="+id.Sign("lee@example.com", time.Now().Add(-time.Minute)))
	if a, ok := id.Account(r); ok {
		t.Fatalf("an expired cookie proved %q", a)
	}
}

// A signed account that is not UTF-8 is refused, and reported once, not
// per request; an unsigned one is not reported at all.
func TestIdentity_NotUTF8RefusedAndReportedOnce(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	now := time.Now()
	forged := "\xff\xfe." + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + "." + macOf("x")
	if _, ok := id.verify(forged, now); ok || id.takeNotUTF8() {
		t.Fatal("an unsigned non-UTF-8 value was accepted or reported")
	}
	for range 3 {
		if a, ok := id.verify(id.Sign("\xff\xfe", now.Add(time.Hour)), now); ok {
			t.Fatalf("a non-UTF-8 account was accepted: %q", a)
		}
	}
	if !id.takeNotUTF8() || id.takeNotUTF8() {
		t.Fatal("want one report for three refusals")
	}
	var none *Identity
	if none.takeNotUTF8() {
		t.Fatal("a room without identity reported")
	}
}

// The Node example in docs/integrations/identity signs what the gateway
// verifies, and its expiry counts.
func TestIdentity_NodeExample(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required on CI: %v", err)
		}
		t.Skipf("node not found (%v); CI=true makes this a failure", err)
	}
	script := filepath.Join("..", "docs", "integrations", "identity", "sign-identity.mjs")
	id := testIdentity(t)
	for ttl, want := range map[string]bool{"3600": true, "-5": false} {
		cmd := exec.Command(node, script, "kim@example.com", ttl)
		cmd.Env = append(os.Environ(), "WAITROOM_IDENTITY_SECRET="+testIdentitySecret)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node %s: %v", ttl, err)
		}
		a, ok := id.verify(strings.TrimSpace(string(out)), time.Now())
		if ok != want || (ok && a != "kim@example.com") {
			t.Errorf("ttl %s: verify = %q, %v; want ok %v", ttl, a, ok, want)
		}
	}
}
