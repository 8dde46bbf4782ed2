package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dynamicUID stands for the uid systemd picks for DynamicUser (61184 to
// 65519); nothing on the machine owns it.
const dynamicUID = 61234

// readUnit reads deploy/systemd/waitroom.service: every directive's values
// in order, and the leading comment's lines.
func readUnit(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "deploy", "systemd", "waitroom.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dirs := map[string][]string{}
	var comment []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "#"); ok {
			comment = append(comment, strings.TrimSpace(c))
		} else if k, v, ok := strings.Cut(line, "="); ok {
			dirs[k] = append(dirs[k], v)
		}
	}
	return dirs, comment
}

// The unit works as its comment installs it: the config file is written
// root-only, LoadCredential copies it into the credentials directory, and
// ExecStart run as a dynamic user reads it there and serves. Stood in for:
// the binary's path (built here), %d (a temp credentials directory laid out
// as systemd does: 0500, files 0400, owned by the service's user),
// DynamicUser (uid and gid 61234, no groups, when the test runs as root;
// otherwise the test's own non-root user) and the optional EnvironmentFile
// (it moves the listeners to free loopback ports through WAITROOM_*).
// Not exercised: the sandboxing directives (ProtectSystem, PrivateTmp,
// SystemCallFilter, CapabilityBoundingSet, UMask and the rest), which need
// systemd itself.
func TestSystemd_UnitRunsAsDynamicUser(t *testing.T) {
	unit, comment := readUnit(t)
	if got := unit["DynamicUser"]; len(got) != 1 || got[0] != "yes" {
		t.Fatalf("DynamicUser=%v, want yes: the test runs the unit that way", got)
	}
	install := map[string]string{} // destination -> source, from the comment
	for _, l := range comment {
		if m := regexp.MustCompile(`^install (?:-D )?-m \d+ (\S+) (\S+)$`).FindStringSubmatch(l); m != nil {
			install[m[2]] = m[1]
		}
	}
	dir, err := os.MkdirTemp("", "systemd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	uid := os.Geteuid()
	if uid == 0 {
		uid = dynamicUID
	}
	creds := filepath.Join(dir, "credentials", "waitroom.service")
	if err := os.MkdirAll(creds, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lc := range unit["LoadCredential"] {
		id, path, _ := strings.Cut(lc, ":")
		src, ok := install[path]
		if !ok {
			t.Fatalf("LoadCredential=%s: no install line of the comment writes %s", lc, path)
		}
		writeCredential(t, filepath.Join(creds, id), filepath.Join("..", "..", src), uid)
	}
	for _, p := range []string{dir, filepath.Dir(creds)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(creds, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(creds, uid, uid); err != nil {
		t.Fatal(err)
	}
	cmd, admin := unitCommand(t, unit, buildBinary(t, dir), creds, uid)
	proc := startProcess(t, cmd)
	waitStatus(t, proc, "http://"+admin+"/healthz", 200, time.Minute)
	proc.signal(t, syscall.SIGTERM) // systemctl stop
	if code := proc.exitCode(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, proc.stderr)
	}
}

// writeCredential copies src to path as systemd does: 0400, owned by uid.
func writeCredential(t *testing.T, path, src string, uid int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// unitCommand is ExecStart with %d expanded and the binary's path replaced,
// in the environment systemd gives a service, as uid; admin is where its
// admin listener will be.
func unitCommand(t *testing.T, unit map[string][]string, bin, creds string, uid int) (cmd *exec.Cmd, admin string) {
	t.Helper()
	if len(unit["ExecStart"]) != 1 || strings.ContainsAny(unit["ExecStart"][0], `"'\$`) {
		t.Fatalf("ExecStart=%v: want one command without quoting or variables", unit["ExecStart"])
	}
	args := strings.Fields(strings.ReplaceAll(unit["ExecStart"][0], "%d", creds))
	if args[0] != "/usr/local/bin/waitroom" {
		t.Fatalf("ExecStart runs %s, not the installed binary", args[0])
	}
	admin = freeAddr(t)
	cmd = exec.Command(bin, args[1:]...)
	cmd.Dir = "/" // a system service's working directory
	cmd.Env = []string{"WAITROOM_ADMIN_LISTEN=" + admin, "WAITROOM_LISTEN=" + freeAddr(t),
		"CREDENTIALS_DIRECTORY=" + creds, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if os.Geteuid() == 0 {
		id := uint32(uid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}}
	}
	return cmd, admin
}
