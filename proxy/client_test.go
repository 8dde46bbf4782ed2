package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// testTrusted are the proxies the ClientAddr tests trust.
var testTrusted = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("2001:db8:ffff::/48"),
	netip.MustParsePrefix("192.0.2.1/32"),
}

// longChain is an X-Forwarded-For of a client and 40 trusted proxies,
// 10.0.0.1 the leftmost proxy and 10.0.0.40 the rightmost.
func longChain() string {
	hops := []string{"203.0.113.7"}
	for i := 1; i <= 40; i++ {
		hops = append(hops, fmt.Sprintf("10.0.0.%d", i))
	}
	return strings.Join(hops, ", ")
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		peer string
		xff  []string
		fwd  []string
		want string // "" for the invalid Addr
	}{
		{"untrusted peer, no header", "203.0.113.1:5000", nil, nil, "203.0.113.1"},
		{"untrusted peer forges XFF", "203.0.113.1:5000", []string{"198.51.100.9"}, nil, "203.0.113.1"},
		{"untrusted peer forges Forwarded", "203.0.113.1:5000", nil, []string{"for=198.51.100.9"}, "203.0.113.1"},
		{"trusted peer, no header", "10.0.0.1:5000", nil, nil, "10.0.0.1"},
		{"trusted peer, one hop", "10.0.0.1:5000", []string{"203.0.113.7"}, nil, "203.0.113.7"},
		{"behind two proxies", "10.0.0.1:5000", []string{"203.0.113.7, 10.1.1.1"}, nil, "203.0.113.7"},
		{"client-made entries ignored", "10.0.0.1:5000", []string{"198.51.100.9, 203.0.113.7, 10.1.1.1"}, nil, "203.0.113.7"},
		{"all trusted: the leftmost", "10.0.0.1:5000", []string{"10.0.0.5, 10.0.0.6"}, nil, "10.0.0.5"},
		{"lines are one list", "10.0.0.1:5000", []string{"198.51.100.9, 203.0.113.7", "10.1.1.1"}, nil, "203.0.113.7"},
		{"malformed last entry", "10.0.0.1:5000", []string{"203.0.113.7, garbage"}, nil, "10.0.0.1"},
		{"malformed middle entry", "10.0.0.1:5000", []string{"203.0.113.7, garbage, 10.1.1.1"}, nil, "10.1.1.1"},
		{"malformed entry past the client", "10.0.0.1:5000", []string{"garbage, 203.0.113.7"}, nil, "203.0.113.7"},
		{"IPv6", "10.0.0.1:5000", []string{"2001:db8::7"}, nil, "2001:db8::7"},
		{"IPv6 bracketed with port", "10.0.0.1:5000", []string{"[2001:db8::7]:443"}, nil, "2001:db8::7"},
		{"IPv6 bracketed", "10.0.0.1:5000", []string{"[2001:db8::7]"}, nil, "2001:db8::7"},
		{"IPv4 with port", "10.0.0.1:5000", []string{"203.0.113.7:5555"}, nil, "203.0.113.7"},
		{"IPv4 bracketed", "10.0.0.1:5000", []string{"[203.0.113.7]"}, nil, "10.0.0.1"},
		{"IPv4-mapped client", "10.0.0.1:5000", []string{"::ffff:203.0.113.7"}, nil, "203.0.113.7"},
		{"IPv4-mapped proxy", "10.0.0.1:5000", []string{"203.0.113.7, ::ffff:10.1.1.1"}, nil, "203.0.113.7"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.1]:5000", []string{"203.0.113.7"}, nil, "203.0.113.7"},
		{"IPv6 peer", "[2001:db8:ffff::2]:5000", []string{"203.0.113.7"}, nil, "203.0.113.7"},
		{"zone refused", "10.0.0.1:5000", []string{"fe80::1%eth0"}, nil, "10.0.0.1"},
		{"port too long", "10.0.0.1:5000", []string{"203.0.113.7:123456"}, nil, "10.0.0.1"},
		{"empty entries skipped", "10.0.0.1:5000", []string{"203.0.113.7,, ,", ""}, nil, "203.0.113.7"},
		{"whitespace", "10.0.0.1:5000", []string{" \t203.0.113.7\t "}, nil, "203.0.113.7"},
		{"only empty entries", "10.0.0.1:5000", []string{" , "}, nil, "10.0.0.1"},
		{"unix socket peer", "@", []string{"203.0.113.7"}, nil, ""},
		{"peer without port", "10.0.0.1", []string{"203.0.113.7"}, nil, "203.0.113.7"},
		{"at most 32 hops read", "10.0.0.99:5000", []string{longChain()}, nil, "10.0.0.9"},

		{"Forwarded", "10.0.0.1:5000", nil, []string{"for=203.0.113.7"}, "203.0.113.7"},
		{"Forwarded with params any case", "10.0.0.1:5000", nil, []string{"Proto=https;FOR=203.0.113.7;by=10.0.0.1"}, "203.0.113.7"},
		{"Forwarded quoted IPv6 with port", "10.0.0.1:5000", nil, []string{`for="[2001:db8::7]:4711"`}, "2001:db8::7"},
		{"Forwarded unquoted IPv6", "10.0.0.1:5000", nil, []string{`for=[2001:db8::7]`}, "2001:db8::7"},
		{"Forwarded obfuscated port", "10.0.0.1:5000", nil, []string{`for="203.0.113.7:_p1"`}, "203.0.113.7"},
		{"Forwarded chain", "10.0.0.1:5000", nil, []string{"for=198.51.100.9, for=203.0.113.7", "for=10.1.1.1"}, "203.0.113.7"},
		{"Forwarded unknown stops", "10.0.0.1:5000", nil, []string{"for=203.0.113.7, for=unknown, for=10.1.1.1"}, "10.1.1.1"},
		{"Forwarded hidden", "10.0.0.1:5000", nil, []string{`for="_hidden"`}, "10.0.0.1"},
		{"Forwarded open quote", "10.0.0.1:5000", nil, []string{`for="203.0.113.7`}, "10.0.0.1"},
		{"Forwarded two for", "10.0.0.1:5000", nil, []string{"for=203.0.113.7;for=198.51.100.9"}, "10.0.0.1"},
		{"Forwarded no for", "10.0.0.1:5000", nil, []string{"proto=https"}, "10.0.0.1"},
		{"Forwarded quoted-pair", "10.0.0.1:5000", nil, []string{`for="203.0.113.\7"`}, "10.0.0.1"},
		{"Forwarded comma in quotes", "10.0.0.1:5000", nil, []string{`for=203.0.113.7;by="a,b", for=10.1.1.1`}, "203.0.113.7"},
		{"Forwarded bracketed IPv4", "10.0.0.1:5000", nil, []string{`for="[203.0.113.7]"`}, "10.0.0.1"},
		{"Forwarded param without value", "10.0.0.1:5000", nil, []string{`for=203.0.113.7;secure`}, "10.0.0.1"},
		{"Forwarded empty elements", "10.0.0.1:5000", nil, []string{` , for=203.0.113.7 ,`}, "203.0.113.7"},

		{"XFF wins over Forwarded", "10.0.0.1:5000", []string{"203.0.113.7"}, []string{"for=198.51.100.9"}, "203.0.113.7"},
		{"empty XFF still wins", "10.0.0.1:5000", []string{""}, []string{"for=198.51.100.9"}, "10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tt.xff != nil {
				h["X-Forwarded-For"] = tt.xff
			}
			if tt.fwd != nil {
				h["Forwarded"] = tt.fwd
			}
			got := ClientAddr(tt.peer, h, testTrusted)
			if want := addrOrZero(tt.want); got != want {
				t.Errorf("ClientAddr(%q, %q) = %v, want %v", tt.peer, h, got, want)
			}
		})
	}
}

func addrOrZero(s string) netip.Addr {
	if s == "" {
		return netip.Addr{}
	}
	return netip.MustParseAddr(s)
}

func TestClientAddr_OddSpellingsAreNotRead(t *testing.T) {
	t.Parallel()
	h := http.Header{"X_forwarded_for": {"203.0.113.7"}, "X-Real-Ip": {"203.0.113.8"}, "True-Client-Ip": {"203.0.113.9"}}
	if got := ClientAddr("10.0.0.1:5000", h, testTrusted); got != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("ClientAddr = %v, want the peer", got)
	}
}

func TestClientAddr_DoesNotAllocate(t *testing.T) {
	xff := http.Header{"X-Forwarded-For": {"198.51.100.9, 203.0.113.7, 10.1.1.1", "10.2.2.2"}}
	fwd := http.Header{"Forwarded": {`for="[2001:db8::7]:4711";proto=https, for=10.1.1.1`}}
	allocs := testing.AllocsPerRun(100, func() {
		ClientAddr("10.0.0.1:5000", xff, testTrusted)
		ClientAddr("[2001:db8:ffff::2]:443", fwd, testTrusted)
		ClientAddr("203.0.113.1:5000", xff, testTrusted)
	})
	if allocs != 0 {
		t.Errorf("ClientAddr allocates %v times per run", allocs)
	}
}

func BenchmarkClientAddr(b *testing.B) {
	cases := []struct {
		name, peer string
		h          http.Header
	}{
		{"untrusted", "203.0.113.1:5000", http.Header{"X-Forwarded-For": {"198.51.100.9"}}},
		{"xff two hops", "10.0.0.1:5000", http.Header{"X-Forwarded-For": {"203.0.113.7, 10.1.1.1"}}},
		{"forwarded", "10.0.0.1:5000", http.Header{"Forwarded": {`for="[2001:db8::7]:4711";proto=https, for=10.1.1.1`}}},
		{"xff 41 hops", "10.0.0.99:5000", http.Header{"X-Forwarded-For": {longChain()}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ClientAddr(c.peer, c.h, testTrusted)
			}
		})
	}
}

func TestClient_Peer(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[::ffff:10.0.0.1%eth0]:5000"
	if got := ClientAddr(r.RemoteAddr, r.Header, nil); got != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("ClientAddr without trusted proxies = %v, want the peer", got)
	}
	r.RemoteAddr = "@"
	if got := ClientAddr(r.RemoteAddr, r.Header, nil); got.IsValid() {
		t.Errorf("ClientAddr of a Unix socket peer = %v, want none", got)
	}
}

// The bypass networks match the client a trusted proxy forwarded for, and
// never one an untrusted peer claims to forward for.
func TestBypass_MatchesClientFromContext(t *testing.T) {
	t.Parallel()
	b, err := BypassConfig{CIDRs: []string{"198.51.100.0/24"}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, peer, xff string
		want            bool
	}{
		{"office behind trusted proxy", "10.0.0.1:5000", "198.51.100.9", true},
		{"stranger behind trusted proxy", "10.0.0.1:5000", "203.0.113.7", false},
		{"forged by untrusted peer", "203.0.113.1:5000", "198.51.100.9", false},
		{"office directly", "198.51.100.9:5000", "", true},
		{"office peer, stranger forwarded", "198.51.100.9:5000", "203.0.113.7", true}, // 198.51.100.9 is no trusted proxy
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "/events/", nil)
			r.RemoteAddr = tt.peer
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if got := b.Match(r, ClientAddr(r.RemoteAddr, r.Header, testTrusted), "/events/"); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
	// The client given beats the peer's address.
	r := httptest.NewRequest(http.MethodGet, "/events/", nil)
	r.RemoteAddr = "198.51.100.9:5000"
	if b.Match(r, netip.MustParseAddr("203.0.113.7"), "/events/") {
		t.Error("bypassed on the peer address although the client is another")
	}
}

func TestNetwork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr      string
		v4, v6    int
		want, key string
		wantNoPfx bool
	}{
		{addr: "203.0.113.77", v4: 24, v6: 56, want: "203.0.113.0/24", key: "203.0.113.0/24"},
		{addr: "::ffff:203.0.113.77", v4: 24, v6: 56, want: "203.0.113.0/24", key: "203.0.113.0/24"},
		{addr: "2001:db8:aaaa:bbcc:1::1", v4: 24, v6: 56, want: "2001:db8:aaaa:bb00::/56", key: "2001:db8:aaaa:bb00::/56"},
		{addr: "fe80::1%eth0", v4: 24, v6: 56, want: "fe80::/56", key: "fe80::/56"},
		{addr: "203.0.113.77", v4: 40, v6: 56, want: "203.0.113.77/32", key: "203.0.113.77/32"},
		{addr: "203.0.113.77", v4: -1, v6: 56, want: "0.0.0.0/0", key: "0.0.0.0/0"},
		{addr: "2001:db8::1", v4: 24, v6: 200, want: "2001:db8::1/128", key: "2001:db8::1/128"},
		{addr: "", wantNoPfx: true},
	}
	for _, tt := range tests {
		a := addrOrZero(tt.addr)
		got := Network(a, tt.v4, tt.v6)
		if tt.wantNoPfx {
			if got.IsValid() || NetworkKey(got) != "" {
				t.Errorf("Network(%v) = %v %q, want none", a, got, NetworkKey(got))
			}
			continue
		}
		if got != netip.MustParsePrefix(tt.want) {
			t.Errorf("Network(%v, %d, %d) = %v, want %s", a, tt.v4, tt.v6, got, tt.want)
		}
		if k := NetworkKey(got); k != tt.key {
			t.Errorf("NetworkKey(%v) = %q, want %q", got, k, tt.key)
		}
	}
	if k := NetworkKey(netip.MustParsePrefix("203.0.113.77/24")); k != "203.0.113.0/24" {
		t.Errorf("NetworkKey of an unmasked prefix = %q", k)
	}
	if a, b := Network(netip.MustParseAddr("2001:db8:aaaa:bb00::1"), 24, 56), Network(netip.MustParseAddr("2001:db8:aaaa:bbff:ffff::9"), 24, 56); a != b {
		t.Errorf("one /56, two networks: %v %v", a, b)
	}
}
