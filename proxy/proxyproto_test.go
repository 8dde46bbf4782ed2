package proxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// ppTimeout is the PROXY header timeout of the test servers; their
// http.Server timeouts are far longer, so a connection closed in about
// ppTimeout was closed by the listener.
const ppTimeout = 300 * time.Millisecond

// ppServer serves on a real TCP listener wrapped by ProxyProtocolListener.
// The handler answers "RemoteAddr ClientAddr" and counts its calls.
func ppServer(tb testing.TB, trusted string) (string, *atomic.Int32) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ts := []netip.Prefix{netip.MustParsePrefix(trusted)}
	calls := new(atomic.Int32)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			io.WriteString(w, r.RemoteAddr+" "+ClientAddr(r.RemoteAddr, r.Header, ts).String())
		}),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	go srv.Serve(ProxyProtocolListener(ln, ts, ppTimeout))
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), calls
}

// ppRequest writes header and then a GET with the extra header lines, by
// hand, and returns the response body; err when the server closed the
// connection without a response.
func ppRequest(tb testing.TB, addr string, header []byte, lines ...string) (int, string, error) {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: shop.example\r\n" + strings.Join(append(lines, ""), "\r\n") + "Connection: close\r\n\r\n"
	if _, err := conn.Write(append(header, req...)); err != nil {
		return 0, "", err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, string(body), err
}

// v2Header builds a PROXY v2 header by hand: signature, version and
// command, family and transport, length, then the addresses.
func v2Header(command byte, src, dst netip.AddrPort) []byte {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n")
	b = append(b, 0x20|command)
	if !src.IsValid() {
		return append(b, 0x00, 0, 0) // UNSPEC, no addresses
	}
	family, addrs := byte(0x11), append(src.Addr().AsSlice(), dst.Addr().AsSlice()...) // TCP over IPv4
	if src.Addr().Is6() {
		family = 0x21 // TCP over IPv6
	}
	addrs = binary.BigEndian.AppendUint16(addrs, src.Port())
	addrs = binary.BigEndian.AppendUint16(addrs, dst.Port())
	b = append(b, family)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addrs)))
	return append(b, addrs...)
}

// v2UDP is a v2 PROXY header for a UDP over IPv4 source.
func v2UDP() []byte {
	b := v2Header(1, netip.MustParseAddrPort("203.0.113.7:53"), netip.MustParseAddrPort("192.0.2.10:53"))
	b[13] = 0x12
	return b
}

func TestProxyProtocolListener(t *testing.T) {
	t.Parallel()
	dst4, dst6 := netip.MustParseAddrPort("192.0.2.10:443"), netip.MustParseAddrPort("[2001:db8::10]:443")
	tests := []struct {
		name    string
		trusted string // 127.0.0.0/8: the test client is a trusted balancer
		header  []byte
		lines   []string
		want    string // the handler's answer; "" for no response at all
	}{
		{"v1 from trusted", "127.0.0.0/8", []byte("PROXY TCP4 203.0.113.7 192.0.2.10 56324 443\r\n"), nil,
			"203.0.113.7:56324 203.0.113.7"},
		{"v1 IPv6 from trusted", "127.0.0.0/8", []byte("PROXY TCP6 2001:db8::7 2001:db8::10 4711 443\r\n"), nil,
			"[2001:db8::7]:4711 2001:db8::7"},
		{"v2 from trusted", "127.0.0.0/8", v2Header(1, netip.MustParseAddrPort("203.0.113.7:56324"), dst4), nil,
			"203.0.113.7:56324 203.0.113.7"},
		{"v2 IPv6 from trusted", "127.0.0.0/8", v2Header(1, netip.MustParseAddrPort("[2001:db8::7]:4711"), dst6), nil,
			"[2001:db8::7]:4711 2001:db8::7"},
		{"client behind balancer forges XFF", "127.0.0.0/8", []byte("PROXY TCP4 203.0.113.7 192.0.2.10 56324 443\r\n"),
			[]string{"X-Forwarded-For: 198.51.100.1"}, "203.0.113.7:56324 203.0.113.7"},
		{"v2 LOCAL health check keeps the peer", "127.0.0.0/8", v2Header(0, netip.AddrPort{}, netip.AddrPort{}), nil,
			"127.0.0.1"},
		{"v1 UNKNOWN keeps the peer", "127.0.0.0/8", []byte("PROXY UNKNOWN\r\n"), nil, "127.0.0.1"},
		{"v2 UDP refused", "127.0.0.0/8", v2UDP(), nil, ""},
		{"v2 PROXY without address refused", "127.0.0.0/8", v2Header(1, netip.AddrPort{}, netip.AddrPort{}), nil, ""},
		{"garbled v1 refused", "127.0.0.0/8", []byte("PROXY TCP4 203.0.113.999 192.0.2.10 1 2\r\n"), nil, ""},
		{"trusted without header refused", "127.0.0.0/8", nil, []string{"X-Forwarded-For: 198.51.100.1"}, ""},
		{"untrusted plain HTTP", "10.0.0.0/8", nil, []string{"X-Forwarded-For: 198.51.100.1"}, "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, calls := ppServer(t, tt.trusted)
			status, body, err := ppRequest(t, addr, tt.header, tt.lines...)
			if tt.want == "" {
				if err == nil || calls.Load() != 0 {
					t.Fatalf("got status %d %q, %d handler calls; want the connection closed unanswered", status, body, calls.Load())
				}
				return
			}
			if err != nil || status != http.StatusOK {
				t.Fatalf("status %d, body %q, %v", status, body, err)
			}
			// The answer with the peer's address carries its port, which varies.
			if got := body; !strings.HasPrefix(got, tt.want) || tt.want == "127.0.0.1" && !strings.HasSuffix(got, " 127.0.0.1") {
				t.Errorf("handler saw %q, want %q", got, tt.want)
			}
		})
	}
}

// A stranger's PROXY header is refused: it never reaches the handler, and
// the address in it is never used.
func TestProxyProtocolListener_UntrustedHeaderRefused(t *testing.T) {
	t.Parallel()
	addr, calls := ppServer(t, "10.0.0.0/8")
	for _, h := range [][]byte{
		[]byte("PROXY TCP4 203.0.113.7 192.0.2.10 56324 443\r\n"),
		v2Header(1, netip.MustParseAddrPort("203.0.113.7:56324"), netip.MustParseAddrPort("192.0.2.10:443")),
	} {
		status, body, err := ppRequest(t, addr, h)
		if err == nil && status != http.StatusBadRequest {
			t.Errorf("status %d, body %q; want 400 or a closed connection", status, body)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// A trusted peer that connects and says nothing is let go after the header
// timeout, whatever the http.Server's own timeouts.
func TestProxyProtocolListener_SilentPeerLetGo(t *testing.T) {
	t.Parallel()
	addr, _ := ppServer(t, "127.0.0.0/8")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(start.Add(10 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	took := time.Since(start)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("the server held a silent connection for %v", took)
	case err == nil:
		t.Fatal("the server wrote to a silent connection")
	case took < ppTimeout/2:
		t.Fatalf("closed after %v, before the header timeout %v", took, ppTimeout)
	}
}

func TestProxyProtocolListener_TimeoutIsNeverOff(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for d, want := range map[time.Duration]time.Duration{0: DefaultProxyHeaderTimeout, -1: DefaultProxyHeaderTimeout, time.Second: time.Second} {
		l := ProxyProtocolListener(ln, nil, d)
		if got := l.(*proxyproto.Listener).ReadHeaderTimeout; got != want {
			t.Errorf("timeout %v became %v, want %v", d, got, want)
		}
		if l.Addr() != ln.Addr() {
			t.Error("the wrapper does not report the listener's address")
		}
	}
}
