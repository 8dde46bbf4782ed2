package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"time"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/web"
)

// Config is the whole configuration file. Each section is owned by the
// package that uses it; this file only composes them.
type Config struct {
	// Listen is the visitor listener's address. Default ":8080".
	Listen    string                          `mapstructure:"listen" yaml:"listen" json:"listen"`
	Server    ServerConfig                    `mapstructure:"server" yaml:"server" json:"server"`
	Admin     AdminConfig                     `mapstructure:"admin" yaml:"admin" json:"admin"`
	Log       LogConfig                       `mapstructure:"log" yaml:"log" json:"log"`
	Store     StoreConfig                     `mapstructure:"store" yaml:"store" json:"store"`
	Cookie    waitroom.CookieConfig           `mapstructure:"cookie" yaml:"cookie" json:"cookie"`
	Upstreams map[string]proxy.UpstreamConfig `mapstructure:"upstreams" yaml:"upstreams" json:"upstreams"`
	Rooms     map[string]RoomConfig           `mapstructure:"rooms" yaml:"rooms" json:"rooms"`
	Routes    []proxy.RouteConfig             `mapstructure:"routes" yaml:"routes" json:"routes"`
	Bypass    proxy.BypassConfig              `mapstructure:"bypass" yaml:"bypass" json:"bypass"`
}

// RoomConfig is one room: the admission settings and its page.
type RoomConfig struct {
	waitroom.RoomConfig `mapstructure:",squash" yaml:",inline"`
	Page                web.PageConfig `mapstructure:"page" yaml:"page" json:"page"`
}

// ServerConfig tunes the visitor listener.
type ServerConfig struct {
	// ReadHeaderTimeout bounds a slow client's headers. Default "10s".
	ReadHeaderTimeout string `mapstructure:"read_header_timeout" yaml:"read_header_timeout" json:"read_header_timeout"`
	// IdleTimeout closes idle keep-alive connections. Default "120s".
	IdleTimeout string `mapstructure:"idle_timeout" yaml:"idle_timeout" json:"idle_timeout"`
	// MaxHeaderBytes bounds request headers; larger gets 431. Default 65536.
	MaxHeaderBytes int `mapstructure:"max_header_bytes" yaml:"max_header_bytes" json:"max_header_bytes"`
	// ShutdownTimeout is how long SIGTERM waits for in-flight requests. Default "30s".
	ShutdownTimeout string `mapstructure:"shutdown_timeout" yaml:"shutdown_timeout" json:"shutdown_timeout"`
	// TrustedProxies are the CIDRs whose X-Forwarded-* headers are kept. Default none.
	TrustedProxies []string `mapstructure:"trusted_proxies" yaml:"trusted_proxies" json:"trusted_proxies"`
}

// AdminConfig is the operators' listener: JSON API, dashboard, metrics,
// health.
type AdminConfig struct {
	// Listen is its address. Default "127.0.0.1:9090"; "" turns it off.
	Listen string `mapstructure:"listen" yaml:"listen" json:"listen"`
	// Token is the bearer token for the API, the dashboard's calls and
	// /metrics (use ${ENV}); required unless Listen is a loopback address.
	Token string `mapstructure:"token" yaml:"token" json:"token"`
}

// minAdminToken is the shortest bearer token accepted: guessing must not pay.
const minAdminToken = 16

func (c AdminConfig) validate() error {
	if c.Listen == "" {
		return nil
	}
	var errs []error
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf(`listen: want host:port such as "127.0.0.1:9090", or "" for off, got %q`, c.Listen)
	}
	switch {
	case c.Token != "" && len(c.Token) < minAdminToken:
		errs = append(errs, fmt.Errorf("token: must be at least %d characters (openssl rand -hex 24)", minAdminToken))
	case c.Token == "" && !isLoopback(host):
		errs = append(errs, fmt.Errorf("token: required when listen is not a loopback address, got listen %q", c.Listen))
	}
	return errors.Join(errs...)
}

// isLoopback reports whether a listen host reaches only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// LogConfig sets up zap.
type LogConfig struct {
	// Level is "debug", "info" (default), "warn" or "error".
	Level string `mapstructure:"level" yaml:"level" json:"level"`
	// Format is "json" (default) or "console".
	Format string `mapstructure:"format" yaml:"format" json:"format"`
}

// StoreConfig picks where lines are kept.
type StoreConfig struct {
	// Kind is "memory" (default: one instance, lines kept in process) or
	// "redis" (any number of instances share the lines in Redis).
	Kind string `mapstructure:"kind" yaml:"kind" json:"kind"`
	// OnError is what happens while the store cannot be reached: "closed"
	// (default) lets only admitted visitors through, "open" lets everyone.
	OnError string `mapstructure:"on_error" yaml:"on_error" json:"on_error"`
	// SessionCache is how long an instance trusts that a visitor the store
	// found inside is still inside, answering that visitor's next requests
	// without a store call. A release or an expiry decided on another
	// instance takes effect here within it; one decided here, at once.
	// Default "1s"; "0s" asks the store on every request; at most "1m".
	SessionCache string `mapstructure:"session_cache" yaml:"session_cache" json:"session_cache"`
	// Redis is used when Kind is "redis".
	Redis redisstore.Config `mapstructure:"redis" yaml:"redis" json:"redis"`
}

// DefaultConfig is the configuration every file starts from.
func DefaultConfig() Config {
	return Config{
		Listen: ":8080",
		Server: ServerConfig{
			ReadHeaderTimeout: "10s", IdleTimeout: "120s", MaxHeaderBytes: 64 << 10,
			ShutdownTimeout: "30s", TrustedProxies: []string{},
		},
		Admin:  AdminConfig{Listen: "127.0.0.1:9090"},
		Log:    LogConfig{Level: "info", Format: "json"},
		Store:  StoreConfig{Kind: "memory", OnError: string(waitroom.OnErrorClosed), SessionCache: "1s", Redis: redisstore.DefaultConfig()},
		Cookie: waitroom.DefaultCookie(),
		Bypass: proxy.DefaultBypass(),
	}
}

// DefaultRoomConfig is what every room starts from.
func DefaultRoomConfig() RoomConfig {
	return RoomConfig{RoomConfig: waitroom.DefaultRoom(), Page: web.DefaultPage()}
}

func defaultUpstream() proxy.UpstreamConfig { return proxy.DefaultUpstream() }

// Validate returns every problem as "key.path: message", sorted by the caller.
func (c *Config) Validate() []string {
	var p []string
	add := func(prefix string, err error) { p = append(p, prefixed(prefix, err)...) }
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p = append(p, fmt.Sprintf("listen: want host:port such as \":8080\", got %q", c.Listen))
	}
	add("server.", c.Server.validate())
	add("admin.", c.Admin.validate())
	add("log.", c.Log.validate())
	add("store.", c.Store.validate())
	add("cookie.", c.Cookie.Validate())
	if c.Store.Kind == "redis" && len(c.Cookie.HashKeys) == 0 {
		// Random keys differ per instance: a ticket from one would be
		// "tampered" at the next, and every visitor would lose the place.
		p = append(p, "cookie.hash_keys: required with store.kind redis, so that every instance reads every ticket (openssl rand -base64 32)")
	}
	if len(c.Upstreams) == 0 {
		p = append(p, "upstreams: at least one upstream is needed")
	}
	for _, name := range sortedKeys(c.Upstreams) {
		add("upstreams."+name+".", c.Upstreams[name].Validate())
	}
	for _, name := range sortedKeys(c.Rooms) {
		add("rooms."+name+".", c.Rooms[name].validate())
	}
	if len(c.Routes) == 0 {
		p = append(p, "routes: at least one route is needed")
	}
	add("", proxy.ValidateRoutes(c.Routes, keySet(c.Upstreams), keySet(c.Rooms)))
	add("bypass.", c.Bypass.Validate())
	return p
}

func (r RoomConfig) validate() error {
	room, err := r.RoomConfig.Build("")
	errs := []error{err}
	if perr := r.Page.Validate(); perr != nil {
		errs = append(errs, withPrefix("page.", perr))
	}
	// A visitor far back polls every page.refresh_max; dropping it sooner
	// than two missed polls would drop people still watching their page.
	if longest, perr := waitroom.ParseDuration(r.Page.RefreshMax); perr == nil && err == nil && room.Limits.AbandonAfter < 2*longest {
		errs = append(errs, fmt.Errorf("abandon_after: must be at least twice page.refresh_max (%s), got %q", r.Page.RefreshMax, r.AbandonAfter))
	}
	return errors.Join(errs...)
}

func (s ServerConfig) validate() error {
	var errs []error
	for key, raw := range map[string]string{"read_header_timeout": s.ReadHeaderTimeout, "idle_timeout": s.IdleTimeout, "shutdown_timeout": s.ShutdownTimeout} {
		if d, err := waitroom.ParseDuration(raw); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		} else if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be more than 0, got %q", key, raw))
		}
	}
	if s.MaxHeaderBytes < 4096 || s.MaxHeaderBytes > 1<<20 {
		errs = append(errs, fmt.Errorf("max_header_bytes: must be from 4096 to 1048576, got %d", s.MaxHeaderBytes))
	}
	for i, c := range s.TrustedProxies {
		if _, err := proxy.ParsePrefix(c); err != nil {
			errs = append(errs, fmt.Errorf("trusted_proxies[%d]: want a CIDR such as \"10.0.0.0/8\" or an IP, got %q", i, c))
		}
	}
	return errors.Join(errs...)
}

func (l LogConfig) validate() error {
	var errs []error
	switch l.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf(`level: must be "debug", "info", "warn" or "error", got %q`, l.Level))
	}
	if l.Format != "json" && l.Format != "console" {
		errs = append(errs, fmt.Errorf(`format: must be "json" or "console", got %q`, l.Format))
	}
	return errors.Join(errs...)
}

// maxSessionCache bounds how stale an instance's view of a session may be:
// past a minute, a release would no longer feel like one.
const maxSessionCache = time.Minute

func (s StoreConfig) validate() error {
	var errs []error
	switch s.Kind {
	case "memory":
	case "redis":
		errs = append(errs, withPrefix("redis.", s.Redis.Validate()))
	default:
		errs = append(errs, fmt.Errorf(`kind: must be "memory" or "redis", got %q`, s.Kind))
	}
	if s.OnError != string(waitroom.OnErrorClosed) && s.OnError != string(waitroom.OnErrorOpen) {
		errs = append(errs, fmt.Errorf(`on_error: must be "closed" or "open", got %q`, s.OnError))
	}
	if d, err := waitroom.ParseDuration(s.SessionCache); err != nil {
		errs = append(errs, fmt.Errorf("session_cache: %w", err))
	} else if d < 0 || d > maxSessionCache {
		errs = append(errs, fmt.Errorf("session_cache: must be from 0s to %s, got %q", maxSessionCache, s.SessionCache))
	}
	return errors.Join(errs...)
}

// mustDuration is for values Validate has already checked.
func mustDuration(s string) time.Duration {
	d, err := waitroom.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("duration %q passed validation: %v", s, err))
	}
	return d
}

// prefixed flattens a (joined) error into lines, each with the key prefix.
func prefixed(prefix string, err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, prefixed(prefix, e)...)
		}
		return out
	}
	return []string{prefix + err.Error()}
}

// withPrefix is prefixed for callers that return an error.
func withPrefix(prefix string, err error) error {
	var errs []error
	for _, line := range prefixed(prefix, err) {
		errs = append(errs, errors.New(line))
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func keySet[V any](m map[string]V) map[string]bool {
	s := make(map[string]bool, len(m))
	for k := range m {
		s[k] = true
	}
	return s
}
