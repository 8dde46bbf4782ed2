package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore"
)

func TestConfig_DefaultIsValid(t *testing.T) {
	t.Parallel()
	if err := redisstore.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
}

func TestConfig_ValidateListsEveryProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*redisstore.Config)
		want []string // lines of the error, in order
	}{
		{"no addrs", func(c *redisstore.Config) { c.Addrs = nil }, []string{"addrs: must list at least one address, got none"}},
		{"no port", func(c *redisstore.Config) { c.Addrs = []string{"localhost"} },
			[]string{`addrs[0]: want "host:port", a redis:// URL or a unix socket path, got "localhost"`}},
		{"bad port", func(c *redisstore.Config) { c.Addrs = []string{"a:1", "b:0"} },
			[]string{`addrs[1]: want "host:port", a redis:// URL or a unix socket path, got "b:0"`}},
		{"relative socket", func(c *redisstore.Config) { c.Addrs = []string{"unix:r.sock"} },
			[]string{`addrs[0]: want an absolute unix socket path, got "unix:r.sock"`}},
		{"socket in a cluster", func(c *redisstore.Config) { c.Addrs = []string{"/r.sock", "a:1"} },
			[]string{`addrs: a unix socket must be the only address, without master_name or tls, got ["/r.sock" "a:1"]`}},
		{"db in a cluster", func(c *redisstore.Config) { c.Addrs, c.DB = []string{"a:1", "b:2"}, 3 },
			[]string{"db: must be 0 with a Redis Cluster (several addrs), got 3"}},
		{"everything else", func(c *redisstore.Config) {
			c.DB, c.KeyPrefix, c.PoolSize = -1, "a{b}", -2
			c.DialTimeout, c.ReadTimeout, c.WriteTimeout = "5", "0s", "soon"
		}, []string{
			"db: must be >= 0, got -1",
			`key_prefix: must be non-empty, without braces or spaces (it goes inside the key's hash tag), got "a{b}"`,
			"pool_size: must be >= 0 (0: go-redis's default), got -2",
			`dial_timeout: want a duration with a unit such as "5s", got "5"`,
			`read_timeout: must be more than 0, got "0s"`,
			`write_timeout: want a duration such as "90s" or "2m", got "soon"`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redisstore.DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate: nil, want %q", tc.want)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Validate:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestConfig_ValidateDoesNotChangeTheConfig(t *testing.T) {
	t.Parallel()
	c := redisstore.DefaultConfig()
	c.Addrs = []string{"unix:///tmp/r.sock"}
	_ = c.Validate()
	if c.Addrs[0] != "unix:///tmp/r.sock" {
		t.Errorf("Validate rewrote addrs[0] to %q", c.Addrs[0])
	}
}

// TestNewClient_PicksTheKindOfClient: one address is a single server,
// several a cluster, master_name a Sentinel group.
func TestNewClient_PicksTheKindOfClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addrs  []string
		master string
		check  func(redis.UniversalClient) bool
	}{
		{[]string{"127.0.0.1:6379"}, "", func(c redis.UniversalClient) bool { _, ok := c.(*redis.Client); return ok }},
		{[]string{"a:1", "b:2", "c:3"}, "", func(c redis.UniversalClient) bool { _, ok := c.(*redis.ClusterClient); return ok }},
		{[]string{"a:26379", "b:26379"}, "mymaster", func(c redis.UniversalClient) bool { _, ok := c.(*redis.Client); return ok }},
	}
	for _, tc := range tests {
		cfg := redisstore.DefaultConfig()
		cfg.Addrs, cfg.MasterName = tc.addrs, tc.master
		c, err := redisstore.NewClient(cfg)
		if err != nil {
			t.Fatalf("NewClient(%v, %q): %v", tc.addrs, tc.master, err)
		}
		if !tc.check(c) {
			t.Errorf("NewClient(%v, %q) made a %T", tc.addrs, tc.master, c)
		}
		_ = c.Close()
	}
	cfg := redisstore.DefaultConfig()
	cfg.Addrs = nil
	if _, err := redisstore.NewClient(cfg); err == nil || !strings.HasPrefix(err.Error(), "store.redis: addrs: ") {
		t.Errorf("NewClient of an invalid config: %v", err)
	}
}

// TestNewClient_UnixSocket: every spelling of a socket reaches the server.
func TestNewClient_UnixSocket(t *testing.T) {
	srv := shared(t)
	for _, addr := range []string{srv.Addr(), "unix:" + srv.Addr(), "unix://" + srv.Addr()} {
		cfg := redisstore.DefaultConfig()
		cfg.Addrs = []string{addr}
		c, err := redisstore.NewClient(cfg)
		if err != nil {
			t.Fatalf("NewClient(%q): %v", addr, err)
		}
		if err := c.Ping(context.Background()).Err(); err != nil {
			t.Errorf("PING through %q: %v", addr, err)
		}
		_ = c.Close()
	}
}
