package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStartFile: a node runs the file it is given (its settings are in
// effect, its port the one the helper added), a sentinel started from
// its file monitors what the file says, and a file redis-server refuses
// is an error that carries redis-server's own complaint.
func TestStartFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := StartFile(t, FileOptions{Conf: "# a comment\nmaxmemory-policy noeviction\nmin-replicas-max-lag 7\nport 1\n"})
	c := n.Client()
	for key, want := range map[string]string{"maxmemory-policy": "noeviction", "min-replicas-max-lag": "7", "port": n.Addr()[strings.LastIndex(n.Addr(), ":")+1:]} {
		got, err := c.ConfigGet(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got[key] != want {
			t.Errorf("CONFIG GET %s = %q, want %q", key, got[key], want)
		}
	}

	host, port := splitAddr(n.Addr())
	s := StartFile(t, FileOptions{Sentinel: true, Conf: fmt.Sprintf("sentinel monitor m %s %s 1\nsentinel down-after-milliseconds m 4321\n", host, port)})
	v, err := s.Client().Do(ctx, "SENTINEL", "MASTER", "m").Result()
	if err != nil {
		t.Fatal(err)
	}
	if f := fields(v); f["down-after-milliseconds"] != "4321" || f["port"] != port {
		t.Errorf("SENTINEL MASTER m: %v", f)
	}

	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(ErrNoBinary)
	}
	_, _, err = newFileNode(FileOptions{Conf: "no-such-directive yes\n"})
	if err == nil || !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("a refused file: %v", err)
	}
}
