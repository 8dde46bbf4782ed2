package proxy

import (
	"errors"
	"path"
	"strings"
	"testing"
)

// asciiLower is the test's own lower-casing, independent of lowerASCII.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func hasBadByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\' {
			return true
		}
	}
	return false
}

func FuzzCleanPath(f *testing.F) {
	for _, tt := range pathTricks {
		f.Add(tt.raw)
	}
	for _, s := range []string{"", "x", `/a\b`, "/a\x00", "/static%2F..%2Fevents/1", "/%2e%2e/", "/a/./b/../c//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CleanPath(raw)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("CleanPath(%q): error %v is not ErrBadPath", raw, err)
			}
			if raw != "" && raw[0] == '/' && !hasBadByte(raw) {
				t.Fatalf("CleanPath(%q) refused a harmless path: %v", raw, err)
			}
			return
		}
		if raw == "" || raw[0] != '/' || hasBadByte(raw) {
			t.Fatalf("CleanPath(%q) = %q, want a refusal", raw, got)
		}
		if again, err := CleanPath(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", raw, got, again, err)
		}
		if got[0] != '/' || strings.Contains(got, "//") {
			t.Fatalf("CleanPath(%q) = %q", raw, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("CleanPath(%q) = %q keeps a %q segment", raw, got, seg)
			}
		}
		if path.Clean(got) != path.Clean(raw) {
			t.Fatalf("CleanPath(%q) = %q names another path than path.Clean's %q", raw, got, path.Clean(raw))
		}
		if strings.HasSuffix(got, "/") != (strings.HasSuffix(raw, "/") || got == "/") {
			t.Fatalf("CleanPath(%q) = %q lost or invented the trailing slash", raw, got)
		}
	})
}

func FuzzRouteMatch(f *testing.F) {
	hosts := []string{"", "tickets.example.com", "TICKETS.example.com.:8443", "[::1]:8080", "2001:db8::1", "[", "a:b:c", "shop.example.com"}
	for i, tt := range pathTricks {
		f.Add(hosts[i%len(hosts)], tt.raw)
	}
	f.Add("api.example.com", "/v1/queue/join")
	f.Add("x", "/static%2F..%2Fevents/1")
	rt := testRouter(f)
	f.Fuzz(func(t *testing.T, host, raw string) {
		rt.Match(host, raw) // unclean input: must not panic
		clean, err := CleanPath(raw)
		if err != nil {
			return
		}
		if again, _ := CleanPath(clean); again != clean {
			t.Fatalf("CleanPath not idempotent: %q -> %q -> %q", raw, clean, again)
		}
		r, ok := rt.Match(host, clean)
		for i := range rt.routes {
			q := rt.routes[i]
			if !routeMatches(q, host, clean) {
				continue
			}
			if !ok {
				t.Fatalf("Match(%q, %q) found nothing, but route %d matches", host, clean, q.Index)
			}
			if (q.Host != "") && r.Host == "" || (q.Host != "") == (r.Host != "") && len(q.Path) > len(r.Path) {
				t.Fatalf("Match(%q, %q) = route %d, but route %d ranks higher", host, clean, r.Index, q.Index)
			}
		}
		if !ok {
			return
		}
		lp, p := asciiLower(clean), asciiLower(r.Path)
		if !strings.HasPrefix(lp, p) && !(strings.HasSuffix(p, "/") && lp == p[:len(p)-1]) {
			t.Fatalf("Match(%q, %q) = prefix %q, which does not cover the path", host, clean, r.Path)
		}
		if r.Host != "" && asciiLower(hostOnly(host)) != r.Host {
			t.Fatalf("Match(%q, %q) = host %q", host, clean, r.Host)
		}
	})
}

// routeMatches is the matching rule for one route, without the ranking.
func routeMatches(q Route, host, clean string) bool {
	if q.Host != "" && asciiLower(hostOnly(host)) != q.Host {
		return false
	}
	lp := asciiLower(clean)
	return strings.HasPrefix(lp, q.Path) || strings.HasSuffix(q.Path, "/") && lp == q.Path[:len(q.Path)-1]
}
