package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Both keys are 32 bytes of "0123456789abcdef0123456789abcdef": the three
// gateways must share them, or a ticket one signed is a stranger's at the
// next.
const cookieKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// roomName is the room every run fills; roomKey is a key in its hash slot
// (redisstore keeps room R in "{wr:R}:..."), which names the Cluster node
// that serves the room.
const (
	roomName = "concert"
	roomKey  = "{wr:" + roomName + "}"
)

// Build compiles ./cmd/waitroom once into dir, as the Dockerfile does
// (CGO_ENABLED=0), and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "waitroom")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "github.com/waitroom/waitroom/cmd/waitroom")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Room is the room's settings, the figures the checker holds the gateways to.
type Room struct {
	MaxActive    int
	AdmitRate    string        // e.g. "20/s"
	Tick         time.Duration // how often the line moves
	SessionTTL   time.Duration
	AbandonAfter time.Duration
	RefreshMax   time.Duration // page.refresh is 1s, the least allowed
	Join         string        // rooms.<name>.join: "decide" or "batched"
}

// DefaultRoom keeps max_active the binding limit: sessions last about a
// second (a few site requests then a release), so 8 inside admit ~6/s,
// below admit_rate.
func DefaultRoom() Room {
	return Room{MaxActive: 8, AdmitRate: "20/s", Tick: 250 * time.Millisecond,
		SessionTTL: 20 * time.Second, AbandonAfter: 30 * time.Second, RefreshMax: 3 * time.Second, Join: "decide"}
}

// StoreConfig is the gateways' store.redis section: addrs and, for
// Sentinel, the master's name.
type StoreConfig struct {
	Addrs      []string
	MasterName string
}

// config is one gateway's file: its own listeners, the shared store,
// cookie keys and room, the checker as the upstream.
func config(listen, admin, upstream string, st StoreConfig, r Room) string {
	addrs := make([]string, len(st.Addrs))
	for i, a := range st.Addrs {
		addrs[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(`listen: %q
admin: { listen: %q }
log: { level: info }
store:
  kind: redis
  on_error: closed
  redis: { addrs: [%s], master_name: %q }
cookie: { secure: false, hash_keys: [%q], block_keys: [%q] }
upstreams:
  site: { url: %q, timeout: 30s }
rooms:
  %s:
    max_active: %d
    admit_rate: %s
    tick: %s
    session_ttl: %s
    abandon_after: %s
    join_limit: unlimited
    join: %s
    page: { refresh: 1s, refresh_max: %s }
routes:
  - { path: /events/, upstream: site, room: %s }
`, listen, admin, strings.Join(addrs, ", "), st.MasterName, cookieKey, cookieKey, upstream,
		roomName, r.MaxActive, r.AdmitRate, r.Tick, r.SessionTTL, r.AbandonAfter, r.Join, r.RefreshMax, roomName)
}

// Gateway is one running waitroom process.
type Gateway struct {
	URL   string // the visitor listener, "http://127.0.0.1:port"
	admin string
	cmd   *exec.Cmd
	out   *lockedBuffer
	done  chan struct{}
	dead  atomic.Bool // killed by a fault: the load balancer sends nobody there
}

// StartGateway writes a config into dir and starts bin on it, waiting up to
// a minute until its /readyz answers.
func StartGateway(ctx context.Context, bin, dir, upstream string, st StoreConfig, r Room) (*Gateway, error) {
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "waitroom-"+strings.ReplaceAll(listen, ":", "-")+".yaml")
	if err := os.WriteFile(cfg, []byte(config(listen, admin, upstream, st, r)), 0o600); err != nil {
		return nil, err
	}
	g := &Gateway{URL: "http://" + listen, admin: "http://" + admin, out: &lockedBuffer{}, done: make(chan struct{})}
	g.cmd = exec.Command(bin, "serve", "--config", cfg)
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	g.cmd.SysProcAttr = sysProcAttr()
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	if err := g.waitReady(ctx); err != nil {
		g.Kill()
		return nil, err
	}
	return g, nil
}

func (g *Gateway) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	for {
		if resp, err := c.Get(g.admin + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-g.done:
			return fmt.Errorf("gateway %s exited before it was ready:\n%s", g.URL, g.out)
		case <-ctx.Done():
			return fmt.Errorf("gateway %s not ready after a minute:\n%s", g.URL, g.out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill ends the process with SIGKILL, as an OOM kill or a lost node does:
// no shutdown, whatever the admitter was doing. Visitors stop choosing it
// first, as a load balancer's health check would soon after.
func (g *Gateway) Kill() {
	g.dead.Store(true)
	_ = g.cmd.Process.Kill()
	<-g.done
}

// Log is what the process wrote, for a failure's message.
func (g *Gateway) Log() string { return g.out.String() }

// freeAddr is a free loopback port below Linux's ephemeral range (32768
// on): a port from :0 is closed again before the gateway listens on it, and
// in between any outgoing loopback connection may take it; nothing takes
// these unasked.
func freeAddr() (string, error) {
	for range 100 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("no free port below the ephemeral range")
}

// lockedBuffer collects a process's output while others read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil // a megabyte of log says enough
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
