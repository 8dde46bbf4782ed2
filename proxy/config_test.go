package proxy

import (
	"net/netip"
	"strings"
	"testing"
)

// checkProblems asserts that err holds exactly the problems whose texts
// start with wantPrefixes, one joined error each.
func checkProblems(t *testing.T, err error, wantPrefixes ...string) {
	t.Helper()
	if len(wantPrefixes) == 0 {
		if err != nil {
			t.Fatalf("want no error, got %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want %q, got no error", wantPrefixes)
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	if len(errs) != len(wantPrefixes) {
		t.Fatalf("want %d problems, got %d: %v", len(wantPrefixes), len(errs), err)
	}
	for i, want := range wantPrefixes {
		if !strings.HasPrefix(errs[i].Error(), want) {
			t.Errorf("problem %d: %q does not start with %q", i, errs[i], want)
		}
	}
}

func TestUpstreamConfig_Validate(t *testing.T) {
	t.Parallel()
	allWrong := func(c *UpstreamConfig) {
		*c = UpstreamConfig{URL: "x", Timeout: "1", DialTimeout: "0", IdleConnTimeout: "x", MaxIdleConnsPerHost: -1}
	}
	tests := []struct {
		name   string
		mutate func(*UpstreamConfig)
		want   []string
	}{
		{"default with url", func(c *UpstreamConfig) {}, nil},
		{"https with port and slash", func(c *UpstreamConfig) { c.URL = "https://shop.internal:8443/" }, nil},
		{"ipv6", func(c *UpstreamConfig) { c.URL = "http://[::1]:3000" }, nil},
		{"missing url", func(c *UpstreamConfig) { c.URL = "" }, []string{`url: must be an absolute http or https URL, got ""`}},
		{"ftp", func(c *UpstreamConfig) { c.URL = "ftp://x" }, []string{`url: must be an absolute http or https URL, got "ftp://x"`}},
		{"relative", func(c *UpstreamConfig) { c.URL = "/app" }, []string{"url: must be an absolute"}},
		{"no host", func(c *UpstreamConfig) { c.URL = "http:///x" }, []string{"url: must be an absolute"}},
		{"opaque", func(c *UpstreamConfig) { c.URL = "http:shop" }, []string{"url: must be an absolute"}},
		{"bad port", func(c *UpstreamConfig) { c.URL = "http://shop:port" }, []string{"url: must be an absolute"}},
		{"path", func(c *UpstreamConfig) { c.URL = "http://shop/app" }, []string{"url: must not have a path"}},
		{"query", func(c *UpstreamConfig) { c.URL = "http://shop/?a=1" }, []string{"url: must not have a query"}},
		{"fragment", func(c *UpstreamConfig) { c.URL = "http://shop#top" }, []string{"url: must not have a query or fragment"}},
		{"credentials", func(c *UpstreamConfig) { c.URL = "http://u:hunter2@shop" }, []string{`url: must not carry credentials, got "http://u:xxxxx@shop"`}},
		{"bare number", func(c *UpstreamConfig) { c.Timeout = "30" }, []string{`timeout: want a duration with a unit such as "30s", got "30"`}},
		{"zero", func(c *UpstreamConfig) { c.DialTimeout = "0s" }, []string{`dial_timeout: must be more than 0, got "0s"`}},
		{"negative", func(c *UpstreamConfig) { c.IdleConnTimeout = "-1s" }, []string{`idle_conn_timeout: must not be negative, got "-1s"`}},
		{"garbage", func(c *UpstreamConfig) { c.Timeout = "soon" }, []string{`timeout: want a duration such as "90s" or "2m", got "soon"`}},
		{"empty", func(c *UpstreamConfig) { c.Timeout = "" }, []string{`timeout: want a duration`}},
		{"idle conns", func(c *UpstreamConfig) { c.MaxIdleConnsPerHost = 0 }, []string{"max_idle_conns_per_host: must be >= 1, got 0"}},
		{"everything", allWrong, []string{"url: ", "timeout: ", "dial_timeout: ", "idle_conn_timeout: ", "max_idle_conns_per_host: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultUpstream()
			c.URL = "http://127.0.0.1:3000"
			tt.mutate(&c)
			_, err := c.Build()
			checkProblems(t, err, tt.want...)
		})
	}
}

func TestRouteConfig_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    RouteConfig
		want []string
	}{
		{"default", RouteConfig{Path: "/", Upstream: "shop"}, nil},
		{"host any case", RouteConfig{Host: "Tickets.Example.COM", Path: "/events/", Upstream: "shop"}, nil},
		{"ipv6 host", RouteConfig{Host: "[::1]", Path: "/", Upstream: "shop"}, nil},
		{"bare ipv6 host", RouteConfig{Host: "2001:db8::1", Path: "/", Upstream: "shop"}, nil},
		{"host port", RouteConfig{Host: "shop.example.com:8080", Path: "/", Upstream: "u"}, []string{`host: must not have a port, got "shop.example.com:8080"`}},
		{"ipv6 port", RouteConfig{Host: "[::1]:8080", Path: "/", Upstream: "u"}, []string{"host: must be a bracketed IPv6 address"}},
		{"scheme", RouteConfig{Host: "https://shop.example.com", Path: "/", Upstream: "u"}, []string{"host: must be a host name without scheme or path"}},
		{"wildcard", RouteConfig{Host: "*.example.com", Path: "/", Upstream: "u"}, []string{"host: must be an ASCII host name"}},
		{"unicode", RouteConfig{Host: "bücher.example", Path: "/", Upstream: "u"}, []string{"host: must be an ASCII host name"}},
		{"only a dot", RouteConfig{Host: ".", Path: "/", Upstream: "u"}, []string{"host: must be a host name"}},
		{"empty path", RouteConfig{Upstream: "u"}, []string{`path: must start with "/", got ""`}},
		{"relative path", RouteConfig{Path: "events/", Upstream: "u"}, []string{`path: must start with "/"`}},
		{"double slash", RouteConfig{Path: "/events//", Upstream: "u"}, []string{"path: must be a clean path"}},
		{"dot", RouteConfig{Path: "/./events/", Upstream: "u"}, []string{"path: must be a clean path"}},
		{"dot-dot", RouteConfig{Path: "/static/../events/", Upstream: "u"}, []string{"path: must be a clean path"}},
		{"escape", RouteConfig{Path: "/events%2F", Upstream: "u"}, []string{"path: must be written decoded"}},
		{"backslash", RouteConfig{Path: `/events\`, Upstream: "u"}, []string{"path: must not contain a backslash"}},
		{"no upstream", RouteConfig{Path: "/"}, []string{`upstream: required, got ""`}},
		{"everything", RouteConfig{Host: "a:1", Path: "x"}, []string{"host: ", "path: ", "upstream: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProblems(t, tt.c.Validate(), tt.want...)
		})
	}
}

func TestBuildRouter(t *testing.T) {
	t.Parallel()
	upstreams := map[string]string{"shop": "http://10.0.0.5:80", "site": "http://10.0.0.6:80"}
	rooms := map[string]bool{"concert": true}
	tests := []struct {
		name   string
		routes []RouteConfig
		want   []string
	}{
		{"ok", []RouteConfig{{Path: "/", Upstream: "site"}, {Path: "/events/", Upstream: "shop", Room: "concert"}}, nil},
		{"none", nil, nil},
		{"unknown upstream", []RouteConfig{{Path: "/", Upstream: "site"}, {Path: "/a/", Upstream: "site"}, {Path: "/b/", Upstream: "shp"}},
			[]string{`routes[2].upstream: unknown upstream "shp" (known: "shop", "site")`}},
		{"unknown room", []RouteConfig{{Path: "/", Upstream: "site", Room: "concrt"}},
			[]string{`routes[0].room: unknown room "concrt" (known: "concert")`}},
		{"duplicate", []RouteConfig{{Host: "A.example", Path: "/Events/", Upstream: "site"}, {Host: "a.example.", Path: "/events/", Upstream: "shop"}},
			[]string{`routes[1]: same host and path as routes[0]`}},
		{"same path other host", []RouteConfig{{Host: "a.example", Path: "/", Upstream: "site"}, {Path: "/", Upstream: "site"}}, nil},
		{"nested keys", []RouteConfig{{Path: "/", Upstream: "site"}, {Host: "x:1", Path: "//", Upstream: "nope"}},
			[]string{"routes[1].host: must not have a port", "routes[1].path: must be a clean path", `routes[1].upstream: unknown upstream "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProblems(t, routesErr(tt.routes, upstreams, rooms), tt.want...)
		})
	}
}

func TestBypassConfig_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    BypassConfig
		want []string
	}{
		{"default", DefaultBypass(), nil},
		{"full", BypassConfig{Paths: []string{"/static/", "/favicon.ico"}, CIDRs: []string{"10.0.0.0/8", "::1", "192.0.2.1"},
			Header: BypassHeader{Name: "X-Bypass", Secret: "0123456789abcdef"}}, nil},
		{"path", BypassConfig{Paths: []string{"/ok/", "static/", "/a/../b"}},
			[]string{`paths[1]: must start with "/"`, "paths[2]: must be a clean path"}},
		{"cidr", BypassConfig{CIDRs: []string{"10.0.0.0/8", "10.0.0.0/33", "example.com", "fe80::1%eth0"}},
			[]string{`cidrs[1]: want a CIDR such as "10.0.0.0/8" or an IP address, got "10.0.0.0/33"`, "cidrs[2]: ", "cidrs[3]: "}},
		{"name without secret", BypassConfig{Header: BypassHeader{Name: "X-Bypass"}},
			[]string{"header.secret: required when header.name is set"}},
		{"secret without name", BypassConfig{Header: BypassHeader{Secret: "0123456789abcdef"}},
			[]string{"header.name: required when header.secret is set"}},
		{"short secret", BypassConfig{Header: BypassHeader{Name: "X-Bypass", Secret: "hunter2"}},
			[]string{"header.secret: must be at least 16 bytes, got 7 bytes"}},
		{"bad name", BypassConfig{Header: BypassHeader{Name: "X Bypass:", Secret: "0123456789abcdef"}},
			[]string{`header.name: must be an HTTP header name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.c.Build()
			checkProblems(t, err, tt.want...)
			if err != nil && tt.c.Header.Secret != "" && strings.Contains(err.Error(), tt.c.Header.Secret) {
				t.Errorf("the secret appears in %q", err)
			}
		})
	}
}

func TestParsePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "" for an error
	}{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"192.0.2.1", "192.0.2.1/32"},
		{" 192.0.2.1 ", "192.0.2.1/32"},
		{"::1", "::1/128"},
		{"::ffff:192.0.2.1", "192.0.2.1/32"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:192.0.2.1/128", "192.0.2.1/32"},
		{"::ffff:0.0.0.0/80", "::/80"}, // wider than the mapped range: stays IPv6
		{"10.0.0.0/33", ""},
		{"fe80::1%eth0", ""},
		{"localhost", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			p, err := ParsePrefix(tt.in)
			switch {
			case tt.want == "" && err == nil:
				t.Errorf("ParsePrefix(%q) = %v, want an error", tt.in, p)
			case tt.want != "" && (err != nil || p != netip.MustParsePrefix(tt.want)):
				t.Errorf("ParsePrefix(%q) = %v, %v; want %s", tt.in, p, err, tt.want)
			}
		})
	}
}

// routesErr is BuildRouter's problems, for the tables above.
func routesErr(routes []RouteConfig, upstreams map[string]string, rooms map[string]bool) error {
	_, err := BuildRouter(routes, upstreams, rooms)
	return err
}
