package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/door"
	"github.com/waitroom/waitroom/waitroom/pass"
	"github.com/waitroom/waitroom/waitroom/webhook"
	"github.com/waitroom/waitroom/web"
)

// Settings is a configuration as loadConfig returns it: the values the file
// gave, defaults applied (the embedded Config: what `check` prints and what
// a reload compares), and everything they build, built once here, so that
// what was checked is what runs.
type Settings struct {
	*Config
	file []byte // the file's bytes, to tell a changed file from the same one

	server       serverSettings
	tls          tlsSettings
	signer       *pass.Signer // nil without pass.key_files
	webhooks     []webhook.Endpoint
	delivery     webhook.Delivery
	cookie       waitroom.Cookie
	keys         []waitroom.KeyPair // nil when none are configured
	rooms        []waitroom.Room    // in name order
	pages        map[string]web.Page
	sessionCache time.Duration
	onOutage     waitroom.OutagePolicy
	openAfter    time.Duration
	// failover is the shortest open_after that holds a failover, and
	// where it comes from (openafter.go).
	failover failoverFigure
	// warnings are allowed but risky settings, said at start and by
	// `waitroom check`.
	warnings []string
	trusted  []netip.Prefix
	// forwarders are the peers whose forwarding headers are believed:
	// trusted, or none with proxy_protocol, where the PROXY header names
	// the client (for LOCAL and UNKNOWN, the balancer itself).
	forwarders []netip.Prefix
	networks   waitroom.Networks
	bypass     *proxy.Bypass
	router     *proxy.Router
	upstreams  map[string]proxy.UpstreamSettings
	// demo: the demo's own configuration, on loopback with no admin token
	// and random ticket keys on purpose; what would be a WARN for an
	// operator is said once, at info level.
	demo bool
}

// serverSettings is the server section, built.
type serverSettings struct {
	readHeader, idle, shutdown time.Duration
	delay                      time.Duration // server.shutdown_delay
	deadlines                  proxy.Deadlines
}

// minAdminToken is the shortest bearer token accepted: guessing must not pay.
const minAdminToken = 16

// maxSessionCache bounds how stale an instance's view of a session may be:
// past a minute, a release would no longer feel like one.
const maxSessionCache = time.Minute

// build builds every section of c once and returns the result, or every
// problem joined (conf.Split recovers them typed; each reads "key.path:
// message", sorted by the caller).
func build(c *Config) (*Settings, error) {
	s := &Settings{Config: c}
	var p conf.Problems
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p.Add("listen", `want host:port such as ":8080", got %q`, c.Listen)
	}
	s.server, s.trusted = c.Server.build(&p)
	if !c.Server.ProxyProtocol {
		s.forwarders = s.trusted
	}
	s.tls = c.TLS.build(&p)
	signer, perr := c.Pass.Build()
	p.Nest("pass.", perr)
	s.signer = signer
	hooks, herr := webhook.BuildEndpoints(c.Webhooks)
	p.Nest("webhooks", herr)
	s.webhooks = hooks
	s.delivery, herr = c.WebhookDelivery.Build()
	p.Nest("webhook_delivery.", herr)
	s.networks = waitroom.Networks{IPv4: c.Server.ClientNetworkV4, IPv6: c.Server.ClientNetworkV6,
		Shared: sharedNetworks(c.Server.SharedNetworks, &p)}
	c.Admin.check(&p)
	c.Log.check(&p)
	s.sessionCache, s.onOutage, s.openAfter = c.Store.build(&p)
	// The failover floor until the deployment is asked (NewApp and
	// `waitroom check` do: learnFailover), which only they may do: a
	// build does no I/O.
	s.useFailover(staticFailover(c.Store))
	var err error
	s.cookie, s.keys, err = c.Cookie.Build()
	p.Nest("cookie.", err)
	if c.Store.Kind == "redis" && len(c.Cookie.HashKeys) == 0 {
		// Random keys differ per instance: a ticket from one would be
		// "tampered" at the next, and every visitor would lose the place.
		p.Add("cookie.hash_keys", "required with store.kind redis, so that every instance reads every ticket (openssl rand -base64 32)")
	}
	if len(c.Upstreams) == 0 {
		p.Add("upstreams", "at least one upstream is needed")
	}
	s.upstreams = make(map[string]proxy.UpstreamSettings, len(c.Upstreams))
	for _, name := range sortedKeys(c.Upstreams) {
		up, err := c.Upstreams[name].Build()
		p.Nest("upstreams."+name+".", err)
		s.upstreams[name] = up
	}
	s.pages = make(map[string]web.Page, len(c.Rooms))
	for _, name := range sortedKeys(c.Rooms) {
		rc := c.Rooms[name]
		room, page, err := door.BuildRoom(name, rc.RoomConfig, rc.Page)
		p.Nest("rooms."+name+".", err)
		s.rooms = append(s.rooms, room)
		s.pages[name] = page
		if w := roomBound(&p, c.Store.Kind, name, rc.ExpectedWaiting, page.RefreshMax); err == nil && w != "" {
			s.warnings = append(s.warnings, w)
		}
		if ap := room.Autopilot; err == nil && ap != nil && ap.Interval < room.Tick {
			// A step is judged at the first tick past it: the limit moves
			// once a tick, not once an interval. Allowed (the tests run
			// short steps), but not what the key says.
			s.warnings = append(s.warnings, fmt.Sprintf("rooms.%s.autopilot.interval (%s) is shorter than the room's tick (%s): the limit moves at most once a tick",
				name, conf.Short(ap.Interval), conf.Short(room.Tick)))
		}
	}
	s.router = buildRoutes(&p, c, s.upstreams)
	s.bypass, err = c.Bypass.Build()
	p.Nest("bypass.", err)
	if p.Len() > 0 {
		return nil, p.Err()
	}
	return s, nil
}

// buildRoutes applies the route path default ("/": every path) and builds
// the router, or records why not.
func buildRoutes(p *conf.Problems, c *Config, upstreams map[string]proxy.UpstreamSettings) *proxy.Router {
	if len(c.Routes) == 0 {
		p.Add("routes", "at least one route is needed")
	}
	for i := range c.Routes {
		if c.Routes[i].Path == "" {
			c.Routes[i].Path = "/"
		}
	}
	origins := make(map[string]string, len(upstreams))
	for name, up := range upstreams {
		origins[name] = up.Origin()
	}
	rt, err := proxy.BuildRouter(c.Routes, origins, keySet(c.Rooms))
	p.Nest("", err)
	return rt
}

func (s ServerConfig) build(p *conf.Problems) (serverSettings, []netip.Prefix) {
	out := serverSettings{
		readHeader: p.Duration("server.read_header_timeout", s.ReadHeaderTimeout, time.Nanosecond),
		idle:       p.Duration("server.idle_timeout", s.IdleTimeout, time.Nanosecond),
		shutdown:   p.Duration("server.shutdown_timeout", s.ShutdownTimeout, time.Nanosecond),
		delay:      p.Duration("server.shutdown_delay", s.ShutdownDelay, 0),
	}
	out.deadlines = proxy.Deadlines{
		Read:  p.Duration("server.read_timeout", s.ReadTimeout, time.Nanosecond),
		Write: p.Duration("server.write_timeout", s.WriteTimeout, time.Nanosecond),
		Idle:  out.idle,
	}
	if s.MaxConnsPerClient < 0 {
		p.Add("server.max_conns_per_client", "must be >= 0 (0: no cap), got %d", s.MaxConnsPerClient)
	}
	if s.MaxHeaderBytes < 4096 || s.MaxHeaderBytes > 1<<20 {
		p.Add("server.max_header_bytes", "must be from 4096 to 1048576, got %d", s.MaxHeaderBytes)
	}
	if s.ClientNetworkV4 < 8 || s.ClientNetworkV4 > 32 {
		p.Add("server.client_network_v4", "must be from 8 to 32, got %d", s.ClientNetworkV4)
	}
	if s.ClientNetworkV6 < 32 || s.ClientNetworkV6 > 128 {
		p.Add("server.client_network_v6", "must be from 32 to 128, got %d", s.ClientNetworkV6)
	}
	if s.ProxyProtocol && len(s.TrustedProxies) == 0 {
		p.Add("server.proxy_protocol", "needs server.trusted_proxies (the balancers that send the header), got none")
	}
	var trusted []netip.Prefix
	for i, c := range s.TrustedProxies {
		pfx, err := proxy.ParsePrefix(c)
		if err != nil {
			p.Add(fmt.Sprintf("server.trusted_proxies[%d]", i), "want a CIDR such as \"10.0.0.0/8\" or an IP, got %q", c)
		}
		trusted = append(trusted, pfx)
	}
	return out, trusted
}

// maxSharedNetworks bounds server.shared_networks: each is looked up for
// every newcomer.
const maxSharedNetworks = 1000

// sharedNetworks reads server.shared_networks: CIDRs, /8 or narrower for
// IPv4 and /16 for IPv6 (a wider one would make a country its own
// addresses), written as networks (no host bits), so a typo does not
// silently cover another range.
func sharedNetworks(cidrs []string, p *conf.Problems) []netip.Prefix {
	if len(cidrs) > maxSharedNetworks {
		p.Add("server.shared_networks", "at most %d ranges, got %d", maxSharedNetworks, len(cidrs))
		return nil
	}
	var out []netip.Prefix
	for i, c := range cidrs {
		key := fmt.Sprintf("server.shared_networks[%d]", i)
		pfx, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			p.Add(key, "want a CIDR such as \"100.64.0.0/10\" or \"2001:db8::/32\", got %q", c)
			continue
		}
		if a := pfx.Addr(); a.Is4In6() && pfx.Bits() >= 96 {
			pfx = netip.PrefixFrom(a.Unmap(), pfx.Bits()-96)
		}
		widest := 16
		if pfx.Addr().Is4() {
			widest = 8
		}
		switch {
		case pfx.Addr().Zone() != "":
			p.Add(key, "want a CIDR without a zone, got %q", c)
		case pfx.Bits() < widest:
			p.Add(key, "must be /%d or narrower (a carrier's or a campus's range), got %q", widest, c)
		case pfx.Masked() != pfx:
			p.Add(key, "has host bits set: want %q, got %q", pfx.Masked().String(), c)
		default:
			out = append(out, pfx)
		}
	}
	return out
}

func (c AdminConfig) check(p *conf.Problems) {
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			p.Add("admin.public_url", `want the gateway's address such as "https://tickets.example.com" (scheme and host, no path), got %q`, c.PublicURL)
		}
	}
	if c.Listen == "" {
		return
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		p.Add("admin.listen", `want host:port such as "127.0.0.1:9090", or "" for off, got %q`, c.Listen)
		return
	}
	switch {
	case c.Token != "" && len(c.Token) < minAdminToken:
		p.Add("admin.token", "must be at least %d characters (openssl rand -hex 24)", minAdminToken)
	case c.Token == "" && !isLoopback(host):
		p.Add("admin.token", "required when listen is not a loopback address, got listen %q", c.Listen)
	}
	switch {
	case c.ReleaseToken == "":
	case len(c.ReleaseToken) < minAdminToken:
		p.Add("admin.release_token", "must be at least %d characters (openssl rand -hex 24)", minAdminToken)
	case c.ReleaseToken == c.Token:
		p.Add("admin.release_token", "must differ from admin.token: it is the site's, and the site must not hold the token that deletes rooms")
	case c.Token == "":
		p.Add("admin.release_token", "needs admin.token: without it the whole API is open and a scoped token scopes nothing")
	}
}

// isLoopback reports whether a listen host reaches only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func (l LogConfig) check(p *conf.Problems) {
	switch l.Level {
	case "debug", "info", "warn", "error":
	default:
		p.Add("log.level", `must be "debug", "info", "warn" or "error", got %q`, l.Level)
	}
	if l.Format != "json" && l.Format != "console" {
		p.Add("log.format", `must be "json" or "console", got %q`, l.Format)
	}
	l.Access.check(p)
}

func (s StoreConfig) build(p *conf.Problems) (time.Duration, waitroom.OutagePolicy, time.Duration) {
	switch s.Kind {
	case "memory":
	case "redis":
		p.Nest("store.redis.", s.Redis.Validate())
	default:
		p.Add("store.kind", `must be "memory" or "redis", got %q`, s.Kind)
	}
	policy := waitroom.OutagePolicy(s.OnError)
	if policy != waitroom.OutageClosed && policy != waitroom.OutageOpen {
		p.Add("store.on_error", `must be "closed" or "open", got %q`, s.OnError)
	}
	d, err := conf.ParseDuration(s.SessionCache)
	switch {
	case err != nil:
		p.Add("store.session_cache", "%v", err)
	case d > maxSessionCache:
		p.Add("store.session_cache", "must be from 0s to %s, got %q", conf.Short(maxSessionCache), s.SessionCache)
	}
	return d, policy, s.openAfter(p)
}

// Defaults of store.open_after: on one Redis server an outage is a restart
// or a network blip; with Sentinel or a Cluster it may be a failover,
// which on_error: open must hold rather than open (see failoverOpenAfter).
const (
	defaultOpenAfter  = 2 * time.Second
	failoverOpenAfter = 10 * time.Second
)

// failoverOpenAfter is the floor of open_after with Sentinel or a Cluster:
// the recommended settings' failover (docs/reliability.md: Sentinel
// down-after-milliseconds 5000, Cluster cluster-node-timeout 5000) plus
// failoverMargin. A deployment that says it detects a dead master later
// (Redis's own defaults: down-after 30 s, cluster-node-timeout 15 s)
// raises the default past it: learnFailover, at start.

// replicated reports whether the store is a Sentinel group or a Cluster,
// where a failover is part of normal life.
func (s StoreConfig) replicated() bool {
	return s.Kind == "redis" && (s.Redis.MasterName != "" || len(s.Redis.Addrs) > 1)
}

// openAfter is store.open_after, or its default when empty: 2s, or
// failoverOpenAfter with Sentinel or a Cluster (until useFailover puts
// the deployment's own figure in).
func (s StoreConfig) openAfter(p *conf.Problems) time.Duration {
	if s.OpenAfter == "" {
		if s.replicated() {
			return failoverOpenAfter
		}
		return defaultOpenAfter
	}
	return p.Duration("store.open_after", s.OpenAfter, 0)
}

// roomsConfig is what Rooms runs on under these settings.
func (s *Settings) roomsConfig() waitroom.RoomsConfig {
	return waitroom.RoomsConfig{Rooms: s.rooms, SessionCache: s.sessionCache, OnOutage: s.onOutage, OpenAfter: s.openAfter}
}

// fingerprint is the file's bytes followed by the digest of every room's
// page template, in room order: equal means nothing to reload, even after a
// change only a restart applies.
func (s *Settings) fingerprint() []byte {
	out := append([]byte(nil), s.file...)
	// What *_file keys and ${ENV} put in the configuration is not in the
	// file's bytes: a hash of the effective values is, so a new token in
	// admin.token_file (or new cookie keys) is a change a reload applies.
	if b, err := json.Marshal(s.Config); err == nil {
		sum := sha256.Sum256(b)
		out = append(append(out, 0), sum[:]...)
	}
	for _, name := range sortedKeys(s.pages) {
		if sum, ok := s.pages[name].TemplateSum(); ok {
			out = append(append(out, 0), sum[:]...)
		}
	}
	return out
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
