package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost,
// named cn, and its key, as PEM files.
func writeCert(t *testing.T, certFile, keyFile, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Written beside and renamed, as cert-manager's atomic writer does.
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: kb}} {
		if err := os.WriteFile(file+".tmp", pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			t.Fatal(err)
		}
	}
}

// peerCN is the common name of the certificate a connection presented.
func peerCN(cs *tls.ConnectionState) string {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return ""
	}
	return cs.PeerCertificates[0].Subject.CommonName
}

// HTTPS with HTTP/2; the certificate files replaced serve new connections
// the new certificate without dropping an open one; the redirect listener
// answers 308.
func TestTLS_FilesHTTP2ReloadAndRedirect(t *testing.T) {
	_, site := newUpstream(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCert(t, cert, key, "first")
	cfg := gwConfig(site.URL, "    max_active: 5") + fmt.Sprintf("tls: { cert_file: %q, key_file: %q, redirect_listen: \"127.0.0.1:0\" }\n", cert, key)
	app, base := startGateway(t, cfg)
	https := strings.Replace(base, "http://", "https://", 1)
	client := func() *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	}
	old := client()
	res, err := old.Get(https + "/static/a")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.ProtoMajor != 2 || peerCN(res.TLS) != "first" {
		t.Fatalf("first request: %s, certificate %q", res.Proto, peerCN(res.TLS))
	}
	time.Sleep(1100 * time.Millisecond) // a handshake looks at the files at most once a second
	writeCert(t, cert, key, "second")
	res, err = client().Get(https + "/static/b")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if peerCN(res.TLS) != "second" {
		t.Fatalf("a new connection after the files changed got %q", peerCN(res.TLS))
	}
	var reused bool
	req, _ := http.NewRequest("GET", https+"/static/c", nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
	res, err = old.Do(req)
	if err != nil {
		t.Fatalf("the open connection was dropped: %v", err)
	}
	res.Body.Close()
	if !reused || peerCN(res.TLS) != "first" {
		t.Fatalf("the open connection: reused %t, certificate %q", reused, peerCN(res.TLS))
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.Get("http://" + app.RedirectAddr().String() + "/events/1?seat=3")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	_, port, _ := net.SplitHostPort(app.Addr().String())
	if want := "https://127.0.0.1:" + port + "/events/1?seat=3"; res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Fatalf("redirect: %d %q, want 308 %q", res.StatusCode, res.Header.Get("Location"), want)
	}
}

// A TLS configuration that cannot work is refused at load time.
func TestTLS_ConfigProblems(t *testing.T) {
	_, site := newUpstream(t)
	for _, tt := range []struct{ tls, want string }{
		{`{ cert_file: /nonexistent.crt }`, "cert_file and key_file go together"},
		{`{ cert_file: /nonexistent.crt, key_file: /nonexistent.key }`, "cannot load"},
		{`{ min_version: "1.1" }`, "min_version"},
		{`{ redirect_listen: ":80" }`, "needs TLS"},
		{`{ acme: { domains: ["a/b"] } }`, "acme.domains[0]"},
	} {
		_, err := parseConfig("t.yaml", []byte(gwConfig(site.URL, "    max_active: 1")+"tls: "+tt.tls+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("tls %s: %v, want %q", tt.tls, err, tt.want)
		}
	}
}
