package proxy

import (
	"errors"
	"testing"
)

// pathTricks are decoded request paths (r.URL.Path) that spell one page in
// many ways; they also seed the fuzz tests.
var pathTricks = []struct {
	raw, want string
}{
	{"/", "/"},
	{"/events/1", "/events/1"},
	{"/EVENTS/1", "/EVENTS/1"},
	{"//events/1", "/events/1"},
	{"/static/../events/1", "/events/1"},
	{"/events;jsessionid=1/x", "/events;jsessionid=1/x"}, // parameters stay; only matching leaves them out
	{"/a;b/../c", "/c"},
	{"/a/b;c", "/a/b;c"},
	{"/...;x", "/...;x"},
	{"/.well-known;x/y", "/.well-known;x/y"},
	{"/a%41", "/a%41"}, // decoded already: a literal "%41", harmless decoded again
	{"/100%", "/100%"},
	{"/%zz/%2", "/%zz/%2"},
	{"/./events/1", "/events/1"},
	{"/events", "/events"},
	{"/events/", "/events/"},
	{"/events//", "/events/"},
	{"/events/.", "/events"},
	{"/events/./", "/events/"},
	{"/events/..", "/"},
	{"/events/../", "/"},
	{"/..", "/"},
	{"/../../events/1", "/events/1"},
	{"//", "/"},
	{"/a/b/../../../c/", "/c/"},
	{"/a b/ü", "/a b/ü"},
	{"/.well-known/x", "/.well-known/x"},
	{"/...", "/..."},
}

func TestCleanPath(t *testing.T) {
	t.Parallel()
	for _, tt := range pathTricks {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			got, err := CleanPath(tt.raw)
			if err != nil || got != tt.want {
				t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestCleanPath_Refuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "events", "*", "http://x/", `/events\..\admin`, "/a\x00b", "/a\nb", "/a\rb", "/a\tb", "/a\x7fb", `\events`,
		// A servlet container cuts ";" parameters before resolving dot
		// segments (decoded already: "..;" also stands for "..%3B").
		"/static/..;/events", "/static/.;/events", "/static/..;jsessionid=x/events", "/static/..;", "/static/;/../events",
		"/;x/events", "/static/.;/../events",
		// Decoded once already; an upstream that decodes again reads more.
		"/static/%2e%2e/events/1", "/%2e%2e/", "/static/%2e%2e;/events", "/static/..%3B/events", "/static/.%2e/events",
		"/static/%252e%252e/events", "/static/%25252e/events", "/static%2F..%2Fevents/1", "/a%5Cb", "/a%00b", "/events%3Bx/1",
	} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			if got, err := CleanPath(raw); !errors.Is(err, ErrBadPath) {
				t.Errorf("CleanPath(%q) = %q, %v; want ErrBadPath", raw, got, err)
			}
		})
	}
}

func TestCleanPath_CleanPathDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		CleanPath("/events/vip/12345/seats")
		CleanPath("/events/vip/")
		CleanPath("/")
	})
	if allocs != 0 {
		t.Errorf("CleanPath of clean paths allocates %v times per run", allocs)
	}
}

func TestHasPathPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p, prefix string
		want      bool
	}{
		{"/events/1", "/events/", true},
		{"/EVENTS/1", "/events/", true},
		{"/events", "/events/", true},
		{"/Events", "/events/", true},
		{"/event", "/events/", false},
		{"/eventsx", "/events/", false},
		{"/eventsx", "/events", true},
		{"/", "/", true},
		{"/anything", "/", true},
		{"/favicon.ico", "/favicon.ico", true},
		{"/favicon.ic", "/favicon.ico", false},
		{"/\u212aey/", "/key/", false}, // Kelvin sign is not "k"
	}
	for _, tt := range tests {
		if got := hasPathPrefix(tt.p, tt.prefix); got != tt.want {
			t.Errorf("hasPathPrefix(%q, %q) = %v, want %v", tt.p, tt.prefix, got, tt.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                           "/",
		"/events/1":                   "/events/1",
		"/events;x/checkout":          "/events/checkout",
		"/events;jsessionid=1;a=b/x/": "/events/x/",
		"/a/b;c":                      "/a/b",
		"/a;/b;/":                     "/a/b/",
		"/...;x":                      "/...",
	} {
		if got := MatchPath(in); got != want {
			t.Errorf("MatchPath(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { MatchPath("/events/vip/12345") }); n != 0 {
		t.Errorf("MatchPath without parameters allocates %v times", n)
	}
}
