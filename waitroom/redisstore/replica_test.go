package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A master with a real replica, for the tests of WAIT and of the errors a
// failover brings. redistest's Server listens on a unix socket only, and a
// replica reaches its master over TCP: the test opens a loopback port on
// the master (CONFIG SET port, which Redis 7 allows at run time) and starts
// a redis-server of its own as REPLICAOF it. (redistest is another
// helper's this round; these few lines stay in the tests.)

// replica is a redis-server replicating a master, on a unix socket.
type replica struct {
	cmd  *exec.Cmd
	sock string
	log  *syncBuffer
	done chan struct{}
	once sync.Once
}

// startReplica gives master a TCP port and starts a replica of it, with
// extra redis-server arguments; the test's end stops it. It returns once
// the replica holds the master's data (master_link_status:up).
func startReplica(tb testing.TB, master *redistest.Server, extra ...string) *replica {
	tb.Helper()
	ctx := context.Background()
	port := masterPort(tb, master)
	dir, err := os.MkdirTemp("/tmp", "rr")
	if err != nil {
		tb.Fatal(err)
	}
	r := &replica{sock: filepath.Join(dir, "r.sock"), log: &syncBuffer{}, done: make(chan struct{})}
	args := append([]string{"--port", "0", "--unixsocket", r.sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--replicaof", "127.0.0.1", fmt.Sprint(port)}, extra...)
	r.cmd = exec.Command("redis-server", args...)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		tb.Fatalf("starting a replica: %v", err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	tb.Cleanup(func() {
		r.kill()
		_ = os.RemoveAll(dir)
	})
	c := r.client()
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second) // generous: a busy machine
	for {
		// Linked on both sides: the replica's link is up and the master
		// lists it online (what ROLE, and so WAIT, counts).
		info, _ := c.Info(ctx, "replication").Result()
		minfo, _ := master.Client().Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") && strings.Contains(minfo, "state=online") {
			return r
		}
		if time.Now().After(deadline) {
			tb.Fatalf("replica never linked to its master:\n%s\n%s", info, r.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// masterPort opens a free loopback port on the master and returns it.
// It also makes the master send its data to a new replica at once
// (repl-diskless-sync-delay 0; Redis waits 5 s by default for more
// replicas to share the transfer).
func masterPort(tb testing.TB, master *redistest.Server) int {
	tb.Helper()
	if err := master.Client().ConfigSet(context.Background(), "repl-diskless-sync-delay", "0").Err(); err != nil {
		tb.Fatal(err)
	}
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if err := master.Client().ConfigSet(context.Background(), "port", fmt.Sprint(port)).Err(); err == nil {
			return port
		}
	}
	tb.Fatal("could not open a TCP port on the master")
	return 0
}

// client is a new client of the replica (generous timeouts); the caller
// closes it.
func (r *replica) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.sock, DialTimeout: 10 * time.Second,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, MaxRetries: -1})
}

// freeze stops the replica (SIGSTOP): its connection to the master stays
// open, so the master still counts it, but it acknowledges nothing.
// thaw resumes it.
func (r *replica) freeze(tb testing.TB) {
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
}

func (r *replica) thaw() { _ = r.cmd.Process.Signal(syscall.SIGCONT) }

func (r *replica) kill() {
	r.once.Do(func() {
		_ = r.cmd.Process.Signal(syscall.SIGCONT)
		_ = r.cmd.Process.Kill()
		<-r.done
	})
}

// syncBuffer is a process's output, written and read from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
