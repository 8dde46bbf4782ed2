package proxy

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// headerAddrs are the addresses that can be read anywhere in s: every run
// of address characters, as an address, as an address and port, or up to
// its last ":". It is the test's own generous reading, so an address
// ClientAddr returns from a header must be among them.
func headerAddrs(s string) map[netip.Addr]bool {
	set := map[netip.Addr]bool{}
	isAddrByte := func(c byte) bool {
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '.' || c == ':'
	}
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isAddrByte(s[j]) {
			j++
		}
		if run := s[i:j]; run != "" {
			if a, err := netip.ParseAddr(run); err == nil {
				set[a.Unmap()] = true
			}
			if ap, err := netip.ParseAddrPort(run); err == nil {
				set[ap.Addr().Unmap()] = true
			}
			if k := strings.LastIndexByte(run, ':'); k > 0 {
				if a, err := netip.ParseAddr(run[:k]); err == nil {
					set[a.Unmap()] = true
				}
			}
		}
		i = max(j, i+1)
	}
	return set
}

// lines splits the fuzzer's text into header lines; "" is no header.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.1:5000", "203.0.113.7, 10.1.1.1", "")
	f.Add("10.0.0.1:5000", "", `for="[2001:db8::7]:4711";proto=https, for=10.1.1.1`)
	f.Add("203.0.113.1:5000", "198.51.100.9", "for=198.51.100.9")
	f.Add("[::ffff:10.0.0.1]:80", "::ffff:203.0.113.7\n10.2.2.2", "")
	f.Add("10.0.0.1:5000", "", `for=unknown, for="_hidden", for="203.0.113.7:_p"`)
	f.Add("10.0.0.1:5000", "", `for="203.0.113.7;by="a,b\"", for=10.1.1.1`)
	f.Add("10.0.0.1", "[2001:db8::7]:443,,garbage, fe80::1%eth0", "")
	f.Add("@", "203.0.113.7", "")
	f.Add("[2001:db8:ffff::2]:443", longChain(), "")
	f.Fuzz(func(t *testing.T, peer, xff, fwd string) {
		h := http.Header{}
		if l := lines(xff); l != nil {
			h["X-Forwarded-For"] = l
		}
		if l := lines(fwd); l != nil {
			h["Forwarded"] = l
		}
		got := ClientAddr(peer, h, testTrusted)
		p, ok := clientAddr(peer)
		switch {
		case !ok:
			if got.IsValid() {
				t.Fatalf("ClientAddr(%q) = %v for a peer that is no address", peer, got)
			}
			return
		case got.Zone() != "" || got.Is4In6():
			t.Fatalf("ClientAddr = %v: zoned or IPv4-mapped", got)
		case !containsAddr(testTrusted, p) && got != p:
			t.Fatalf("untrusted peer %q: ClientAddr = %v, want the peer", peer, got)
		case got == p:
			return
		}
		used := fwd
		if h["X-Forwarded-For"] != nil {
			used = xff
		}
		if !headerAddrs(used)[got] {
			t.Fatalf("ClientAddr = %v, which is neither the peer %v nor in the header read %q", got, p, used)
		}
		if containsAddr(testTrusted, got) {
			return
		}
		// An untrusted result is where the walk stopped: whatever a
		// client adds to the left of the list cannot change it.
		key, forged := "X-Forwarded-For", "198.51.100.66"
		if used == fwd {
			key, forged = "Forwarded", "for=198.51.100.66"
		}
		h[key] = append([]string{forged}, h[key]...)
		if again := ClientAddr(peer, h, testTrusted); again != got {
			t.Fatalf("a forged entry on the left changed the client from %v to %v", got, again)
		}
	})
}

// oddCase flips the case of every other letter and swaps "-", "_" and ".":
// another spelling of the same name to a CGI server.
func oddCase(k string) string {
	b := []byte(k)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = "_."[i%2]
		case c == '_' || c == '.':
			b[i] = '-'
		case i%2 == 0 && 'a' <= c && c <= 'z':
			b[i] = c - 32
		case i%2 == 0 && 'A' <= c && c <= 'Z':
			b[i] = c + 32
		}
	}
	return string(b)
}

func FuzzHeaderKind(f *testing.F) {
	for _, s := range spellings {
		f.Add(s.name)
	}
	for _, n := range notForwarding {
		f.Add(n)
	}
	f.Add("")
	f.Add("X")
	f.Add("x-forwarded-for-x-forwarded-for-x-forwarded-for-x")
	f.Fuzz(func(t *testing.T, k string) {
		kind := kindOf(k)
		n := normalName(k)
		want := kindByName[n]
		for _, p := range forwardingPrefixes {
			if strings.HasPrefix(n, p) {
				want = max(want, forwardingHeader)
			}
		}
		for _, s := range forwardingSuffixes {
			if strings.HasSuffix(n, s) {
				want = max(want, forwardingHeader)
			}
		}
		if kind != want {
			t.Fatalf("kindOf(%q) = %d, want %d", k, kind, want)
		}
		if other := oddCase(k); kindOf(other) != kind {
			t.Fatalf("kindOf(%q) = %d but kindOf(%q) = %d", k, kind, other, kindOf(other))
		}
		for _, trusted := range []bool{false, true} {
			h := http.Header{k: {"v"}, "Accept": {"*/*"}}
			dropForwarded(h, trusted)
			_, kept := h[k]
			wantKept := kind == otherHeader || trusted && kind == forwardingHeader && !strings.ContainsAny(k, "_.")
			if k == "Accept" {
				wantKept = true
			}
			if kept != wantKept || h.Get("Accept") != "*/*" {
				t.Fatalf("dropForwarded(%q, trusted %v): kept %v, want %v; left %v", k, trusted, kept, wantKept, h)
			}
		}
	})
}
