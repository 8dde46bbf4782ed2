package pass

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cliCheck runs a verifier's command line (prog and its first arguments) on
// one pass: the claims as JSON and exit 0, or the reason and exit 1.
func cliCheck(t *testing.T, f *fixture, prog string, first ...string) {
	jwks := writeFile(t, t.TempDir(), "jwks.json", f.signer.JWKS())
	for _, tc := range []struct {
		name, token, out string
		code             int
	}{
		{"valid", sign(t, f.signer, f.pass, time.Now()), `"room":"concert"`, 0},
		{"expired", sign(t, f.signer, f.pass, time.Now().Add(-time.Hour)), "refused expired: ", 1},
	} {
		args := append(slices.Clone(first), "--jwks", jwks, "--issuer", testIssuer, "--audience", testAudience, "--room", testRoom, tc.token)
		out, err := exec.Command(prog, args...).Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.out) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", tc.name, code, out, tc.code, tc.out)
		}
		if tc.code == 0 {
			var c Claims
			if err := json.Unmarshal(out, &c); err != nil || c.Subject != f.pass.Subject {
				t.Errorf("%s: claims %q: %v", tc.name, out, err)
			}
		}
	}
}

// The Java verifier compiled with javac, run on the command line; the
// Spring interceptor example compiled against stand-ins of the Spring and
// Servlet types it names, and run on stand-in requests.
func TestJava_CommandLineAndInterceptor(t *testing.T) {
	t.Parallel()
	java, javac := lookPath(t, "java"), lookPath(t, "javac")
	classes := t.TempDir()
	srcs, _ := filepath.Glob(filepath.Join(javaDir, "*.java"))
	args := append([]string{"-Xlint:all", "-Werror", "-d", classes, "-sourcepath", filepath.Join("testdata", "javastubs"),
		filepath.Join("testdata", "java", "InterceptorCheck.java")}, srcs...)
	if out, err := exec.Command(javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	f := newFixture(t, time.Now())
	cliCheck(t, f, java, "-cp", classes, "WaitroomPass")

	jwks := writeFile(t, t.TempDir(), "jwks.json", f.signer.JWKS())
	valid := sign(t, f.signer, f.pass, time.Now())
	vip := f.pass
	vip.Room = "vip"
	at := func(path string, passes ...string) string { return path + " " + strings.Join(passes, ",") }
	out, err := exec.Command(java, "-cp", classes, "InterceptorCheck", jwks, testRoom,
		at(testPath, valid), at(testPath, "-"), at(testPath, valid, valid), at(testPath, sign(t, f.signer, vip, time.Now())),
		at(testPath, "x.y.z"), at("/events/8/checkout", valid)).CombinedOutput()
	if err != nil {
		t.Fatalf("InterceptorCheck: %v\n%s", err, out)
	}
	want := "true 200 concert -\n" + strings.Repeat("false 403 - no-store\n", 5)
	if string(out) != want {
		t.Fatalf("interceptor answers:\n%s\nwant:\n%s", out, want)
	}
	// A template room named from the request: event-7's pass opens
	// /event/7 and not /event/8, though made for that path.
	event, other := f.pass, f.pass
	event.Room, event.Path = "event-7", "/event/7"
	other.Room, other.Path = "event-7", "/event/8"
	out, err = exec.Command(java, "-cp", classes, "InterceptorCheck", jwks, "event-*",
		at("/event/7", sign(t, f.signer, event, time.Now())), at("/event/8", sign(t, f.signer, other, time.Now()))).CombinedOutput()
	if err != nil {
		t.Fatalf("InterceptorCheck: %v\n%s", err, out)
	}
	if want := "true 200 event-7 -\nfalse 403 - no-store\n"; string(out) != want {
		t.Fatalf("interceptor, template room:\n%s\nwant:\n%s", out, want)
	}
}

func TestNode_CommandLine(t *testing.T) {
	t.Parallel()
	node := lookPath(t, "node")
	cliCheck(t, newFixture(t, time.Now()), node, nodeModule)
}

// The Express-style middleware, served by node:http.
func TestNode_Middleware(t *testing.T) {
	t.Parallel()
	node := lookPath(t, "node")
	f := newFixture(t, time.Now())
	srv := newJWKSServer(t, f.signer.JWKS())
	down := newJWKSServer(t, nil)
	down.set([]byte("gone"), http.StatusNotFound)
	p := startBatch(t, node, filepath.Join("testdata", "node", "middleware.mjs"), nodeModule, srv.URL, down.URL)
	var port string
	select {
	case port = <-p.lines:
	case <-time.After(2 * time.Minute): // node starts in a second, a busy machine may take far longer
		t.Fatalf("the node server did not start:\n%s", p.stderr)
	}
	valid := sign(t, f.signer, f.pass, time.Now())
	vip := f.pass
	vip.Room = "vip"
	event := f.pass
	event.Room, event.Path = "event-7", "/event/7"
	elsewhere := event
	elsewhere.Path = "/event/8"
	for _, tc := range []struct {
		name, path string
		passes     []string
		status     int
	}{
		{"valid", testPath, []string{valid}, 200},
		{"valid, a query", testPath + "?seats=2", []string{valid}, 200},
		{"another path", "/events/8/checkout", []string{valid}, 403},
		{"none", testPath, nil, 403},
		{"two", testPath, []string{valid, valid}, 403},
		{"another room", testPath, []string{sign(t, f.signer, vip, time.Now())}, 403},
		{"expired", testPath, []string{sign(t, f.signer, f.pass, time.Now().Add(-time.Hour))}, 403},
		{"keys unavailable", "/down", []string{valid}, 503},
		{"template room from the request", "/event/7", []string{sign(t, f.signer, event, time.Now())}, 200},
		{"another event's room", "/event/8", []string{sign(t, f.signer, elsewhere, time.Now())}, 403},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+tc.path, nil)
		for _, v := range tc.passes {
			req.Header.Add(HeaderName, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, p.stderr)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, body, tc.status)
			continue
		}
		var c Claims
		switch {
		case tc.status == 200 && (json.Unmarshal(body, &c) != nil || c.Subject != f.pass.Subject):
			t.Errorf("%s: the handler saw %q", tc.name, body)
		case tc.status != 200 && resp.Header.Get("Cache-Control") != "no-store":
			t.Errorf("%s: a refusal without Cache-Control: no-store", tc.name)
		}
	}
}
