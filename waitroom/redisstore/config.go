package redisstore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// Config is the store.redis section: how to reach Redis.
type Config struct {
	// Addrs: one address for a single server, several for a Redis Cluster
	// (any of its nodes), or the Sentinels when MasterName is set. An
	// address is "host:port", a URL "redis://[user:password@]host[:port][/db]"
	// ("rediss://" for TLS), as managed Redis services hand them out, or a
	// unix socket path starting with "/" or "unix:". Credentials and a
	// database in URLs fill Username, Password and DB, and must agree with
	// them and with each other. Wherever an address is printed, its
	// password is redacted (RedactAddr). Default ["127.0.0.1:6379"].
	Addrs []string `mapstructure:"addrs" yaml:"addrs" json:"addrs"`
	// MasterName is the Sentinel master's name; empty: no Sentinel.
	MasterName string `mapstructure:"master_name" yaml:"master_name" json:"master_name"`
	// Username and Password authenticate (ACL user, or password alone with
	// requirepass). Default: none.
	Username string `mapstructure:"username" yaml:"username" json:"username"`
	Password string `mapstructure:"password" yaml:"password" json:"password"`
	// PasswordFile names a file holding the password (a mounted secret),
	// instead of Password; the loader reads it. Default "".
	PasswordFile string `mapstructure:"password_file" yaml:"password_file" json:"password_file"`
	// DB is the database number; must be 0 for a cluster. Default 0.
	DB int `mapstructure:"db" yaml:"db" json:"db"`
	// TLS connects with TLS 1.2 or later, verifying the server's
	// certificate against the system roots. Default false.
	TLS bool `mapstructure:"tls" yaml:"tls" json:"tls"`
	// KeyPrefix starts every key: room R lives in "{<key_prefix>:R}:…".
	// Default "wr".
	KeyPrefix string `mapstructure:"key_prefix" yaml:"key_prefix" json:"key_prefix"`
	// PoolSize is the number of connections per node; 0 (default) leaves
	// go-redis's default, 10 per CPU.
	PoolSize int `mapstructure:"pool_size" yaml:"pool_size" json:"pool_size"`
	// DialTimeout, ReadTimeout and WriteTimeout bound each attempt to
	// connect, read a reply or send a command. They are short (default
	// "1s", "500ms", "500ms") because every visitor's request waits on the
	// store: a slow Redis must turn into the on_error answer, not a hang. A
	// call makes at most two attempts.
	DialTimeout  string `mapstructure:"dial_timeout" yaml:"dial_timeout" json:"dial_timeout"`
	ReadTimeout  string `mapstructure:"read_timeout" yaml:"read_timeout" json:"read_timeout"`
	WriteTimeout string `mapstructure:"write_timeout" yaml:"write_timeout" json:"write_timeout"`
	// RequireNoEviction refuses to start on a Redis whose maxmemory-policy
	// may evict keys: an evicted line loses places silently. Default false:
	// such a Redis is a loud warning at start and in /readyz.
	RequireNoEviction bool `mapstructure:"require_noeviction" yaml:"require_noeviction" json:"require_noeviction"`
	// WaitReplicas is how many replicas must hold a write tickets cannot
	// rebuild (an admission batch, a release, an override, a room put or
	// deleted through the API) before the call returns: WAIT on the
	// write's connection, asking for at most the replicas the master has
	// connected (read with ROLE every few seconds), so a Redis without
	// replicas never waits. 0: no WAIT. Default 1 (see durable.go).
	WaitReplicas int `mapstructure:"wait_replicas" yaml:"wait_replicas" json:"wait_replicas"`
	// WaitTimeout bounds that WAIT; when it runs out with fewer replicas
	// the write stands, and the shortfall is counted and logged. At most
	// half of read_timeout. Default "50ms".
	WaitTimeout string `mapstructure:"wait_timeout" yaml:"wait_timeout" json:"wait_timeout"`
}

// DefaultConfig is a local Redis with short timeouts.
func DefaultConfig() Config {
	return Config{
		Addrs:       []string{"127.0.0.1:6379"},
		KeyPrefix:   DefaultKeyPrefix,
		DialTimeout: "1s", ReadTimeout: "500ms", WriteTimeout: "500ms",
		WaitReplicas: DefaultWaitReplicas, WaitTimeout: DefaultWaitTimeout,
	}
}

// Validate reports every problem, each as "key: rule, got value" with keys
// relative to the section. It changes nothing.
func (c Config) Validate() error {
	_, err := c.options()
	var p conf.Problems
	c.waitSettings(&p)
	return errors.Join(err, p.Err())
}

// NewClient connects as the config says: one address is a single server,
// several a cluster, and master_name makes them Sentinels. The caller owns
// the client.
//
// The client never sends a script twice for one call (onceHook, retry.go),
// and a Cluster client reloads its slot map when a node stops answering,
// so a promoted replica is used within moments (topologyHook, topology.go).
func NewClient(c Config) (redis.UniversalClient, error) {
	opts, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("store.redis: %w", err)
	}
	client := redis.NewUniversalClient(opts)
	// The first hook added is the outermost: onceHook's resend comes after
	// the topology hook has asked for a new slot map, so it may already go
	// to the promoted replica.
	client.AddHook(onceHook{})
	if cc, ok := client.(*redis.ClusterClient); ok {
		cc.AddHook(newTopologyHook(cc))
	}
	return client, nil
}

// options checks the config and turns it into go-redis options.
func (c Config) options() (*redis.UniversalOptions, error) {
	var p conf.Problems
	c, bad := c.fromURLs(&p)
	addrs, sockets := c.addrs(&p, bad)
	if sockets > 0 && (len(addrs) > 1 || c.MasterName != "" || c.TLS) {
		p.Add("addrs", "a unix socket must be the only address, without master_name or tls, got %q", RedactAddrs(c.Addrs))
	}
	if c.DB < 0 {
		p.Add("db", "must be >= 0, got %d", c.DB)
	} else if c.DB != 0 && len(addrs) > 1 && c.MasterName == "" {
		p.Add("db", "must be 0 with a Redis Cluster (several addrs), got %d", c.DB)
	}
	if c.KeyPrefix == "" || strings.ContainsAny(c.KeyPrefix, "{} \t\r\n") {
		p.Add("key_prefix", "must be non-empty, without braces or spaces (it goes inside the key's hash tag), got %q", c.KeyPrefix)
	}
	if c.PoolSize < 0 {
		p.Add("pool_size", "must be >= 0 (0: go-redis's default), got %d", c.PoolSize)
	}
	dial := p.Duration("dial_timeout", c.DialTimeout, time.Nanosecond)
	read := p.Duration("read_timeout", c.ReadTimeout, time.Nanosecond)
	write := p.Duration("write_timeout", c.WriteTimeout, time.Nanosecond)
	if err := p.Err(); err != nil {
		return nil, err
	}
	opts := &redis.UniversalOptions{
		Addrs: addrs, MasterName: c.MasterName, Username: c.Username, Password: c.Password, DB: c.DB,
		PoolSize:    c.PoolSize,
		DialTimeout: dial, ReadTimeout: read, WriteTimeout: write,
		// Honour the request's deadline too.
		ContextTimeoutEnabled: true,
		// One retry (a pooled connection may have died with a restarted
		// Redis) and one dial per attempt: the defaults (3 retries of 5
		// dials) would hold a visitor for many timeouts. Scripts are never
		// resent once they may have run, whatever this says (onceHook).
		MaxRetries: 1, DialerRetries: 1,
	}
	if c.TLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return opts, nil
}

// addrs checks the addresses and returns them as go-redis takes them (a
// socket as its path), with the number of unix sockets among them.
func (c Config) addrs(p *conf.Problems, reported map[int]bool) ([]string, int) {
	if len(c.Addrs) == 0 {
		p.Add("addrs", "must list at least one address, got none")
	}
	out := make([]string, 0, len(c.Addrs))
	sockets := 0
	for i, a := range c.Addrs {
		key := fmt.Sprintf("addrs[%d]", i)
		if path, ok := socketPath(a); ok {
			sockets++
			if path == "" || !strings.HasPrefix(path, "/") {
				p.Add(key, "want an absolute unix socket path, got %q", RedactAddr(a))
			}
			out = append(out, path)
			continue
		}
		host, port, err := net.SplitHostPort(a)
		if reported[i] {
			out = append(out, a)
			continue
		}
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			p.Add(key, `want "host:port", a redis:// URL or a unix socket path, got %q`, RedactAddr(a))
		}
		out = append(out, a)
	}
	return out, sockets
}

// socketPath recognises "/path", "unix:/path" and "unix:///path".
func socketPath(addr string) (string, bool) {
	if strings.HasPrefix(addr, "/") {
		return addr, true
	}
	rest, ok := strings.CutPrefix(addr, "unix:")
	if !ok {
		return "", false
	}
	if strings.HasPrefix(rest, "//") {
		rest = strings.TrimPrefix(rest, "//")
	}
	return rest, true
}

// fromURLs turns redis:// and rediss:// addresses into host:port, moving
// their credentials, database and TLS into the config, and records where
// they disagree. It returns the indexes of the addresses it reported.
func (c Config) fromURLs(p *conf.Problems) (Config, map[int]bool) {
	addrs := make([]string, len(c.Addrs))
	bad := map[int]bool{}
	var from string // the first URL that set the credentials
	for i, a := range c.Addrs {
		addrs[i] = a
		scheme, _, ok := strings.Cut(a, "://")
		if !ok || (scheme != "redis" && scheme != "rediss") {
			continue
		}
		key := fmt.Sprintf("addrs[%d]", i)
		u, err := url.Parse(a)
		if err != nil || u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" {
			p.Add(key, "want redis://[user:password@]host[:port][/db], got %q", RedactAddr(a))
			bad[i] = true
			continue
		}
		port := u.Port()
		if port == "" {
			port = "6379"
		}
		addrs[i] = net.JoinHostPort(u.Hostname(), port)
		if scheme == "rediss" {
			c.TLS = true
		}
		if db := strings.Trim(u.Path, "/"); db != "" {
			n, err := strconv.Atoi(db)
			switch {
			case err != nil || n < 0:
				p.Add(key, "the database must be a number, got %q", RedactAddr(a))
			case c.DB != 0 && c.DB != n:
				p.Add(key, "names database %d but db is %d", n, c.DB)
			default:
				c.DB = n
			}
		}
		if u.User == nil {
			continue
		}
		user, pass := u.User.Username(), ""
		if pw, set := u.User.Password(); set {
			pass = pw
		}
		if (c.Username != "" && c.Username != user) || (c.Password != "" && c.Password != pass) {
			other := "username and password"
			if from != "" {
				other = from
			}
			p.Add(key, "carries other credentials than %s, got %q", other, RedactAddr(a))
			continue
		}
		c.Username, c.Password = user, pass
		if from == "" {
			from = key
		}
	}
	c.Addrs = addrs
	return c, bad
}

// RedactAddr hides the password of a redis:// address, for logs and for
// `waitroom check`; other addresses carry none and come back as they are.
func RedactAddr(a string) string {
	if !strings.Contains(a, "@") {
		return a
	}
	if u, err := url.Parse(a); err == nil && u.User != nil {
		if _, set := u.User.Password(); !set {
			// "redis://secret@host": a lone user part is often the password.
			u.User = url.User("xxxxx")
		}
		return u.Redacted()
	}
	// Unparseable but holding an "@": keep only what follows it.
	return "xxxxx@" + a[strings.LastIndex(a, "@")+1:]
}

// RedactAddrs is RedactAddr over a list.
func RedactAddrs(as []string) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = RedactAddr(a)
	}
	return out
}
