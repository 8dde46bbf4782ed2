package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseFlags_Defaults(t *testing.T) {
	t.Parallel()
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.target.String() != "http://localhost:8080/" || c.profile != "ramp" || c.visitors != 1000 ||
		c.duration != time.Minute || c.after != "leave" || c.accept != "html" || c.expectMax != -1 {
		t.Errorf("defaults: %+v", c)
	}
	if len(c.targets) != 1 || c.targets[0] != c.target || c.spread != "visitor" {
		t.Errorf("default targets %v, spread %q; want the one target, visitor", c.targets, c.spread)
	}
	c, err = parseFlags([]string{"-target", "http://127.0.0.1:1/t?x=1, http://127.0.0.1:2/t?x=1", "-spread", "request"}, io.Discard)
	if err != nil || len(c.targets) != 2 || c.target.Host != "127.0.0.1:1" || c.targets[1].Host != "127.0.0.1:2" || c.spread != "request" {
		t.Errorf("two targets: %v, %q, %v", c.targets, c.spread, err)
	}
	c, err = parseFlags([]string{"-profile", "steady", "-rate", "600/m", "-ramp", "5s"}, io.Discard)
	if err != nil || c.rate != 10 || c.visitors != 0 {
		t.Errorf("steady 600/m: rate %v/s, visitors %d, %v; want 10/s, no cap", c.rate, c.visitors, err)
	}
}

func TestParseFlags_Refuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-visitors", "-5"}, "-visitors: must be from 1 to 200000, got -5"},
		{[]string{"-visitors", "0"}, "-visitors: must be from 1"},
		{[]string{"-profile", "burst"}, `-profile: want ramp, steady or step, got "burst"`},
		{[]string{"-profile", "steady"}, `-rate: want "<n>/s"`},
		{[]string{"-profile", "steady", "-rate", "600"}, `-rate: want "<n>/s", "<n>/m" or "<n>/h" with n > 0, got "600"`},
		{[]string{"-profile", "step", "-rate", "5/s", "-steps", "0"}, "-steps: must be from 1 to 100"},
		{[]string{"-rate", "5/s"}, "-rate: only for -profile steady or step"},
		{[]string{"-profile", "steady", "-rate", "5/s", "-steps", "3"}, "-steps: only for -profile step, got 3"},
		{[]string{"-target", "ftp://x/"}, "-target: want an http:// or https:// URL"},
		{[]string{"-target", "localhost:8080"}, "-target: want an http:// or https:// URL"},
		{[]string{"-target", "http:///x"}, "-target: want a host"},
		{[]string{"-admin", "http://u:p@127.0.0.1:9090"}, "-admin: user info is not allowed"},
		{[]string{"-duration", "0s"}, "-duration: must be more than 0 and at most 30m"},
		{[]string{"-duration", "31m"}, "-duration: must be more than 0 and at most 30m"},
		{[]string{"-duration", "5s", "-ramp", "10s"}, "-ramp: must be from 0 to -duration (5s), got 10s"},
		{[]string{"-grace", "-1s"}, "-grace: must be from 0 to 1m"},
		{[]string{"-timeout", "0s"}, "-timeout: must be more than 0"},
		{[]string{"-requests", "-1"}, "-requests: must be from 0 to 1000, got -1"},
		{[]string{"-think", "-1ms"}, "-think: must be from 0 to 1m"},
		{[]string{"-after", "stay"}, `-after: want leave or idle, got "stay"`},
		{[]string{"-accept", "xml"}, `-accept: want html or json, got "xml"`},
		{[]string{"-expect-rate", "fast"}, `-expect-rate: want "<n>/s"`},
		{[]string{"-expect-max-active", "-2"}, "-expect-max-active: must be >= 0, got -2"},
		{[]string{"-room", "a/b"}, "-room: want a room name"},
		{[]string{"-target", "http://127.0.0.1:1/a,http://localhost:2/a"}, "-target: several targets must differ only in port"},
		{[]string{"-target", "http://127.0.0.1:1/a,http://127.0.0.1:2/b"}, "-target: several targets must differ only in port"},
		{[]string{"-target", "http://127.0.0.1:1/,http://127.0.0.1:1/"}, "-target: 127.0.0.1:1 is listed twice"},
		{[]string{"-spread", "random"}, `-spread: want visitor or request, got "random"`},
		{[]string{"-conns", "-1"}, "-conns: must be from 0 (no cap) to 200000, got -1"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-nope"}, "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			_, err := parseFlags(tt.args, io.Discard)
			var fe *flagError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a flagError containing %q", err, tt.want)
			}
		})
	}
}

// Every problem is reported at once, not the first alone.
func TestParseFlags_AllProblems(t *testing.T) {
	t.Parallel()
	_, err := parseFlags([]string{"-visitors", "-1", "-after", "x", "-accept", "y"}, io.Discard)
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("want three problems on three lines, got %v", err)
	}
}

func TestCheckLoopback(t *testing.T) {
	t.Parallel()
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		case "mixed.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.0.2.7")}, nil
		case "remote.test":
			return []netip.Addr{netip.MustParseAddr("192.0.2.8")}, nil
		}
		return nil, errors.New("no such host")
	}
	tests := []struct {
		url, want string // want "" means allowed
	}{
		{"http://127.0.0.1:8080/", ""},
		{"http://127.8.9.10/", ""},
		{"http://[::1]:8080/", ""},
		{"http://[::ffff:127.0.0.1]/", ""},
		{"http://localhost:8080/", ""},
		{"http://192.0.2.1/", "192.0.2.1 is not a loopback address"},
		{"http://[2001:db8::1]/", "2001:db8::1 is not a loopback address"},
		{"http://0.0.0.0:8080/", "0.0.0.0 is not a loopback address"},
		{"http://remote.test/", "remote.test resolves to 192.0.2.8, not a loopback address"},
		{"http://mixed.test/", "mixed.test resolves to 192.0.2.7, not a loopback address"},
		{"http://unknown.test/", "resolving unknown.test: no such host"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			u, _ := url.Parse(tt.url)
			err := checkLoopback(context.Background(), "target", u, lookup)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("checkLoopback(%s) = %v, want %q", tt.url, err, tt.want)
			}
		})
	}
	remote, _ := url.Parse("http://remote.test/")
	if err := checkTargets(context.Background(), config{target: remote, targets: []*url.URL{remote}, allowRemote: true}, lookup); err != nil {
		t.Errorf("-allow-remote still refused: %v", err)
	}
	admin, _ := url.Parse("http://192.0.2.9:9090")
	local, _ := url.Parse("http://127.0.0.1/")
	if err := checkTargets(context.Background(), config{target: local, targets: []*url.URL{local}, admin: admin}, lookup); err == nil || !strings.HasPrefix(err.Error(), "-admin ") {
		t.Errorf("a remote -admin: %v, want refused", err)
	}
	// Every gateway of a list is checked, not only the first.
	if err := checkTargets(context.Background(), config{target: local, targets: []*url.URL{local, remote}}, lookup); err == nil || !strings.Contains(err.Error(), "remote.test") {
		t.Errorf("a remote second -target: %v, want refused", err)
	}
}

// The command exits 2 on a bad command line or a refused target, without
// sending a request.
func TestRun_UsageExitsTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-visitors", "-5"},
		{"-target", "http://192.0.2.1/"},
		{"-admin", "http://192.0.2.1:9090", "-target", "http://127.0.0.1:1/"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr, nil); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "waitroom-load: -") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and the problem on stderr", args, code, stdout.String(), stderr.String())
		}
	}
}
