package redisstore

import (
	"strings"
	"testing"
)

func TestConfig_RedisURLs(t *testing.T) {
	t.Parallel()
	base := DefaultConfig()
	tests := []struct {
		name  string
		addrs []string
		user  string
		pass  string
		db    int
		tls   bool
		want  []string // the addresses given to go-redis
		bad   string   // a problem's text, "" for none
	}{
		{"host:port", []string{"10.0.0.1:6379"}, "", "", 0, false, []string{"10.0.0.1:6379"}, ""},
		{"password only", []string{"redis://:s3cret@redis.internal:6380/2"}, "", "s3cret", 2, false, []string{"redis.internal:6380"}, ""},
		{"user and TLS", []string{"rediss://app:s3cret@redis.internal"}, "app", "s3cret", 0, true, []string{"redis.internal:6379"}, ""},
		{"a cluster agreeing", []string{"redis://:s3cret@a:7000", "redis://:s3cret@b:7001"}, "", "s3cret", 0, false, []string{"a:7000", "b:7001"}, ""},
		{"a cluster disagreeing", []string{"redis://:s3cret@a:7000", "redis://:other@b:7001"}, "", "", 0, false, nil, "carries other credentials than addrs[0]"},
		{"a bad database", []string{"redis://a:7000/x"}, "", "", 0, false, nil, "the database must be a number"},
		{"a query", []string{"redis://a:7000?db=1"}, "", "", 0, false, nil, "want redis://"},
	}
	for _, tt := range tests {
		c := base
		c.Addrs = tt.addrs
		opts, err := c.options()
		if tt.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tt.bad) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "other@") {
				t.Errorf("%s: %v, want a problem with %q and no password", tt.name, err, tt.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if strings.Join(opts.Addrs, ",") != strings.Join(tt.want, ",") || opts.Username != tt.user || opts.Password != tt.pass ||
			opts.DB != tt.db || (opts.TLSConfig != nil) != tt.tls {
			t.Errorf("%s: addrs %v user %q db %d tls %t", tt.name, opts.Addrs, opts.Username, opts.DB, opts.TLSConfig != nil)
		}
	}
	// The password field and a URL's disagree: refused, nothing printed.
	c := base
	c.Password, c.Addrs = "one", []string{"redis://:two@a:7000"}
	if _, err := c.options(); err == nil || strings.Contains(err.Error(), "two") {
		t.Errorf("password and URL disagreeing: %v", err)
	}
}

func TestRedactAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:6379":            "127.0.0.1:6379",
		"/run/redis.sock":           "/run/redis.sock",
		"redis://:pw@h:1":           "redis://:xxxxx@h:1",
		"redis://user:pw@h:1/0":     "redis://user:xxxxx@h:1/0",
		"redis://pw@h:1":            "redis://xxxxx@h:1",
		"rediss://u:p%zz@h":         "xxxxx@h",
		"garbage:pw@host\x00:1@end": "xxxxx@end",
	} {
		if got := RedactAddr(in); got != want {
			t.Errorf("RedactAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
