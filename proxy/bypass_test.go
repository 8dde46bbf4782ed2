package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

const testSecret = "s3cr3t-0123456789abcdef"

func TestBypass_Match(t *testing.T) {
	t.Parallel()
	b, err := BypassConfig{
		Paths:  []string{"/static/", "/favicon.ico", "/Healthz"},
		CIDRs:  []string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32"},
		Header: BypassHeader{Name: "x-waitroom-bypass", Secret: testSecret},
	}.Build()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		remoteAddr string
		target     string // raw, cleaned before Match as the caller does
		header     string // X-Waitroom-Bypass value
		want       bool
	}{
		{"static asset", "203.0.113.1:5000", "/static/app.js", "", true},
		{"static any case", "203.0.113.1:5000", "/STATIC/app.js", "", true},
		{"static without slash", "203.0.113.1:5000", "/static", "", true},
		{"favicon", "203.0.113.1:5000", "/favicon.ico", "", true},
		{"healthz configured in capitals", "203.0.113.1:5000", "/healthz", "", true},
		{"dot-dot out of static", "203.0.113.1:5000", "/static/../events/", "", false},
		{"encoded dot-dot out of static", "203.0.113.1:5000", "/static/%2e%2e/events/", "", false},
		{"encoded slash", "203.0.113.1:5000", "/static%2F..%2Fevents/", "", false},
		{"lookalike prefix", "203.0.113.1:5000", "/staticx/app.js", "", false},
		{"room page", "203.0.113.1:5000", "/events/", "", false},
		{"cidr", "10.1.2.3:5000", "/events/", "", true},
		{"single address", "192.0.2.7:5000", "/events/", "", true},
		{"single address neighbour", "192.0.2.8:5000", "/events/", "", false},
		{"ipv6 cidr", "[2001:db8::42]:5000", "/events/", "", true},
		{"ipv6 zone", "[2001:db8::42%eth0]:5000", "/events/", "", true},
		{"ipv4-mapped ipv6", "[::ffff:10.9.9.9]:5000", "/events/", "", true},
		{"no port", "10.1.2.3", "/events/", "", true},
		{"unix socket", "@", "/events/", "", false},
		{"secret", "203.0.113.1:5000", "/events/", testSecret, true},
		{"wrong secret", "203.0.113.1:5000", "/events/", testSecret + "x", false},
		{"secret prefix", "203.0.113.1:5000", "/events/", testSecret[:16], false},
		{"empty secret", "203.0.113.1:5000", "/events/", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", tt.target, nil)
			r.RemoteAddr = tt.remoteAddr
			if tt.header != "" {
				r.Header.Set("X-Waitroom-Bypass", tt.header)
			}
			clean, err := CleanPath(r.URL.Path)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Match(r, ClientAddr(r.RemoteAddr, r.Header, nil), clean); got != tt.want {
				t.Errorf("Match(%s from %s) = %v, want %v", clean, tt.remoteAddr, got, tt.want)
			}
		})
	}
}

func TestBypass_EmptyAndNilBypassNothing(t *testing.T) {
	t.Parallel()
	empty, err := DefaultBypass().Build()
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/static/x", nil)
	r.Header.Set("X-Waitroom-Bypass", testSecret)
	for _, b := range []*Bypass{empty, nil} {
		if b.Match(r, ClientAddr(r.RemoteAddr, r.Header, nil), "/static/x") {
			t.Errorf("%v bypassed", b)
		}
		if b.HeaderName() != "" {
			t.Errorf("HeaderName %q", b.HeaderName())
		}
	}
}

func TestNewBypass_RefusesInvalid(t *testing.T) {
	t.Parallel()
	_, err := BypassConfig{Header: BypassHeader{Name: "X-Bypass", Secret: "short"}}.Build()
	if err == nil || err.Error() != "header.secret: must be at least 16 bytes, got 5 bytes" {
		t.Errorf("got %v", err)
	}
}

func TestBypass_PathsMatchWholeSegments(t *testing.T) {
	t.Parallel()
	b, err := BypassConfig{Paths: []string{"/healthz", "/static/", "/favicon.ico"}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"/healthz": true, "/healthz/deep": true, "/HEALTHZ": true, "/healthzBUY": false, "/healthz.php": false,
		"/static/app.css": true, "/static": true, "/staticky/buy": false,
		"/favicon.ico": true, "/favicon.icon": false,
	} {
		r := httptest.NewRequest(http.MethodGet, p, nil)
		if got := b.Match(r, ClientAddr(r.RemoteAddr, r.Header, nil), p); got != want {
			t.Errorf("bypass of %q: %v, want %v", p, got, want)
		}
	}
}
