// Package redistest runs throwaway redis-server processes for tests, shaped
// like net/http/httptest: Start gives a server on a unix socket in a
// temporary directory, without persistence, and stops it when the test
// ends; Stop, Restart, Pause and Resume stage outages. StartCluster gives a
// Redis Cluster on loopback ports. For failovers, StartSentinel gives a
// Sentinel group (a master, two replicas, three sentinels) and
// StartClusterReplicas a Cluster whose masters have replicas; their Nodes
// are killed (Kill), frozen (Pause, Resume) or restarted empty (Restart),
// and WaitSwitch and WaitPromoted say when a replica took over.
//
// Without a redis-server binary the tests skip, saying why, unless
// WAITROOM_REQUIRE_REDIS=1 or CI=true: then they fail, so CI cannot pass by
// testing nothing.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoBinary is New's error when redis-server is not in PATH.
var ErrNoBinary = errors.New("redis-server not found; install Debian's redis-server")

// startTimeout bounds the wait for a new server to answer PING.
const startTimeout = 15 * time.Second

// Server is a redis-server on a unix socket, with no persistence: a restart
// starts empty, as a Redis without save or appendonly does.
type Server struct {
	bin  string
	dir  string
	sock string

	mu     sync.Mutex
	proc   *proc // nil while stopped
	client redis.UniversalClient
}

// Start starts a server for the test and stops it when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	Require(tb, err)
	tb.Cleanup(s.Close)
	return s
}

// Require turns an error from New or NewCluster into the test's outcome:
// a missing binary skips the test (fails it under WAITROOM_REQUIRE_REDIS=1
// or CI=true); any other error fails it.
func Require(tb testing.TB, err error) {
	tb.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoBinary) && !required():
		tb.Skipf("skipping: %v (set WAITROOM_REQUIRE_REDIS=1 to fail instead)", err)
	default:
		tb.Fatal(err)
	}
}

func required() bool {
	return os.Getenv("WAITROOM_REQUIRE_REDIS") == "1" || os.Getenv("CI") == "true"
}

// New starts a server without a test, for TestMain; the caller must Close
// it. The error is ErrNoBinary when there is no redis-server.
func New() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoBinary
	}
	dir, err := shortTempDir("rt")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, sock: filepath.Join(dir, "r.sock")}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// shortTempDir makes a temporary directory whose socket path stays well
// under the ~100 bytes a unix socket path may have: in TMPDIR when that is
// short, in /tmp otherwise.
func shortTempDir(pattern string) (string, error) {
	parent := os.TempDir()
	if len(parent) > 60 {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", fmt.Errorf("redistest: %w", err)
	}
	return dir, nil
}

// Addr is the server's unix socket path, the same across restarts.
func (s *Server) Addr() string { return s.sock }

// Client returns a client of the server, made on first use and closed with
// the server. Its timeouts are generous, for tests on a loaded machine;
// tests of timeouts make their own.
func (s *Server) Client() redis.UniversalClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		s.client = s.NewClient()
	}
	return s.client
}

// NewClient returns a new client of the server; the caller closes it.
//
// Its timeouts are a minute: on a busy machine a pipeline of a thousand
// scripts may take longer than seconds to answer, and a timeout makes
// go-redis send it again, running scripts that are not idempotent twice
// (a placement answered as an already placed ticket).
func (s *Server) NewClient() redis.UniversalClient {
	return redis.NewClient(&redis.Options{
		Addr: s.sock, DialTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
	})
}

// Stop kills the server; clients get errors until Restart. Stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
}

// Restart stops the server if it runs and starts an empty one on the same
// socket, so clients reconnect to it by themselves.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	return s.start()
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		_ = s.client.Close()
		s.client = nil
	}
	s.stop()
	_ = os.RemoveAll(s.dir)
}

func (s *Server) start() error {
	p, err := launch(s.bin, s.dir, "--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700")
	if err != nil {
		return err
	}
	if err := p.waitPing("unix", s.sock); err != nil {
		return err
	}
	s.proc = p
	return nil
}

func (s *Server) stop() {
	if s.proc != nil {
		s.proc.kill()
		s.proc = nil
	}
}

// proc is a running redis-server.
type proc struct {
	cmd  *exec.Cmd
	log  *lockedBuffer // its stdout and stderr
	done chan struct{} // closed once it exited and was reaped
}

// launch starts redis-server in dir with persistence off and args added.
func launch(bin, dir string, args ...string) (*proc, error) {
	return launchArgs(bin, append([]string{"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"}, args...)...)
}

// launchArgs starts redis-server with exactly args: a sentinel wants its
// config file first.
func launchArgs(bin string, args ...string) (*proc, error) {
	p := &proc{cmd: exec.Command(bin, args...), log: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = sysProcAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("redistest: starting %s: %w", bin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// kill ends the server at once: tests of restarts want an empty Redis, not
// a graceful one.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// waitPing waits until the server answers PING, or kills it and reports
// its log. It speaks RESP by hand: a go-redis client would log every
// refused dial.
func (p *proc) waitPing(network, addr string) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := ping(network, addr)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		p.kill()
		return fmt.Errorf("redistest: redis-server on %s did not answer PING: %v\n%s", addr, err, p.log)
	}
}

func ping(network, addr string) error {
	c, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// lockedBuffer collects the server's output, written by exec's copying
// goroutine and read in error messages.
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

// Pause freezes the server (SIGSTOP) without closing its socket: clients
// connect and send, and wait for replies that do not come, as with a Redis
// stuck on a slow command or a swapping host. Resume thaws it.
func (s *Server) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("redistest: pausing a stopped server")
	}
	return pause(s.proc.cmd.Process, true)
}

// Resume lets a paused server run again.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("redistest: resuming a stopped server")
	}
	return pause(s.proc.cmd.Process, false)
}

// Long marks a test too slow for -short runs. It skips under -short on a
// developer's machine, but never where Redis tests are required (CI=true or
// WAITROOM_REQUIRE_REDIS=1): there every test runs, whatever the flags.
func Long(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() && !required() {
		tb.Skipf("skipping %s in -short mode", what)
	}
}
