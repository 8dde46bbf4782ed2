package proxy

import (
	"errors"
	"net/url"
	"path"
	"strconv"
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

// paramTricks are decoded request paths with servlet path parameters and
// double encodings; they seed the fuzz tests.
var paramTricks = []string{
	";", "/;", "/..;", "/.;", "/static/..;/events", "/static/.;/events", "/static/;/../events",
	"/static/..;jsessionid=x/events", "/static/%2e%2e;/events", "/static/..%3B/events", "/static/%252e%252e;/events",
	"/static/..%253B/events", "/static/.%2e/events", "/events;x/checkout", "/events;jsessionid=1/", "/;x/events",
	"/EVENTS;/vip;a=b/1", "/events%3Bx/1", "/a%2541", "/%zz;x",
}

// harmless reports whether raw is a path CleanPath must accept: it starts
// with "/", holds no bad byte and no "%", and every segment with ";"
// parameters has a name before them that is not "." or "..".
func harmless(raw string) bool {
	if raw == "" || raw[0] != '/' || hasBadByte(raw) || strings.Contains(raw, "%") {
		return false
	}
	for _, seg := range strings.Split(raw, "/")[1:] {
		if head, _, ok := strings.Cut(seg, ";"); ok && (head == "" || head == "." || head == "..") {
			return false
		}
	}
	return true
}

// servletDotSegment reports whether a servlet container, even one behind
// filters that decode 3 more times, would find a dot segment, or an empty
// one inside the path, in what the proxy forwards for clean. Each round cuts
// every segment's ";" parameters and then decodes once, as Tomcat does.
func servletDotSegment(clean string) bool {
	p := (&url.URL{Path: clean}).EscapedPath()
	for range 4 {
		p = decodeLenient(cutParams(p))
		segs := strings.Split(p, "/")[1:]
		for i, seg := range segs {
			if seg == "." || seg == ".." || seg == "" && i < len(segs)-1 {
				return true
			}
		}
	}
	return false
}

// cutParams is the test's own removal of ";" parameters from each segment.
func cutParams(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i], _, _ = strings.Cut(seg, ";")
	}
	return strings.Join(segs, "/")
}

// decodeLenient decodes every valid %XX once and keeps any other "%".
func decodeLenient(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func FuzzCleanPath(f *testing.F) {
	for _, tt := range pathTricks {
		f.Add(tt.raw)
	}
	for _, s := range append([]string{"", "x", `/a\b`, "/a\x00", "/static%2F..%2Fevents/1", "/%2e%2e/", "/a/./b/../c//"}, paramTricks...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CleanPath(raw)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("CleanPath(%q): error %v is not ErrBadPath", raw, err)
			}
			if harmless(raw) {
				t.Fatalf("CleanPath(%q) refused a harmless path: %v", raw, err)
			}
			return
		}
		if servletDotSegment(got) {
			t.Fatalf("CleanPath(%q) = %q, which a servlet container resolves as a dot segment", raw, got)
		}
		if m := MatchPath(got); strings.Contains(m, ";") || m != path.Clean(m) && m != path.Clean(m)+"/" {
			t.Fatalf("CleanPath(%q) = %q, matched as %q, which is not clean", raw, got, m)
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
	for i, p := range paramTricks {
		f.Add(hosts[i%len(hosts)], p)
	}
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
		// The route is the one for the page a servlet container serves.
		view := path.Clean(decodeLenient(cutParams((&url.URL{Path: clean}).EscapedPath())))
		if r2, ok2 := rt.Match(host, view); ok2 != ok || r2.Index != r.Index || r2.Room != r.Room {
			t.Fatalf("Match(%q, %q) = %+v, but a servlet container serves %q, route %+v", host, clean, r, view, r2)
		}
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
		lp, p := asciiLower(cutParams(clean)), asciiLower(r.Path)
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
	lp := asciiLower(cutParams(clean))
	return strings.HasPrefix(lp, q.Path) || strings.HasSuffix(q.Path, "/") && lp == q.Path[:len(q.Path)-1]
}
