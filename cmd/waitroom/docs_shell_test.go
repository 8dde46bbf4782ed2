package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sh blocks of TestDocs_Executed: each runs with bash in a work
// directory of its own, against a gateway of its own.

// docShellPrelude is what runs before a block: the reader's tools, bound
// to this run's gateway. The real curl runs with the block's arguments,
// the documented addresses replaced by this run's, and reports each
// answer's status on stderr; `go run ./cmd/waitroom` and `make build`
// are the built binary. PATH holds nothing else but docTools: a block
// that calls anything more (redis-server, kubectl, a load run) fails with
// "command not found" and is marked "not run" instead, so no block
// starts what the runner cannot stop.
const docShellPrelude = `set -eu
cd "$WR_WORK"
export PATH="$WR_WORK/bin:$WR_WORK/tools"
curl() {
  local a=() x
  for x in "$@"; do
    x=${x//localhost:8080/$WR_PUBLIC}; x=${x//127.0.0.1:8080/$WR_PUBLIC}
    x=${x//localhost:9090/$WR_ADMIN}; x=${x//127.0.0.1:9090/$WR_ADMIN}; x=${x//waitroom-admin:9090/$WR_ADMIN}
    a+=("$x")
  done
  command curl -w '%{stderr}WRCURL %{http_code} %{method} %{url_effective}\n' "${a[@]}"
}
go() {
  if [ "${1:-}" = run ] && [ "${2:-}" = ./cmd/waitroom ]; then shift 2; "$WR_WORK/bin/waitroom" "$@"; return; fi
  echo "docs runner: a block may not run 'go $*'; mark it <!-- not run: why -->" >&2; return 97
}
make() {
  if [ "$*" = build ]; then return 0; fi
  echo "docs runner: a block may not run 'make $*'; mark it <!-- not run: why -->" >&2; return 97
}
`

// docWrapper stands in the work directory as bin/waitroom: serve and demo
// start the real binary in the background on this run's addresses and
// return once it answers (as a reader's terminal shows it running);
// anything else is the real binary.
const docWrapper = `#!/bin/bash
set -u
sub=${1:-serve}
case "$sub" in
  # The demo sets no admin token; the reader's WAITROOM_ADMIN_TOKEN, set
  # for the blocks that serve a file, is not the demo's.
  demo) (unset WAITROOM_ADMIN_TOKEN; exec "$WR_REAL" "$@" --listen "$WR_PUBLIC" --admin "$WR_ADMIN") >>"$WR_LOG" 2>&1 & ;;
  serve) WAITROOM_LISTEN=$WR_PUBLIC WAITROOM_ADMIN_LISTEN=$WR_ADMIN "$WR_REAL" "$@" >>"$WR_LOG" 2>&1 & ;;
  *) exec "$WR_REAL" "$@" ;;
esac
pid=$!
echo $pid >>"$WR_PIDS"
for i in $(seq 1 600); do
  if command curl -s -o /dev/null "http://$WR_ADMIN/healthz"; then exit 0; fi
  if ! kill -0 $pid 2>/dev/null; then echo "docs runner: waitroom $* exited:" >&2; cat "$WR_LOG" >&2; exit 1; fi
  sleep 0.1
done
echo "docs runner: waitroom $* did not answer within 60s" >&2; exit 1
`

// docTools are the programs a block may call besides waitroom, curl's
// companions in the docs' command lines.
var docTools = []string{"curl", "jq", "awk", "sed", "tr", "sleep", "seq", "cat", "head", "grep", "cut", "openssl"}

var startsGateway = regexp.MustCompile(`(?m)(go run \./cmd/waitroom|waitroom) (demo|serve)\b`)

// runDocShell runs a sh block with bash against a fresh gateway.
func runDocShell(t *testing.T, root, bin string, b docBlock) {
	work := t.TempDir()
	for _, d := range []string{"configs", "docs", "loadtest", "deploy"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "bin", "waitroom"), []byte(docWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range docTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is not installed; make deps installs it", tool)
		}
		if err := os.Symlink(p, filepath.Join(work, "tools", tool)); err != nil {
			t.Fatal(err)
		}
	}
	pids, logFile := filepath.Join(work, "pids"), filepath.Join(work, "waitroom.log")
	t.Cleanup(func() { stopDocGateways(t, pids) })
	script := docShellPrelude
	if !startsGateway.MatchString(b.body) {
		start := b.run
		if start == "" {
			start = "demo --bots 0"
		}
		script += `"$WR_WORK/bin/waitroom" ` + start + "\n"
	}
	script += b.body
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
	// The block and whatever it starts are one process group, ended
	// together when the block runs past its time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), docEnv...)
	cmd.Env = append(cmd.Env, "WR_WORK="+work, "WR_REAL="+bin, "WR_PIDS="+pids, "WR_LOG="+logFile,
		"WR_PUBLIC="+freeAddr(t), "WR_ADMIN="+freeAddr(t))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var answers []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "WRCURL "); ok {
			answers = append(answers, rest)
		}
	}
	if strings.Contains(stderr.String(), "command not found") {
		t.Fatalf("%s: the block calls a program the docs runner does not run (it has %v and waitroom); mark it <!-- not run: why -->:\n%s", b, docTools, stderr.String())
	}
	if err != nil {
		gw, _ := os.ReadFile(logFile)
		t.Fatalf("%s: the block fails: %v\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", b, err, stdout.String(), stderr.String(), gw)
	}
	want := strings.Count(b.body, "curl ")
	if len(answers) < want {
		t.Errorf("%s: %d curl commands, %d answers:\n%s", b, want, len(answers), stderr.String())
	}
	for _, a := range answers {
		f := strings.Fields(a) // status method url
		if len(f) != 3 {
			t.Errorf("%s: a curl answer reads %q", b, a)
			continue
		}
		ok := strings.HasPrefix(f[0], "2")
		if u, err := url.Parse(f[2]); err == nil && !ok {
			ok = b.expect[u.Path] == f[0]
		}
		if !ok {
			t.Errorf("%s: %s %s answered %s\nstdout:\n%s", b, f[1], f[2], f[0], stdout.String())
		}
	}
	t.Logf("%s: %d answers: %s", b, len(answers), strings.Join(answers, "; "))
}

// stopDocGateways ends the gateways a block started, by their pids.
func stopDocGateways(t *testing.T, pids string) {
	b, err := os.ReadFile(pids)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			continue
		}
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		_ = p.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for p.Signal(syscall.Signal(0)) == nil && !zombie(pid) {
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.Kill()
			t.Errorf("a gateway a block started (pid %d) did not stop on SIGTERM within 30s", pid)
		}
	}
}

// zombie reports whether pid has exited and waits for its reaper: an
// orphan's reaper may be slow, and it serves nothing any more.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}
