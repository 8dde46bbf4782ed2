package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/pass"
)

// lineVerifier is a site's verifier in its batch mode, started once and
// asked one "room TAB path TAB token" line at a time.
type lineVerifier struct {
	mu    sync.Mutex
	in    io.WriteCloser
	lines *bufio.Scanner
}

func startLineVerifier(t *testing.T, prog, file, jwks string) *lineVerifier {
	t.Helper()
	bin, err := exec.LookPath(prog)
	if err != nil {
		t.Fatalf("%s is needed (make deps installs it): %v", prog, err)
	}
	cmd := exec.Command(bin, file, "--jwks", jwks, "--issuer", "waitroom", "--audience", "site")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	return &lineVerifier{in: in, lines: bufio.NewScanner(out)}
}

// reason is "" for a pass accepted, else the refusal's reason.
func (v *lineVerifier) reason(t *testing.T, room, path, token string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := fmt.Fprintf(v.in, "%s\t%s\t%s\n", room, path, token); err != nil {
		t.Fatalf("writing to a verifier: %v", err)
	}
	if !v.lines.Scan() {
		t.Fatalf("a verifier exited: %v", v.lines.Err())
	}
	line := v.lines.Text()
	if strings.HasPrefix(line, "ok ") {
		return ""
	}
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "refused" {
		t.Fatalf("a verifier answered %q", line)
	}
	return f[1]
}

// The revocation bound, measured: a visitor leaves, the gateway makes no
// pass for it again, and the last pass the site was given is refused by
// the Go, Java and Node verifiers, with their default leeway (5s), within
// the default pass.ttl (10s) plus that leeway: 15s after leaving.
func TestPass_RevokedWithinBound(t *testing.T) {
	t.Parallel()
	site, url := newPassSite(t)
	key := filepath.Join(t.TempDir(), "pass.pem")
	writeEd25519(t, key)
	_, base := startGateway(t, gwConfig(url, "    max_active: 5")+fmt.Sprintf("pass: { key_files: [%q] }\n", key))
	jwks := base + "/.waitroom/jwks.json"
	keys, err := pass.NewRemoteJWKS(jwks, pass.RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	goV, err := pass.NewVerifier(pass.VerifierOptions{Keys: keys, Audience: "site", Issuer: "waitroom"})
	if err != nil {
		t.Fatal(err)
	}
	verifiers := map[string]func(token string) string{
		"go": func(token string) string {
			_, err := goV.VerifyFor(context.Background(), token, pass.Expect{Room: "concert", Path: "/events/1"})
			return pass.Reason(err)
		},
	}
	for _, tool := range []struct{ name, prog, file string }{
		{"java", "java", filepath.Join("..", "..", "docs", "integrations", "pass", "java", "WaitroomPass.java")},
		{"node", "node", filepath.Join("..", "..", "docs", "integrations", "pass", "node", "waitroom-pass.mjs")},
	} {
		lv := startLineVerifier(t, tool.prog, tool.file, jwks)
		verifiers[tool.name] = func(token string) string { return lv.reason(t, "concert", "/events/1", token) }
	}
	// Up and answering before the pass is made: a JVM that starts slowly
	// on a busy machine must not spend the pass's life.
	for name, verify := range verifiers {
		if reason := verify("not.a.pass"); reason != "malformed" {
			t.Fatalf("%s on garbage: %q", name, reason)
		}
	}

	v := newVisitor(t, base)
	if r := v.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("admitted request: %d %q", r.status, r.body)
	}
	token, visitor := site.last()
	// Every verifier takes the pass first (the JVM starts meanwhile).
	for name, verify := range verifiers {
		if reason := verify(token); reason != "" {
			t.Fatalf("%s refused a fresh pass: %s", name, reason)
		}
	}
	left := time.Now()
	if r := v.do("POST", "/.waitroom/leave?room=concert"); r.status/100 != 2 && r.status/100 != 3 {
		t.Fatalf("leave: %d", r.status)
	}
	v.get("/events/1") // a newcomer now: whatever it gets, no pass of the old session
	site.mu.Lock()
	for _, who := range site.who[1:] {
		if who == visitor {
			t.Error("the gateway forwarded the visitor who left as the same session")
		}
	}
	site.mu.Unlock()

	const bound = pass.DefaultTTL + pass.DefaultLeeway
	var wg sync.WaitGroup
	var mu sync.Mutex
	took := map[string]time.Duration{}
	for name, verify := range verifiers {
		wg.Go(func() {
			for time.Since(left) < bound+60*time.Second {
				// A verifier asked after the bound must refuse: it reads
				// its clock no earlier than the question was sent. (Its
				// answer may come later on a busy machine; that is no
				// part of the bound.)
				sent := time.Since(left)
				if reason := verify(token); reason != "" {
					mu.Lock()
					took[name] = sent
					mu.Unlock()
					if reason != "expired" {
						t.Errorf("%s: refused as %q, want expired", name, reason)
					}
					return
				}
				if sent > bound {
					t.Errorf("%s: accepted a pass asked about %v after the visitor left, past the bound %v", name, sent, bound)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	t.Logf("pass of a visitor who left refused when asked after: %v (bound %v: pass.ttl %v + leeway %v)", took, bound, pass.DefaultTTL, pass.DefaultLeeway)
	for name := range verifiers {
		if _, ok := took[name]; !ok {
			t.Errorf("%s: never refused the pass", name)
		}
	}
}
