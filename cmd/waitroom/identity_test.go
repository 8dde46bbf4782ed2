package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// Where identity is required, an expired value, the old two-part format
// and a signed account that is not UTF-8 are all refused (403 identity, no
// ticket); the last is logged once, not per request.
func TestGuard_IdentityExpiresAndOldFormatIsRefused(t *testing.T) {
	const secret = "an-identity-secret-of-32-bytes-or-more"
	id, err := waitroom.IdentityConfig{Cookie: "acct", Secret: secret}.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, site := newUpstream(t)
	room := fmt.Sprintf("    max_active: 5\n    identity: { cookie: acct, secret: %q, required: true }", secret)
	_, base, _, logs := fileGateway(t, trustedConfig(site.URL, room, ""), false)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("kim@example.com"))
	old := "kim@example.com." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	refused := map[string]string{
		"expired":      id.Sign("kim@example.com", time.Now().Add(-time.Minute)),
		"old format":   old,
		"not UTF-8 #1": id.Sign("kim\xff", time.Now().Add(time.Hour)),
		"not UTF-8 #2": id.Sign("kim\xff", time.Now().Add(time.Hour)),
		"not UTF-8 #3": id.Sign("lee\xfe", time.Now().Add(time.Hour)),
	}
	for name, value := range refused {
		r := newVisitor(t, base).from("198.51.100.3", http.MethodGet, "/events/1", "Waitroom-Identity", value)
		if r.status != http.StatusForbidden || r.state() != "identity" || r.header.Get("Set-Cookie") != "" {
			t.Errorf("%s: %d %v, want 403 identity and no ticket", name, r.status, r.json)
		}
	}
	if r := newVisitor(t, base).from("198.51.100.3", http.MethodGet, "/events/1", "Waitroom-Identity", id.Sign("kim@example.com", time.Now().Add(time.Hour))); r.body != "site:/events/1" {
		t.Fatalf("a valid identity: %d %q", r.status, r.body)
	}
	lines := logs.FilterMessageSnippet("not UTF-8").All()
	if len(lines) != 1 {
		t.Fatalf("non-UTF-8 accounts logged %d times, want once", len(lines))
	}
	for _, f := range lines[0].Context {
		if strings.Contains(f.String, "kim") || strings.Contains(f.String, "lee") {
			t.Fatal("the log names an account")
		}
	}
}
