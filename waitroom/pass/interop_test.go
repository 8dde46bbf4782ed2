package pass

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The verifiers for sites, relative to this package.
var (
	javaSource = filepath.Join("..", "..", "docs", "integrations", "pass", "java", "WaitroomPass.java")
	javaDir    = filepath.Dir(javaSource)
	nodeModule = filepath.Join("..", "..", "docs", "integrations", "pass", "node", "waitroom-pass.mjs")
)

// interopLeeway is the verifiers' leeway in the scenario: wider than the
// default 5s, since a JVM that starts slowly on a busy machine would
// otherwise see "expired within the leeway" expire before it is asked.
const interopLeeway = 30 * time.Second

// verifyFunc asks one verifier about one pass: the refusal's reason, or ""
// and the claims.
type verifyFunc func(tb testing.TB, token string, want Expect) (string, Claims)

// scenario holds a verifier to the contract: every case of fixture.cases
// against a key set served over HTTP, a flood of made-up kids, and a
// rotation. The verifier must fetch from srv with a MinRefetch of 1s.
func scenario(t *testing.T, f *fixture, srv *jwksServer, verify verifyFunc) {
	// Up, with the key set fetched, before the cases are made: a JVM that
	// starts (or a fetch that times out) slowly on a busy machine must not
	// spend the cases' margins, which count from f.now.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		reason, _ := verify(t, sign(t, f.signer, f.pass, time.Now()), Expect{})
		if reason == "" {
			break
		}
		if reason != "keys_unavailable" || time.Now().After(deadline) {
			t.Fatalf("a fresh pass before the scenario: %q", reason)
		}
	}
	f.now = time.Now()
	srv.fetches.Store(0)
	start := time.Now()
	mine := Expect{Room: testRoom, Path: testPath}
	for _, tc := range f.cases(t) {
		reason, c := verify(t, tc.token, Expect{Room: tc.room, Path: tc.path})
		if reason != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.name, reason, tc.reason)
		}
		if tc.want != nil && reason == "" && !reflect.DeepEqual(c, *tc.want) {
			t.Errorf("%s: claims %+v, want %+v", tc.name, c, *tc.want)
		}
	}
	for range 50 {
		if reason, _ := verify(t, sign(t, f.strangerSigner, f.pass, f.now), mine); reason != "unknown_key" {
			t.Fatalf("a made-up kid: %q", reason)
		}
	}
	// One fetch to start, and at most one more per MinRefetch since.
	if n, most := srv.fetches.Load(), 2+int64(time.Since(start)/time.Second); n > most {
		t.Errorf("%d key set fetches in %v, want at most %d", n, time.Since(start), most)
	}

	// Rotation: the old key is withdrawn. A set fetched before still has
	// it; once a fetch is due (here, an unknown kid after MinRefetch) it is
	// gone, and passes it signed are refused.
	old, cur := sign(t, f.oldSigner, f.pass, time.Now()), sign(t, f.signer, f.pass, time.Now())
	srv.set(newSigner(t, testIssuer, testTTL, f.cur).JWKS(), 200)
	if reason, _ := verify(t, old, mine); reason != "" {
		t.Errorf("the old key, before the set is fetched again: %q, want it accepted", reason)
	}
	time.Sleep(1100 * time.Millisecond)
	if reason, _ := verify(t, sign(t, f.strangerSigner, f.pass, time.Now()), mine); reason != "unknown_key" {
		t.Errorf("a made-up kid after MinRefetch: %q", reason)
	}
	if reason, _ := verify(t, old, mine); reason != "unknown_key" {
		t.Errorf("the old key, withdrawn: %q, want unknown_key", reason)
	}
	if reason, _ := verify(t, cur, mine); reason != "" {
		t.Errorf("the current key after the rotation: %q", reason)
	}
}

func TestInterop_Go(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	srv := newJWKSServer(t, f.signer.JWKS())
	remote := newRemote(t, srv.URL, RemoteOptions{MinRefetch: time.Second})
	v, err := NewVerifier(VerifierOptions{Keys: remote, Issuer: testIssuer, Audience: testAudience, Leeway: interopLeeway})
	if err != nil {
		t.Fatal(err)
	}
	scenario(t, f, srv, func(tb testing.TB, token string, want Expect) (string, Claims) {
		c, err := v.VerifyFor(context.Background(), token, want)
		return Reason(err), c
	})
}

func TestInterop_Java(t *testing.T) {
	t.Parallel()
	java := lookPath(t, "java")
	f := newFixture(t, time.Now())
	srv := newJWKSServer(t, f.signer.JWKS())
	p := startBatch(t, java, javaSource, "--jwks", srv.URL, "--issuer", testIssuer, "--audience", testAudience, "--min-refetch", "1", "--leeway", "30")
	scenario(t, f, srv, p.verify)
}

func TestInterop_Node(t *testing.T) {
	t.Parallel()
	node := lookPath(t, "node")
	f := newFixture(t, time.Now())
	srv := newJWKSServer(t, f.signer.JWKS())
	p := startBatch(t, node, nodeModule, "--jwks", srv.URL, "--issuer", testIssuer, "--audience", testAudience, "--min-refetch", "1", "--leeway", "30")
	scenario(t, f, srv, p.verify)
}

// batch is a Java or Node verifier started once, asked about one pass per
// line ("room TAB path TAB token"), answering one line each.
type batch struct {
	in     io.WriteCloser
	lines  chan string
	stderr *syncBuffer
}

// syncBuffer is the verifier's stderr: the process writes it while a
// failing test prints it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startBatch(tb testing.TB, prog string, args ...string) *batch {
	tb.Helper()
	cmd := exec.Command(prog, args...)
	b := &batch{lines: make(chan string), stderr: new(syncBuffer)}
	cmd.Stderr = b.stderr
	var err error
	if b.in, err = cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		b.in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		defer close(b.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
	}()
	return b
}

func (b *batch) verify(tb testing.TB, token string, want Expect) (string, Claims) {
	tb.Helper()
	if _, err := io.WriteString(b.in, want.Room+"\t"+want.Path+"\t"+token+"\n"); err != nil {
		tb.Fatalf("writing to the verifier: %v\n%s", err, b.stderr)
	}
	var line string
	select {
	case l, ok := <-b.lines:
		if !ok {
			tb.Fatalf("the verifier exited:\n%s", b.stderr)
		}
		line = l
	case <-time.After(3 * time.Minute): // the first answer waits for a JVM to compile the verifier, on a busy machine
		tb.Fatalf("no answer in 3 minutes:\n%s", b.stderr)
	}
	return parseAnswer(tb, line)
}

// parseAnswer reads "ok {claims}" or "refused reason detail".
func parseAnswer(tb testing.TB, line string) (string, Claims) {
	tb.Helper()
	verdict, rest, _ := strings.Cut(line, " ")
	switch verdict {
	case "ok":
		var c Claims
		if err := json.Unmarshal([]byte(rest), &c); err != nil {
			tb.Fatalf("claims %q: %v", rest, err)
		}
		return "", c
	case "refused":
		reason, _, _ := strings.Cut(rest, " ")
		return reason, Claims{}
	}
	tb.Fatalf("unexpected answer %q", line)
	return "", Claims{}
}
