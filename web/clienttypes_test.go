package web

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The types name what client.js and challenge.js really export, the
// fields of the JSON answer as StatusBody encodes them and every state an
// answer can carry.
func TestClientTypes_MatchTheScripts(t *testing.T) {
	t.Parallel()
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dts, client, solver, answer := read("static/client.d.ts"), read("static/client.js"), read("static/challenge.js"), read("../waitroom/answer.go")
	block := func(name string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)interface ` + name + ` \{(.*?)\n  \}`).FindStringSubmatch(dts)
		if m == nil {
			t.Fatalf("client.d.ts has no interface %s", name)
		}
		return m[1]
	}
	members := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`(?m)^    (?:readonly )?(\w+)\??[(:]`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	m := regexp.MustCompile(`root\.waitroom = \{([^}]*)\}`).FindStringSubmatch(client)
	if m == nil {
		t.Fatal("client.js sets no root.waitroom")
	}
	var exported []string
	for _, kv := range strings.Split(m[1], ",") {
		k, _, _ := strings.Cut(strings.TrimSpace(kv), ":")
		exported = append(exported, strings.TrimSpace(k))
	}
	slices.Sort(exported)
	if got := members(block("Client")); !slices.Equal(got, exported) {
		t.Errorf("Waitroom.Client declares %v, client.js exports %v", got, exported)
	}
	var fields []string
	st := reflect.TypeFor[StatusBody]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	slices.Sort(fields)
	if got := members(block("Answer")); !slices.Equal(got, fields) {
		t.Errorf("Waitroom.Answer declares %v, the JSON answer has %v", got, fields)
	}
	var states, declared []string
	for _, m := range regexp.MustCompile(`Answer\w+ AnswerState = "(\w+)"`).FindAllStringSubmatch(answer, -1) {
		states = append(states, m[1])
	}
	union := regexp.MustCompile(`(?s)type State =(.*?);`).FindStringSubmatch(dts)
	if union == nil {
		t.Fatal("client.d.ts has no Waitroom.State")
	}
	for _, m := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(union[1], -1) {
		declared = append(declared, m[1])
	}
	slices.Sort(states)
	slices.Sort(declared)
	if len(states) < 10 || !slices.Equal(states, declared) {
		t.Errorf("Waitroom.State is %v, the answer states are %v", declared, states)
	}
	for _, g := range regexp.MustCompile(`root\.(waitroomSolve\w*) = function`).FindAllStringSubmatch(solver, -1) {
		if !strings.Contains(dts, "declare var "+g[1]+": Waitroom.Solve;") {
			t.Errorf("challenge.js exports %s, which client.d.ts does not declare", g[1])
		}
	}
}

// The types compile with a real TypeScript compiler (Debian's
// node-typescript, installed by .ci/deps) under --strict: the examples of
// docs/client.md compile, and misuse of the API does not.
func TestClientTypes_DocsCompile(t *testing.T) {
	tsc, err := exec.LookPath("tsc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tsc not found; .ci/deps installs node-typescript")
		}
		t.Skip("tsc not found (install node-typescript)")
	}
	doc, err := os.ReadFile("../docs/client.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```ts\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/client.md has %d TypeScript blocks", len(blocks))
	}
	types, err := os.ReadFile("static/client.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	// One compiler run per set (tsc takes seconds to start on a busy
	// machine); each file is a module of its own, as a reader pastes one
	// block, and errors name their file.
	compile := func(srcs []string) string {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "client.d.ts"), types, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--noEmit", "--strict", "--target", "es2020", "--lib", "es2020,dom"}
		for i, src := range srcs {
			file := filepath.Join(dir, fmt.Sprintf("f%d.ts", i))
			src = "/// <reference path=\"./client.d.ts\" />\n" + src + "\nexport {};\n"
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, file)
		}
		cmd := exec.Command(tsc, args...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	var good []string
	for _, b := range blocks {
		good = append(good, b[1])
	}
	if out := compile(good); strings.TrimSpace(out) != "" {
		t.Errorf("docs/client.md's blocks do not compile (f0 is the first block):\n%s", out)
	}
	// Misuse the types must catch, each on its own.
	bad := []string{
		`waitroom.enter(42);`,
		`waitroom.enter("concert").then((a) => a.eta_seconds.toFixed());`,
		`waitroom.enter("concert").then((a) => { if (a.state === "queued") {} });`,
		`waitroom.enter("concert", { return_to: "/x" });`,
		`const v: 2 = waitroom.version;`,
		`waitroom.leave();`,
		`window.waitroomSolve("p", "14");`,
	}
	out := compile(bad)
	for i, src := range bad {
		if !strings.Contains(out, fmt.Sprintf("f%d.ts(", i)) {
			t.Errorf("tsc accepted %q:\n%s", src, out)
		}
	}
}

// The types are served beside the script.
func TestClientTypes_Served(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	p.ClientTypes(rec, httptest.NewRequest("GET", "/.waitroom/client.d.ts", nil))
	want, err := os.ReadFile("static/client.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != 200 || rec.Body.String() != string(want) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/typescript") ||
		rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET client.d.ts: %d %v (%d bytes)", rec.Code, rec.Header(), rec.Body.Len())
	}
}
