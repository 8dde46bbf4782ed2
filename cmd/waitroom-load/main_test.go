package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gatewayBin is the real gateway, built once for the package's tests: it
// is a main package, so the tests run it as a process, as an operator does.
var gatewayBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "waitroom-load")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gatewayBin = filepath.Join(dir, "waitroom")
	out, err := exec.Command("go", "build", "-o", gatewayBin, "github.com/waitroom/waitroom/cmd/waitroom").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the gateway: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const (
	testAdminToken = "load-test-admin-token-0123456789"
	testKey        = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes
)

// spikeRoom is the room of most tests: a line forms at once, and moves at
// a pace the order check can follow.
const spikeRoom = `{max_active: 20, admit_rate: 3000/m, tick: 100ms, join_limit: unlimited, page: {refresh: 1s, refresh_max: 2s}}`

// gatewayConfig is one room "spike" on every path, in front of upstream;
// store is a YAML flow mapping such as `{kind: memory}`, room one such as
// spikeRoom (join_limit unlimited: every virtual visitor comes from this
// machine's one network).
func gatewayConfig(listen, admin, upstream, store, room string) string {
	return fmt.Sprintf(`
listen: %[1]q
admin: { listen: %[2]q, token: %[3]q }
log: { level: error }
store: %[4]s
cookie: { secure: false, hash_keys: [%[6]q], block_keys: [%[6]q] }
upstreams:
  site: { url: %[5]q, timeout: 5s }
rooms:
  spike: %[7]s
routes:
  - { path: /, upstream: site, room: spike }
`, listen, admin, testAdminToken, store, upstream, testKey, room)
}

// gateway is a running `waitroom serve`.
type gateway struct {
	url, admin string
}

// startGateway runs the gateway with a config made by gatewayConfig until
// the test ends, and waits until its admin listener says it is ready.
func startGateway(t testing.TB, upstream, store string) gateway {
	t.Helper()
	return startGatewayRoom(t, upstream, store, spikeRoom)
}

// startGatewayRoom is startGateway with the room's settings given.
func startGatewayRoom(t testing.TB, upstream, store, room string) gateway {
	t.Helper()
	g := gateway{url: "http://" + freeAddr(t), admin: "http://" + freeAddr(t)}
	path := filepath.Join(t.TempDir(), "waitroom.yaml")
	yaml := gatewayConfig(g.url[len("http://"):], g.admin[len("http://"):], upstream, store, room)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gatewayBin, "serve", "--config", path)
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(g.admin + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		select {
		case <-exited:
			t.Fatalf("the gateway exited:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway was not ready in 15s: %v\n%s", err, log.String())
		}
	}
}

// freeAddr is a loopback address with a port nobody listens on just now.
func freeAddr(t testing.TB) string {
	t.Helper()
	// Below Linux's ephemeral range (32768 on): a port from :0 is closed
	// again before the tool listens on it, and in between any outgoing
	// loopback connection (the gateway's to Redis, say) may take it as its
	// local port. Nothing takes these unasked.
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

// runJSON runs the command with -json and returns its exit status and
// summary.
func runJSON(t testing.TB, args ...string) (int, summary, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(args, "-json"), &stdout, &stderr, nil)
	var s summary
	if code != 2 {
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
			t.Fatalf("exit %d, no JSON summary: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
		}
	}
	return code, s, stderr.String()
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// spikeArgs are 300 visitors ramping over 2s into the gateway, with the
// counting upstream on upstream and the limits read from the admin API.
// The run ends when the last visitor has left (seconds on an idle
// machine); -duration and -timeout only bound it, generously, for a busy
// one.
func spikeArgs(g gateway, upstream string) []string {
	return []string{"-target", g.url + "/tickets?show=1", "-visitors", "300", "-ramp", "2s", "-duration", "3m",
		"-timeout", "1m", "-requests", "2", "-think", "20ms", "-upstream", upstream,
		"-admin", g.admin, "-admin-token", testAdminToken, "-room", "spike"}
}
