package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds the command as the Dockerfile does (CGO_ENABLED=0,
// so the binary runs anywhere: in a temp root, as another user) into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "waitroom")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// process is the real binary, running.
type process struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan struct{} // closed once it exited
	err    error         // Wait's answer, once done
}

// startProcess starts cmd and kills it when the test ends if it still runs.
func startProcess(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// exitCode waits up to d for the process to end and returns its exit code.
func (p *process) exitCode(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("still running after %s; stderr:\n%s", d, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// signal sends sig to the process.
func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// probe GETs url as the kubelet's httpGet probe does (a 1 s timeout, no
// keep-alive) and returns the status, 0 when nothing answers.
func probe(url string) (int, string) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitStatus probes url until it answers want, failing after d with the
// process's stderr.
func waitStatus(t *testing.T, p *process, url string, want int, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		code, body := probe(url)
		if code == want {
			return body
		}
		select {
		case <-p.done:
			t.Fatalf("%s: the process exited (%v) before answering %d; stderr:\n%s", url, p.err, want, p.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d %q after %s, want %d; stderr:\n%s", url, code, body, d, want, p.stderr)
		}
	}
}

// A start-up error is reported, not a panic: on a port already taken the
// binary names the address and the cause on stderr and exits 1.
func TestStart_BusyPortPrintsCause(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := filepath.Join(dir, "waitroom.yaml")
	yml := "listen: " + taken.Addr().String() + "\nadmin: { listen: \"\" }\nupstreams: { site: { url: \"http://127.0.0.1:1\" } }\n" +
		"routes: [ { path: /, upstream: site } ]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, exec.Command(bin, "serve", "--config", cfg))
	if code := p.exitCode(t, time.Minute); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	out := p.stdout.String() + p.stderr.String()
	for _, bad := range []string{"panic", "goroutine"} {
		if strings.Contains(out, bad) {
			t.Errorf("the output has %q:\n%s", bad, out)
		}
	}
	if s := p.stderr.String(); !strings.Contains(s, taken.Addr().String()) || !strings.Contains(s, "address already in use") {
		t.Errorf("stderr does not name the address and the cause:\n%s", s)
	}
}
