package main

import (
	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/pass"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/webhook"
	"github.com/waitroom/waitroom/web"
)

// Config is the whole configuration file as written, defaults applied.
// Each section is owned by the package that uses it; this file only
// composes them, and build.go builds them.
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
	TLS       TLSConfig                       `mapstructure:"tls" yaml:"tls" json:"tls"`
	Pass      pass.Config                     `mapstructure:"pass" yaml:"pass" json:"pass"`
	Webhooks  []webhook.Config                `mapstructure:"webhooks" yaml:"webhooks" json:"webhooks"`
	// WebhookDelivery is how webhooks are queued, sent and retried.
	WebhookDelivery webhook.DeliveryConfig `mapstructure:"webhook_delivery" yaml:"webhook_delivery" json:"webhook_delivery"`
	Geo             GeoConfig              `mapstructure:"geo" yaml:"geo" json:"geo"`
}

// GeoConfig is where newcomers' regions are read from.
type GeoConfig struct {
	// DBFile is a MaxMind-format database (.mmdb: GeoLite2-Country,
	// GeoIP2-City, DB-IP's, or the site's own) whose country.iso_code
	// labels waitroom_regions_total; "" counts no regions. Read at start
	// (a change needs a restart); nothing is downloaded: the operator keeps
	// the file current.
	DBFile string `mapstructure:"db_file" yaml:"db_file" json:"db_file"`
}

// RoomConfig is one room: the admission settings and its page.
type RoomConfig struct {
	waitroom.RoomConfig `mapstructure:",squash" yaml:",inline"`
	Page                web.PageConfig `mapstructure:"page" yaml:"page" json:"page"`
	// ExpectedWaiting is how many may wait in the room at once at its
	// peak, a hint for `waitroom check`, which warns when their polls would
	// cost the room's Redis node more than half a core (docs/scale.md:
	// a room is one hash slot, one core). A template's is per room filled
	// from it. Default 0: no estimate, no warning.
	ExpectedWaiting int64 `mapstructure:"expected_waiting" yaml:"expected_waiting" json:"expected_waiting"`
}

// ServerConfig tunes the visitor listener.
type ServerConfig struct {
	// ReadHeaderTimeout bounds a slow client's headers. Default "10s".
	ReadHeaderTimeout string `mapstructure:"read_header_timeout" yaml:"read_header_timeout" json:"read_header_timeout"`
	// IdleTimeout closes idle keep-alive connections, and upgraded ones
	// (WebSockets) silent both ways this long. Default "120s".
	IdleTimeout string `mapstructure:"idle_timeout" yaml:"idle_timeout" json:"idle_timeout"`
	// ReadTimeout bounds a request body once the headers are in: a body
	// declared and never sent is cut off after it. Default "60s".
	ReadTimeout string `mapstructure:"read_timeout" yaml:"read_timeout" json:"read_timeout"`
	// WriteTimeout bounds sending a response: a client that does not read
	// is cut off after it. A stream (server-sent events, a flushed
	// response) is bounded per write instead; upgraded connections by
	// IdleTimeout. Default "60s".
	WriteTimeout string `mapstructure:"write_timeout" yaml:"write_timeout" json:"write_timeout"`
	// MaxConnsPerClient caps the connections one client network (see
	// ClientNetworkV4) holds open on this instance; trusted proxies are
	// not capped. Default 0: no cap.
	MaxConnsPerClient int `mapstructure:"max_conns_per_client" yaml:"max_conns_per_client" json:"max_conns_per_client"`
	// MaxHeaderBytes bounds request headers; larger gets 431. Default 65536.
	MaxHeaderBytes int `mapstructure:"max_header_bytes" yaml:"max_header_bytes" json:"max_header_bytes"`
	// ShutdownTimeout is how long SIGTERM waits for in-flight requests. Default "30s".
	ShutdownTimeout string `mapstructure:"shutdown_timeout" yaml:"shutdown_timeout" json:"shutdown_timeout"`
	// ShutdownDelay is the lame-duck period before that drain: /readyz
	// answers 503 while every request is still served, so load balancers
	// and Kubernetes endpoints stop sending traffic first. Default "0s":
	// a single instance has nobody to tell.
	ShutdownDelay string `mapstructure:"shutdown_delay" yaml:"shutdown_delay" json:"shutdown_delay"`
	// TrustedProxies are the peers (CIDRs or addresses) whose forwarding
	// headers (X-Forwarded-For, Forwarded) and PROXY-protocol headers are
	// believed: the client's address is the rightmost hop that is not one of
	// them. From anyone else they are dropped. Default none.
	TrustedProxies []string `mapstructure:"trusted_proxies" yaml:"trusted_proxies" json:"trusted_proxies"`
	// ProxyProtocol reads a PROXY protocol header (v1 or v2) on every
	// connection from a trusted proxy (an AWS NLB, HAProxy), required from
	// them; from anyone else a PROXY header is refused. The client is then
	// the header's source, or the balancer for a v1 UNKNOWN or v2 LOCAL
	// header, and no forwarding header is believed. Default false.
	ProxyProtocol bool `mapstructure:"proxy_protocol" yaml:"proxy_protocol" json:"proxy_protocol"`
	// ClientNetworkV4 and ClientNetworkV6 size the client networks that
	// per-client limits (rooms' join_limit, session_clients) apply to, in
	// prefix bits: default 24 and 56, a household, an office or a PC-bang.
	ClientNetworkV4 int `mapstructure:"client_network_v4" yaml:"client_network_v4" json:"client_network_v4"`
	ClientNetworkV6 int `mapstructure:"client_network_v6" yaml:"client_network_v6" json:"client_network_v6"`
	// SharedNetworks are CIDRs where one client network holds many
	// unrelated people: a carrier's NAT (LTE/5G CGNAT), a campus. Inside
	// them the unit of rooms' join_limit is the single IPv4 address or the
	// IPv6 /64, while the /16 or /48 around it keeps its ceiling (16 times
	// join_limit). At most 1000 entries, each /8 (IPv4) or /16 (IPv6) or
	// narrower. Default none.
	SharedNetworks []string `mapstructure:"shared_networks" yaml:"shared_networks" json:"shared_networks"`
}

// AdminConfig is the operators' listener: JSON API, dashboard, metrics,
// health.
type AdminConfig struct {
	// Listen is its address. Default "127.0.0.1:9090"; "" turns it off.
	Listen string `mapstructure:"listen" yaml:"listen" json:"listen"`
	// Token is the bearer token for the API, the dashboard's calls and
	// /metrics (use ${ENV}); required unless Listen is a loopback address.
	Token string `mapstructure:"token" yaml:"token" json:"token"`
	// TokenFile names a file holding the token (a mounted secret), instead
	// of Token. Default "".
	TokenFile string `mapstructure:"token_file" yaml:"token_file" json:"token_file"`
	// ReleaseToken is a bearer token for the site: it is accepted by POST
	// /admin/api/rooms/{room}/release alone, so a site that ends sessions
	// (auth mode, where its answers do not pass through waitroom) never
	// holds the token that pauses, creates and deletes rooms. At least 16
	// characters, unlike Token. Default "": none.
	ReleaseToken string `mapstructure:"release_token" yaml:"release_token" json:"release_token"`
	// ReleaseTokenFile names a file holding ReleaseToken, instead of it.
	// Default "".
	ReleaseTokenFile string `mapstructure:"release_token_file" yaml:"release_token_file" json:"release_token_file"`
	// ReadyRequiresStore makes /readyz answer 503 while the store does not
	// answer. Default false: ready once a configuration is loaded and the
	// listeners are up, with the store's state in the body, so a store
	// outage keeps every instance serving its hold page.
	ReadyRequiresStore bool `mapstructure:"ready_requires_store" yaml:"ready_requires_store" json:"ready_requires_store"`
	// PublicURL is the gateway's address as visitors reach it
	// ("https://tickets.example.com"), which the links the admin API makes
	// (preview links) start with. Default "": the links are paths, to put
	// after that address.
	PublicURL string `mapstructure:"public_url" yaml:"public_url" json:"public_url"`
}

// LogConfig sets up zap.
type LogConfig struct {
	// Level is "debug", "info" (default), "warn" or "error".
	Level string `mapstructure:"level" yaml:"level" json:"level"`
	// Format is "json" (default) or "console".
	Format string `mapstructure:"format" yaml:"format" json:"format"`
	// Access is the access log, one line per visitor request.
	Access AccessConfig `mapstructure:"access" yaml:"access" json:"access"`
}

// StoreConfig picks where lines are kept.
type StoreConfig struct {
	// Kind is "memory" (default: one instance, lines kept in process) or
	// "redis" (any number of instances share the lines in Redis).
	Kind string `mapstructure:"kind" yaml:"kind" json:"kind"`
	// OnError is what happens while the store cannot be reached: "closed"
	// (default) lets only admitted visitors through, "open" lets everyone
	// once the store has failed for OpenAfter.
	OnError string `mapstructure:"on_error" yaml:"on_error" json:"on_error"`
	// OpenAfter is how long every call to the store must have failed
	// before on_error: open lets everyone through; the first answer closes
	// it again. A single slow call is held as closed would. Default "":
	// "2s" on one Redis server (or the memory store); with Sentinel
	// (master_name) or a Cluster (several addrs), the detection time the
	// deployment reports at start (the sentinels' down-after-milliseconds,
	// the nodes' cluster-node-timeout) plus 5s, at least "10s", so that a
	// failover is held rather than opened (openafter.go); a smaller value
	// is kept but warned about. "0s" opens on the first failure.
	OpenAfter string `mapstructure:"open_after" yaml:"open_after" json:"open_after"`
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
			ReadHeaderTimeout: "10s", IdleTimeout: "120s", ReadTimeout: "60s", WriteTimeout: "60s", MaxHeaderBytes: 64 << 10,
			ShutdownTimeout: "30s", ShutdownDelay: "0s", TrustedProxies: []string{}, SharedNetworks: []string{},
			ClientNetworkV4: proxy.DefaultNetworkV4Bits, ClientNetworkV6: proxy.DefaultNetworkV6Bits,
		},
		Admin:           AdminConfig{Listen: "127.0.0.1:9090"},
		Log:             LogConfig{Level: "info", Format: "json", Access: AccessConfig{Format: "json", PollSample: 1}},
		Pass:            pass.DefaultConfig(),
		Webhooks:        []webhook.Config{},
		WebhookDelivery: webhook.DefaultDeliveryConfig(),
		TLS:             TLSConfig{MinVersion: "1.2", ACME: ACMEConfig{Domains: []string{}}},
		Store:           StoreConfig{Kind: "memory", OnError: string(waitroom.OutageClosed), OpenAfter: "", SessionCache: "1s", Redis: redisstore.DefaultConfig()},
		Cookie:          waitroom.DefaultCookie(),
		Bypass:          proxy.DefaultBypass(),
	}
}

// DefaultRoomConfig is what every room starts from.
func DefaultRoomConfig() RoomConfig {
	return RoomConfig{RoomConfig: waitroom.DefaultRoom(), Page: web.DefaultPage()}
}

func defaultUpstream() proxy.UpstreamConfig { return proxy.DefaultUpstream() }
