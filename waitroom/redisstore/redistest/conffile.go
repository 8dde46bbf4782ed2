package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// FileOptions say how StartFile runs a node from a configuration file.
type FileOptions struct {
	// Conf is the file's body as an operator writes it (a redis.conf or a
	// sentinel.conf, comments and all). StartFile adds the lines a test
	// needs after it: port, bind 127.0.0.1 and dir, which override any
	// the body has.
	Conf string
	// Sentinel runs `redis-server <file> --sentinel`, as a Sentinel is
	// started; else `redis-server <file>`.
	Sentinel bool
}

// StartFile runs redis-server the way an operator does, from a
// configuration file, on a free loopback port, and kills it when the test
// ends. The file and the node's working directory (dump files; the
// sentinel's rewrite of its file) are in a temporary directory of its own,
// removed with it. Nothing else is added: persistence, replication and
// every other setting are what Conf says, so a test of a shipped file runs
// exactly that file.
func StartFile(tb testing.TB, o FileOptions) *Node {
	tb.Helper()
	n, dir, err := newFileNode(o)
	Require(tb, err)
	tb.Cleanup(func() {
		n.close()
		_ = os.RemoveAll(dir)
	})
	return n
}

func newFileNode(o FileOptions) (*Node, string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", ErrNoBinary
	}
	dir, err := shortTempDir("rf")
	if err != nil {
		return nil, "", err
	}
	conf := filepath.Join(dir, "redis.conf")
	if o.Sentinel {
		conf = filepath.Join(dir, "sentinel.conf")
	}
	args := []string{conf}
	if o.Sentinel {
		args = append(args, "--sentinel")
	}
	// A port free when asked may be taken before the bind (several test
	// packages start servers at once): try another, as startNode does.
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, "", err
		}
		body := fmt.Sprintf("%s\n# added by redistest.StartFile\nport %d\nbind 127.0.0.1\ndir %s\n", o.Conf, port, dir)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return nil, "", fmt.Errorf("redistest: %w", err)
		}
		p, err := launchArgs(bin, args...)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, "", err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if last = p.waitPing("tcp", addr); last == nil {
			return &Node{addr: addr, bin: bin, args: args, proc: p}, dir, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, "", last
}
