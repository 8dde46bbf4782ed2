package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// forgedMark is the address every forged forwarding header carries, so
// that the upstream's view can be searched for it.
const forgedMark = "198.51.100.66"

// spellings are forwarding and override header names as clients send them.
// canonical: a trusted proxy's copy is passed on; always: dropped from
// everyone.
var spellings = []struct {
	name              string
	canonical, always bool
}{
	{"Forwarded", true, false},
	{"X-Forwarded-For", true, false},
	{"X-Forwarded-Host", true, false},
	{"X-Forwarded-Proto", true, false},
	{"X-Forwarded-Port", true, false},
	{"X-Forwarded-Prefix", true, false},
	{"X-Forwarded-Ssl", true, false},
	{"X-Forwarded-Server", true, false},
	{"X-Forwarded-Client-Cert", true, false},
	{"X-Forwarded-Anything", true, false},
	{"X-Forwarded", true, false},
	{"Forwarded-For", true, false},
	{"X-Real-Ip", true, false},
	{"Client-Ip", true, false},
	{"True-Client-Ip", true, false},
	{"Cf-Connecting-Ip", true, false},
	{"Cf-Connecting-Ipv6", true, false},
	{"X-Client-Ip", true, false},
	{"X-Cluster-Client-Ip", true, false},
	{"Fastly-Client-Ip", true, false},
	{"X-Originating-Ip", true, false},
	{"X-Original-Forwarded-For", true, false},
	{"X-Proxyuser-Ip", true, false},
	{"X-Remote-Ip", true, false},
	{"X-Remote-Addr", true, false},
	{"X-Envoy-External-Address", true, false},
	{"X-Azure-Clientip", true, false},
	{"Wl-Proxy-Client-Ip", true, false},
	{"Do-Connecting-Ip", true, false},
	{"X-Host", true, false},
	{"X-Original-Host", true, false},
	{"X_Forwarded_For", false, false},
	{"x_forwarded_for", false, false},
	{"X_FORWARDED_PROTO", false, false},
	{"X.Forwarded.Host", false, false},
	{"X-Real_IP", false, false},
	{"X_Real_Ip", false, false},
	{"Client_IP", false, false},
	{"True_Client_IP", false, false},
	{"CF_CONNECTING_IP", false, false},
	{"X.Client.Ip", false, false},
	{"x_cluster_client_ip", false, false},
	{"Fastly_Client_Ip", false, false},
	{"X_Originating_IP", false, false},
	{"X_Original_Forwarded_For", false, false},
	{"X-ProxyUser_Ip", false, false},
	{"X_Forwarded_Anything_Else_With_A_Long_Name_Past_Thirty_Two", false, false},
	{"X-Original-Url", false, true},
	{"X_Original_URL", false, true},
	{"X-Rewrite-Url", false, true},
}

// notForwarding are names that merely look alike and must pass.
var notForwarding = []string{
	"Accept", "X-Request-Id", "X-Real", "Xforwarded-For", "X-Forwarde", "Clientip", "X-Ip", "Forward",
	"X-Client-Ip-Allowlist", "Via", "Authorization",
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, s := range spellings {
		want := forwardingHeader
		if s.always {
			want = overrideHeader
		}
		if got := kindOf(s.name); got != want {
			t.Errorf("kindOf(%q) = %d, want %d", s.name, got, want)
		}
	}
	for _, n := range notForwarding {
		if got := kindOf(n); got != otherHeader {
			t.Errorf("kindOf(%q) = %d, want other", n, got)
		}
	}
}

// The quick first look must let every known name through, and the names
// must be written normalised, or they could never match.
func TestKindOf_ListsAgreeWithQuickLook(t *testing.T) {
	t.Parallel()
	var whole []string
	for n := range kindByName {
		whole = append(whole, n)
		if len(n) > maxNamedLen {
			t.Errorf("%q is longer than maxNamedLen", n)
		}
	}
	whole = append(whole, forwardingSuffixes...)
	for _, p := range forwardingPrefixes {
		whole = append(whole, p+"-q")
	}
	for _, n := range whole {
		if n != normalName(n) {
			t.Errorf("%q is not written normalised", n)
		}
		if !mayBeKnown(n) {
			t.Errorf("mayBeKnown(%q) is false", n)
		}
	}
}

// normalName is the test's own normalisation of a header name.
func normalName(k string) string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(asciiLower(k))
}

// No spelling of a forwarding header reaches the site from an untrusted
// peer; from a trusted proxy the canonical spellings do, the odd ones never.
func TestUpstream_ForwardingHeadersInEverySpelling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
	}{
		{"untrusted", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		{"trusted", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(newUpstream(t, "shop", newEcho(t).URL, Options{TrustedProxies: tc.trusted}))
			t.Cleanup(srv.Close)
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range spellings {
				req.Header[s.name] = []string{forgedMark}
			}
			for _, n := range notForwarding {
				req.Header[n] = []string{"kept"}
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := decodeSeen(t, res, body).Header
			trusted := tc.name == "trusted"
			for _, s := range spellings {
				v := strings.Join(got[http.CanonicalHeaderKey(s.name)], ",")
				kept := strings.Contains(v, forgedMark)
				if want := trusted && s.canonical; kept != want {
					t.Errorf("%s reached the site: %v, want %v (got %q)", s.name, kept, want, v)
				}
			}
			for k, v := range got {
				if !trusted && strings.Contains(strings.Join(v, ","), forgedMark) {
					t.Errorf("the site received %s: %q", k, v)
				}
			}
			for _, n := range notForwarding {
				if got.Get(n) != "kept" {
					t.Errorf("%s was dropped", n)
				}
			}
		})
	}
}

func TestDropForwarded_DoesNotAllocate(t *testing.T) {
	h := browserHeader()
	allocs := testing.AllocsPerRun(100, func() { dropForwarded(h, false) })
	if allocs != 0 {
		t.Errorf("dropForwarded allocates %v times per run", allocs)
	}
}

// browserHeader is what a browser sends with a page request, plus one
// forwarding header a trusted proxy would add.
func browserHeader() http.Header {
	return http.Header{
		"Accept":                    {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		"Accept-Encoding":           {"gzip, deflate, br, zstd"},
		"Accept-Language":           {"en-GB,en;q=0.9"},
		"Cache-Control":             {"no-cache"},
		"Cookie":                    {"session=abc; waitroom_concert=xyz"},
		"Priority":                  {"u=0, i"},
		"Sec-Ch-Ua":                 {`"Chromium";v="130", "Not?A_Brand";v="99"`},
		"Sec-Ch-Ua-Mobile":          {"?0"},
		"Sec-Ch-Ua-Platform":        {`"Linux"`},
		"Sec-Fetch-Dest":            {"document"},
		"Sec-Fetch-Mode":            {"navigate"},
		"Sec-Fetch-Site":            {"none"},
		"Sec-Fetch-User":            {"?1"},
		"Upgrade-Insecure-Requests": {"1"},
		"User-Agent":                {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/130.0 Safari/537.36"},
		"X-Request-Id":              {"4f9c1d"},
	}
}

func BenchmarkDropForwarded(b *testing.B) {
	h := browserHeader()
	b.ReportAllocs()
	for b.Loop() {
		dropForwarded(h, false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h)), "ns/header")
}
