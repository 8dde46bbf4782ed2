package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// pebble is Let's Encrypt's test CA, run by the test on loopback: its
// ACME directory and what it has printed.
type pebble struct {
	dir, caFile string
	mu          sync.Mutex
	out         bytes.Buffer
}

func (p *pebble) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *pebble) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// findPebble finds the pebble binary: on PATH, or where `go install` puts
// it. Without it the test skips on a developer's machine and fails in CI.
func findPebble(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("pebble"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "pebble")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "pebble not found; install it with: go install github.com/letsencrypt/pebble/v2/cmd/pebble@latest"
	if os.Getenv("CI") != "" || os.Getenv("WAITROOM_REQUIRE_REDIS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freeAddr is a free loopback port for a program the test starts. It is
// below Linux's ephemeral range (32768 on): a port from :0 is closed again
// before the program listens on it, and in between any outgoing loopback
// connection may take it as its local port. Nothing takes these unasked.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err != nil {
			continue
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// startPebble runs pebble with validation skipped (loopback cannot be
// reached by a CA) until the test ends.
func startPebble(t *testing.T) *pebble {
	t.Helper()
	bin := findPebble(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "pebble.crt"), filepath.Join(dir, "pebble.key")
	writeCert(t, cert, key, "pebble")
	listen := freeAddr(t)
	cfg, _ := json.Marshal(map[string]any{"pebble": map[string]any{
		"listenAddress": listen, "managementListenAddress": freeAddr(t),
		"certificate": cert, "privateKey": key, "httpPort": 5002, "tlsPort": 5001,
		"ocspResponderURL": "", "externalAccountBindingRequired": false,
	}})
	cfgFile := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pebble{dir: "https://" + listen + "/dir", caFile: cert}
	cmd := exec.Command(bin, "-config", cfgFile)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_ALWAYS_VALID=1", "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	cmd.Stdout, cmd.Stderr = p, p
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// handshake connects to addr as a browser asking for host and returns the
// certificate it was shown.
func handshake(t *testing.T, addr, host string) *tls.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: host, InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("handshake for %s: %v", host, err)
	}
	defer conn.Close()
	cs := conn.ConnectionState()
	return &tls.Certificate{Leaf: cs.PeerCertificates[0]}
}

// ACME against pebble: a certificate is obtained on the first handshake,
// and a second instance sharing the Redis store serves it without asking
// the CA again.
func TestACME_ObtainedOnceSharedThroughRedis(t *testing.T) {
	pb := startPebble(t)
	srv := redistest.Start(t)
	_, site := newUpstream(t)
	cfg := redisConfig(site.URL, "    max_active: 5", srv.Addr(), "closed", "acme") +
		fmt.Sprintf("tls: { acme: { domains: [shop.test], email: ops@shop.test, directory_url: %q, ca_file: %q } }\n", pb.dir, pb.caFile)
	a, _ := startGateway(t, cfg)
	start := time.Now()
	first := handshake(t, a.Addr().String(), "shop.test")
	t.Logf("certificate obtained in %v, issuer %q", time.Since(start), first.Leaf.Issuer.CommonName)
	if len(first.Leaf.DNSNames) != 1 || first.Leaf.DNSNames[0] != "shop.test" || !strings.Contains(first.Leaf.Issuer.CommonName, "Pebble") {
		t.Fatalf("certificate for %v from %q", first.Leaf.DNSNames, first.Leaf.Issuer.CommonName)
	}
	orders := strings.Count(pb.log(), "Issued certificate")
	b, _ := startGateway(t, cfg)
	second := handshake(t, b.Addr().String(), "shop.test")
	if second.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) != 0 {
		t.Fatalf("the second instance serves another certificate (serial %v, want %v)", second.Leaf.SerialNumber, first.Leaf.SerialNumber)
	}
	if now := strings.Count(pb.log(), "Issued certificate"); now != orders || orders != 1 {
		t.Fatalf("pebble issued %d certificates, then %d; want one in all:\n%s", orders, now, pb.log())
	}
	if _, err := tls.Dial("tcp", a.Addr().String(), &tls.Config{ServerName: "other.test", InsecureSkipVerify: true}); err == nil {
		t.Fatal("a handshake for a name outside acme.domains succeeded")
	}
}
