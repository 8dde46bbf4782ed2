package waitroom

import "testing"

func TestSafeReturnTo(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"":                   "/",
		"/":                  "/",
		"/events/7?seat=3":   "/events/7?seat=3",
		"/a/b#frag":          "/a/b#frag",
		"/%2F%2Fevil.com":    "/%2F%2Fevil.com",
		"/search?q=//x.com/": "/search?q=//x.com/",
	}
	for in, want := range ok {
		if got, good := safeReturnTo(in); !good || got != want {
			t.Errorf("safeReturnTo(%q) = %q, %v; want %q", in, got, good, want)
		}
	}
	for _, in := range []string{
		"https://evil.example/", "//evil.example", "///evil.example", "/\\evil.example", "\\\\evil.example",
		"http:evil", "javascript:alert(1)", "evil.example", "/a\nb", "/a\tb", "/a\\b", "/a\x7fb",
		"/" + string(make([]byte, maxReturnTo)),
	} {
		if got, good := safeReturnTo(in); good {
			t.Errorf("safeReturnTo(%q) accepted as %q", in, got)
		}
	}
}

func TestPrivateCacheControl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                              "private",
		"public, max-age=600":           "max-age=600, private",
		"s-maxage=60, max-age=10":       "max-age=10, private",
		"private, max-age=5":            "private, max-age=5",
		"no-store":                      "no-store",
		"Public, must-revalidate, ETag": "must-revalidate, ETag, private",
	} {
		if got := privateCacheControl(in); got != want {
			t.Errorf("privateCacheControl(%q) = %q, want %q", in, got, want)
		}
	}
}
