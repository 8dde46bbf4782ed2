package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodConfig = `
listen: "127.0.0.1:0"
cookie:
  hash_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="]
  block_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="]
upstreams:
  shop: { url: "http://127.0.0.1:3000" }
rooms:
  concert:
    max_active: 500
    admit_rate: 300/m
    page: { title: "Concert", locale: ko }
routes:
  - { path: /events/, upstream: shop, room: concert }
  - { path: /, upstream: shop }
bypass:
  paths: ["/static/"]
`

func TestConfig_Good(t *testing.T) {
	cfg, err := parseConfig("good.yaml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	room := cfg.Rooms["concert"]
	if room.MaxActive != 500 || room.AdmitRate != "300/m" || room.SessionTTL != "10m" || room.Page.Locale != "ko" || room.Page.Refresh != "5s" {
		t.Fatalf("room settings or defaults wrong: %+v", room)
	}
	if cfg.Server.MaxHeaderBytes != 64<<10 || cfg.Store.OnError != "closed" || !cfg.Cookie.Secure {
		t.Fatalf("defaults not applied: %+v %+v", cfg.Server, cfg.Store)
	}
	if up := cfg.Upstreams["shop"]; up.Timeout != "30s" {
		t.Fatalf("upstream default timeout: %q", up.Timeout)
	}
}

// A route without a path covers every path, as RouteConfig documents.
func TestConfig_RoutePathDefault(t *testing.T) {
	src := strings.Replace(goodConfig, "  - { path: /, upstream: shop }", "  - { upstream: shop }", 1)
	s, err := parseConfig("default-path.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Routes[1].Path; got != "/" {
		t.Fatalf("route path default: %q, want \"/\"", got)
	}
	for path, room := range map[string]string{"/anything": "", "/events/1": "concert"} {
		if r, ok := s.router.Match("shop.example", path); !ok || r.Room != room {
			t.Errorf("%s: matched %v %+v, want room %q", path, ok, r, room)
		}
	}
}

func TestConfig_ShippedFilesAreValid(t *testing.T) {
	t.Setenv("WAITROOM_HASH_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("WAITROOM_BLOCK_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	files, _ := filepath.Glob("../../configs/examples/*.yaml")
	files = append(files, "../../configs/waitroom.yaml", "../../loadtest/spike-redis.yaml")
	for _, f := range files {
		if _, err := loadConfig(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Every default must appear in the documented file, so the two cannot drift.
	doc, err := os.ReadFile("../../configs/waitroom.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"read_header_timeout", "max_header_bytes", "on_error", "hash_keys", "same_site", "max_age",
		"dial_timeout", "max_active", "admit_rate", "admit_burst", "session_ttl", "abandon_after", "tick", "status_code",
		"locale", "refresh", "recovery_grace", "trusted_proxies", "cidrs", "secret", "mode", "token", "listen", "opens_at", "closes_at", "prequeue_from",
		"session_cache", "proxy_protocol", "client_network_v4", "client_network_v6", "join_limit", "max_waiting",
		"challenge", "session_clients", "session_max", "identity", "required"} {
		if !bytes.Contains(doc, []byte(key+":")) {
			t.Errorf("configs/waitroom.yaml does not document %q", key)
		}
	}
}

// Lists come from the environment comma-separated, even when the file does
// not name them: cookie keys are the usual case.
func TestConfig_EnvOverridesLists(t *testing.T) {
	t.Setenv("WAITROOM_COOKIE_HASH_KEYS", testKey+","+testKey)
	t.Setenv("WAITROOM_COOKIE_BLOCK_KEYS", testKey+","+testKey)
	t.Setenv("WAITROOM_BYPASS_CIDRS", "10.0.0.0/8,192.168.0.0/16")
	t.Setenv("WAITROOM_SERVER_TRUSTED_PROXIES", "10.1.0.0/16")
	t.Setenv("WAITROOM_STORE_REDIS_ADDRS", "10.0.0.1:6379,10.0.0.2:6379")
	src := strings.Replace(goodConfig, "cookie:\n  hash_keys: [\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\"]\n  block_keys: [\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\"]\n", "", 1)
	if strings.Contains(src, "hash_keys") {
		t.Fatal("test bug: the file still names hash_keys")
	}
	cfg, err := parseConfig("env.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Cookie.HashKeys) != 2 || len(cfg.Cookie.BlockKeys) != 2 || cfg.Cookie.HashKeys[1] != testKey {
		t.Errorf("cookie keys from the environment: %q %q", cfg.Cookie.HashKeys, cfg.Cookie.BlockKeys)
	}
	if len(cfg.Bypass.CIDRs) != 2 || len(cfg.Server.TrustedProxies) != 1 || len(cfg.Store.Redis.Addrs) != 2 {
		t.Errorf("lists from the environment: %q %q %q", cfg.Bypass.CIDRs, cfg.Server.TrustedProxies, cfg.Store.Redis.Addrs)
	}
}

func TestConfig_EnvExpansionAndOverride(t *testing.T) {
	t.Setenv("SHOP_URL", "http://127.0.0.1:4000")
	t.Setenv("WAITROOM_ROOMS_CONCERT_MAX_ACTIVE", "42")
	t.Setenv("WAITROOM_LISTEN", "127.0.0.1:9999")
	src := strings.Replace(goodConfig, `"http://127.0.0.1:3000"`, `"${SHOP_URL}"`, 1)
	cfg, err := parseConfig("env.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstreams["shop"].URL != "http://127.0.0.1:4000" {
		t.Errorf("${SHOP_URL} not expanded: %q", cfg.Upstreams["shop"].URL)
	}
	if cfg.Rooms["concert"].MaxActive != 42 || cfg.Listen != "127.0.0.1:9999" {
		t.Errorf("WAITROOM_* overrides not applied: max_active=%d listen=%q", cfg.Rooms["concert"].MaxActive, cfg.Listen)
	}
}

// Each bad file must be refused with the key path of its problem.
func TestConfig_Bad(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"negative limit", "max_active: 500", "max_active: -5", "rooms.concert.max_active: must be >= 0, got -5"},
		{"unknown key", "max_active: 500", "max_activ: 500", "rooms.concert.max_activ: unknown key"},
		{"unknown top key", `listen: "127.0.0.1:0"`, `lisen: "127.0.0.1:0"`, "lisen: unknown key"},
		{"bad rate", "admit_rate: 300/m", `admit_rate: "300 per minute"`, "rooms.concert.admit_rate:"},
		{"bare number rate", "admit_rate: 300/m", "admit_rate: 300", "rooms.concert.admit_rate:"},
		{"bad duration", "max_active: 500", "max_active: 500\n    session_ttl: 90", `rooms.concert.session_ttl: want a duration with a unit such as "90s"`},
		{"unknown upstream", "{ path: /, upstream: shop }", "{ path: /, upstream: shp }", `routes[1].upstream`},
		{"unknown room", "room: concert }", "room: concrt }", `routes[0].room`},
		{"short hash key", `hash_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="]`, `hash_keys: ["c2hvcnQ="]`, "cookie.hash_keys[0]: must decode to 32 or 64 bytes, got 5"},
		{"bad block key", `block_keys: ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="]`, `block_keys: ["!!"]`, "cookie.block_keys[0]: must be standard base64"},
		{"wrong type", "max_active: 500", "max_active: lots", "rooms.concert.max_active:"},
		{"a word for a bool", `paths: ["/static/"]`, `paths: ["/static/"]` + "\nserver: { proxy_protocol: off }", `server.proxy_protocol: want true or false, got "off"`},
		{"beyond a whole number's range", "max_active: 500", "max_active: 1e19", "rooms.concert.max_active: want a whole number, got 1e+19"},
		{"fraction for a whole number", "max_active: 500", "max_active: 300.5", "rooms.concert.max_active: want a whole number, got 300.5"},
		{"bad locale", "locale: ko", "locale: fr", "rooms.concert.page.locale:"},
		{"abandon below refresh", "max_active: 500", "max_active: 500\n    abandon_after: 6s", "rooms.concert.abandon_after: must be at least twice page.refresh"},
		{"room name case", "  concert:", "  Concert:", "rooms.Concert: name must be"},
		{"unset env", `url: "http://127.0.0.1:3000"`, `url: "${NOT_SET_ANYWHERE}"`, "upstreams.shop.url: environment variable NOT_SET_ANYWHERE is not set"},
		{"bad store", "bypass:", "store: { kind: mysql }\nbypass:", `store.kind: must be "memory"`},
		{"bad listen", `listen: "127.0.0.1:0"`, `listen: "8080"`, "listen: want host:port"},
		{"public admin without a token", `listen: "127.0.0.1:0"`, `listen: "127.0.0.1:0"` + "\nadmin: { listen: \"0.0.0.0:9090\" }", "admin.token: required when listen is not a loopback address"},
		{"short admin token", `listen: "127.0.0.1:0"`, `listen: "127.0.0.1:0"` + "\nadmin: { token: short }", "admin.token: must be at least 16 characters"},
		{"bad mode", "max_active: 500", "max_active: 500\n    mode: sideways", `rooms.concert.mode: must be "fifo"`},
		{"bad sale time", "max_active: 500", "max_active: 500\n    schedule: { opens_at: \"tomorrow 10am\" }", `rooms.concert.schedule.opens_at: want an RFC 3339 time`},
		{"pre-queue after opening", "max_active: 500", "max_active: 500\n    schedule: { prequeue_from: \"2026-12-01T10:00:00Z\", opens_at: \"2026-12-01T09:00:00Z\" }", "rooms.concert.schedule.prequeue_from: must be before opens_at"},
		{"upper-case key", `listen: "127.0.0.1:0"`, `Listen: "127.0.0.1:0"`, `Listen: keys are lower case; did you mean "listen"?`},
		{"bad cidr", `paths: ["/static/"]`, `paths: ["/static/"]` + "\n  cidrs: [\"10.0.0.0/33\"]", "bypass.cidrs[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(goodConfig, c.from) {
				t.Fatalf("test bug: %q not in the good config", c.from)
			}
			_, err := parseConfig("bad.yaml", []byte(strings.Replace(goodConfig, c.from, c.to, 1)))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *ConfigError, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("problems do not name %q:\n%v", c.want, err)
			}
		})
	}
}

func TestConfig_EveryProblemAtOnce(t *testing.T) {
	src := strings.NewReplacer("max_active: 500", "max_active: -5\n    tick: 0", "admit_rate: 300/m", "admit_rate: fast", "locale: ko", "locale: fr").Replace(goodConfig)
	_, err := parseConfig("bad.yaml", []byte(src))
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 4 {
		t.Fatalf("want 4 problems at once, got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "bad.yaml: 4 problems\n  ") {
		t.Fatalf("report layout: %q", err.Error())
	}
}

func TestConfig_EmptyOrMissingFile(t *testing.T) {
	for _, src := range []string{"", "   \n", "# only a comment\n"} {
		if _, err := parseConfig("empty.yaml", []byte(src)); err == nil {
			t.Errorf("%q accepted", src)
		}
	}
	if _, err := loadConfig(filepath.Join(t.TempDir(), "nope.yaml")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := parseConfig("bad.yaml", []byte("listen: [")); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("broken YAML: %v", err)
	}
}

func TestSortProblems(t *testing.T) {
	ps := []string{"routes[10].path: x", "routes[2].room: y", "listen: z", "routes[2].path: w"}
	sortProblems(ps)
	want := []string{"listen: z", "routes[2].path: w", "routes[2].room: y", "routes[10].path: x"}
	if strings.Join(ps, "|") != strings.Join(want, "|") {
		t.Fatalf("sorted %q, want %q", ps, want)
	}
}

// A WAITROOM_ override is a string: a whole number converts as before, a
// fraction is refused with the same words as in the file.
func TestConfig_EnvWholeNumbers(t *testing.T) {
	t.Setenv("WAITROOM_ROOMS_CONCERT_MAX_ACTIVE", "700")
	s, err := parseConfig("good.yaml", []byte(goodConfig))
	if err != nil || s.Rooms["concert"].MaxActive != 700 {
		t.Fatalf("a whole number from the environment: %v", err)
	}
	t.Setenv("WAITROOM_ROOMS_CONCERT_MAX_ACTIVE", "300.5")
	if _, err := parseConfig("good.yaml", []byte(goodConfig)); err == nil || !strings.Contains(err.Error(), "rooms.concert.max_active: want a whole number, got 300.5") {
		t.Fatalf("a fraction from the environment: %v", err)
	}
}
