package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/pass"
)

// writeEd25519 writes a PKCS#8 PEM Ed25519 key, as openssl genpkey writes
// them.
func writeEd25519(t *testing.T, path string) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// passSite records the passes and visitor ids it was sent.
type passSite struct {
	mu     sync.Mutex
	passes []string
	who    []string
}

func (s *passSite) last() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.passes) == 0 {
		return "", ""
	}
	return s.passes[len(s.passes)-1], s.who[len(s.who)-1]
}

func newPassSite(t *testing.T) (*passSite, string) {
	s := &passSite{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.passes = append(s.passes, strings.Join(r.Header.Values("Waitroom-Pass"), "|")+strings.Join(r.Header.Values("Waitroom_Pass"), "|"))
		s.who = append(s.who, r.Header.Get("Waitroom-Visitor"))
		s.mu.Unlock()
		fmt.Fprint(w, "site:"+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// Every request the gateway forwards for an admitted visitor carries a
// pass the site verifies against the gateway's key set, with the Go, Java
// and Node verifiers alike; a client's own pass never reaches the site; a
// pass is for one room and one site; after a key rotation a pass signed
// with the old key verifies while the old key is published.
func TestPass_MadeByTheGatewayVerifiedEverywhere(t *testing.T) {
	t.Parallel()
	site, url := newPassSite(t)
	dir := t.TempDir()
	oldKey, newKey := filepath.Join(dir, "old.pem"), filepath.Join(dir, "new.pem")
	writeEd25519(t, oldKey)
	writeEd25519(t, newKey)
	cfg := gwConfig(url, "    max_active: 5") + fmt.Sprintf("pass: { key_files: [%q], issuer: tickets, ttl: 120s }\n", oldKey)
	// A long ttl: the JVM and Node start one after the other on a busy
	// machine, and this test is about who verifies, not for how long
	// (TestPass_RevokedWithinBound is).
	app, base, path, _ := fileGateway(t, cfg, false)
	v := newVisitor(t, base)
	if r := v.do(http.MethodGet, "/events/1", "Waitroom-Pass", "forged", "Waitroom_Pass", "forged"); r.body != "site:/events/1" {
		t.Fatalf("admitted request: %d %q", r.status, r.body)
	}
	token, visitor := site.last()
	if token == "" || strings.Contains(token, "forged") {
		t.Fatalf("the site got pass %q", token)
	}
	newVisitor(t, base).get("/about") // no room: no pass, and no forged one
	if p, _ := site.last(); p != "" {
		t.Fatalf("a request outside any room carried %q", p)
	}
	keys, err := pass.NewRemoteJWKS(base+"/.waitroom/jwks.json", pass.RemoteOptions{MinRefetch: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(token, room, aud string) (pass.Claims, error) {
		vf, err := pass.NewVerifier(pass.VerifierOptions{Keys: keys, Audience: aud, Issuer: "tickets"})
		if err != nil {
			t.Fatal(err)
		}
		return vf.Verify(context.Background(), token, room)
	}
	c, err := verify(token, "concert", "site")
	if err != nil || c.Subject != visitor || c.Room != "concert" || c.Ticket == 0 || c.ExpiresAt-c.IssuedAt != 120 || c.Path != "/events/1" {
		t.Fatalf("Go verifier: %+v, %v (visitor %q)", c, err, visitor)
	}
	if _, err := verify(token, "festival", "site"); pass.Reason(err) != "room" {
		t.Fatalf("another room: %v", err)
	}
	if _, err := verify(token, "concert", "other-site"); pass.Reason(err) != "audience" {
		t.Fatalf("another site: %v", err)
	}
	_, _, adminSet := newAdmin(t, app).do("GET", "/admin/api/jwks", "")
	res, err := http.Get(base + "/.waitroom/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	visitorSet, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.TrimSpace(adminSet) != strings.TrimSpace(string(visitorSet)) {
		t.Fatalf("the two key sets differ:\n%s\n%s", adminSet, visitorSet)
	}
	for _, tool := range []struct{ prog, file string }{
		{"java", filepath.Join("..", "..", "docs", "integrations", "pass", "java", "WaitroomPass.java")},
		{"node", filepath.Join("..", "..", "docs", "integrations", "pass", "node", "waitroom-pass.mjs")},
	} {
		bin, err := exec.LookPath(tool.prog)
		if err != nil {
			t.Fatalf("%s is needed (make deps installs it): %v", tool.prog, err)
		}
		answer := runVerifier(t, bin, tool.file, base+"/.waitroom/jwks.json", "concert\t"+token, "festival\t"+token)
		if !strings.HasPrefix(answer[0], "ok ") || !strings.Contains(answer[0], visitor) || !strings.HasPrefix(answer[1], "refused room") {
			t.Fatalf("%s verifier: %q", tool.prog, answer)
		}
	}
	// Rotation: the new key signs, the old one is still published.
	rewrite(t, path, strings.Replace(cfg, fmt.Sprintf("[%q]", oldKey), fmt.Sprintf("[%q, %q]", newKey, oldKey), 1))
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	w := newVisitor(t, base)
	w.get("/events/2")
	rotated, _ := site.last()
	if head(rotated) == head(token) {
		t.Fatal("the new key does not sign after the rotation")
	}
	time.Sleep(1100 * time.Millisecond) // past MinRefetch: the verifier may fetch the new set
	for _, tk := range []string{token, rotated} {
		if _, err := verify(tk, "concert", "site"); err != nil {
			t.Fatalf("after the rotation: %v", err)
		}
	}
}

// head is a JWS's protected header, which names its key.
func head(jws string) string {
	h, _, _ := strings.Cut(jws, ".")
	return h
}

// runVerifier runs a site's verifier in its batch mode, one pass per line.
func runVerifier(t *testing.T, bin, file, jwks string, lines ...string) []string {
	t.Helper()
	cmd := exec.Command(bin, file, "--jwks", jwks, "--issuer", "tickets", "--audience", "site", "--min-refetch", "1")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var answers []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		answers = append(answers, sc.Text())
	}
	if err := cmd.Wait(); err != nil || len(answers) != len(lines) {
		t.Fatalf("%s: %v, %d answers\n%s", bin, err, len(answers), stderr.String())
	}
	return answers
}
