package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The docs are executed (STYLE 11: a curl line in the README is a program
// its reader runs as written). TestDocs_Executed reads every fenced block
// of README.md, docs/*.md and docs/integrations/**/README.md and runs what
// a reader copies, against the real binary:
//
//   - yaml: a configuration, or a fragment of one merged into a minimal
//     valid file (docBase), through `waitroom check`;
//   - sh: a bash script against a fresh gateway: the demo (`demo --bots 0`,
//     so nobody waits ahead of the reader), or what a `<!-- run: ARGS -->`
//     line before the block names (`serve --config configs/waitroom.yaml`);
//     a block that starts `waitroom demo` or `serve` itself runs it. Every
//     curl must get a 2xx (an `<!-- expect: STATUS PATH (why) -->` line
//     before the block names an answer it documents otherwise, for that
//     block and path only), and the block must exit 0;
//   - json: an example answer, which must parse;
//   - a fence without a language: output or prose, which must not hold a
//     command (a command is labelled sh and run, or marked).
//
// A block another test runs as its reader does (a redis.conf, say)
// carries `<!-- run by: TestName (how) -->`: the runner checks that the
// test exists in this package, and the test finds the block by that mark.
// A block nobody runs carries `<!-- not run: why -->` on the line before
// it; both are counted and listed. Any other block, a Go or Java excerpt
// say, fails, naming its file and line.

// docBlock is one fenced block of a doc.
type docBlock struct {
	file string // relative to the repository's root
	line int    // of the opening fence, 1-based
	lang string
	body string
	// notRun is the reason of a "not run" mark, run the arguments of a
	// "run" line, runBy the test a "run by" mark names, from the marks on
	// the lines just before the fence.
	notRun, run, runBy string
	// expect are the answers other than 2xx the block documents, from
	// `<!-- expect: STATUS PATH (why) -->` marks: the status, by path.
	expect map[string]string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d (```%s)", b.file, b.line, b.lang) }

var (
	fenceOpen  = regexp.MustCompile("^(\\s*)(```+)([A-Za-z0-9_+-]*)\\s*$")
	notRunMark = regexp.MustCompile(`^<!--\s*not run:\s*(.+?)\s*-->$`)
	runMark    = regexp.MustCompile(`^<!--\s*run:\s*(.+?)\s*-->$`)
	runByMark  = regexp.MustCompile(`^<!--\s*run by:\s*(Test\w+)\s+\(.+\)\s*-->$`)
	expectMark = regexp.MustCompile(`^<!--\s*expect:\s*([1-5][0-9][0-9])\s+(/\S*)\s+\(.+\)\s*-->$`)
	anyMark    = regexp.MustCompile(`^<!--.*-->$`)
)

// docFiles are the docs a reader copies from, relative to the root.
func docFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{"README.md"}
	for _, glob := range []string{"docs/*.md", "docs/integrations/README.md", "docs/integrations/*/README.md", "deploy/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	sort.Strings(files[1:])
	return files
}

// parseDocBlocks finds the fenced blocks of text, the file's content; an
// indented fence (in a list) is read without its indentation.
func parseDocBlocks(file, text string) ([]docBlock, error) {
	var out []docBlock
	lines := strings.Split(text, "\n")
	// marks are the HTML comments on the non-blank lines just before a
	// fence; any other line ends them.
	var marks []string
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			if s := strings.TrimSpace(lines[i]); anyMark.MatchString(s) {
				marks = append(marks, s)
			} else if s != "" {
				marks = nil
			}
			continue
		}
		b := docBlock{file: file, line: i + 1, lang: strings.ToLower(m[3])}
		for _, mark := range marks {
			if mm := notRunMark.FindStringSubmatch(mark); mm != nil {
				b.notRun = mm[1]
			}
			if mm := runMark.FindStringSubmatch(mark); mm != nil {
				b.run = mm[1]
			}
			if mm := runByMark.FindStringSubmatch(mark); mm != nil {
				b.runBy = mm[1]
			}
			if mm := expectMark.FindStringSubmatch(mark); mm != nil {
				if b.expect == nil {
					b.expect = map[string]string{}
				}
				b.expect[mm[2]] = mm[1]
			}
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == m[2] {
				closed = true
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], m[1]))
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: a fence that never closes", file, b.line)
		}
		b.body = strings.Join(body, "\n") + "\n"
		out = append(out, b)
		marks = nil
	}
	return out, nil
}

// docTestExists says whether a test function named name is declared in
// this package's test files (the tests run in the package's directory).
func docTestExists(name string) bool {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		return false
	}
	decl := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(t \*testing\.T\) \{$`)
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && decl.Match(b) {
			return true
		}
	}
	return false
}

// commandWords begin a line that is a command, not output ("$" is a
// shell prompt).
var commandWords = map[string]bool{"go": true, "curl": true, "make": true, "bin/waitroom": true, "waitroom": true,
	"kubectl": true, "docker": true, "redis-server": true, "redis-cli": true, "java": true, "node": true, "k6": true,
	"npm": true, "systemctl": true, "export": true, "openssl": true, "sudo": true, "$": true, "nginx": true}

// classify says what the runner does with b: "config", "shell", "json",
// "text", "skip", "test" (another test runs it), or an error naming why
// it cannot.
func classify(b docBlock) (string, error) {
	if b.notRun != "" {
		return "skip", nil
	}
	if b.runBy != "" {
		if !docTestExists(b.runBy) {
			return "", fmt.Errorf("%s: the block is marked run by %s, which is no test of cmd/waitroom", b, b.runBy)
		}
		return "test", nil
	}
	switch b.lang {
	case "yaml", "yml":
		return "config", nil
	case "sh", "bash", "shell":
		return "shell", nil
	case "json":
		return "json", nil
	case "", "text":
		for _, l := range strings.Split(b.body, "\n") {
			if f := strings.Fields(l); len(f) > 0 && commandWords[f[0]] {
				return "", fmt.Errorf("%s: %q is a command in a block without a language: label it sh (it then runs), or mark it <!-- not run: why -->", b, strings.TrimSpace(l))
			}
		}
		return "text", nil
	}
	return "", fmt.Errorf("%s: the docs runner cannot run a %s block; put <!-- not run: why (and which test covers it) --> on the line before it", b, b.lang)
}

func TestDocs_Executed(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed; make deps installs it")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildDocsBinary(t)
	counts := map[string]int{}
	var skipped, runBy []string
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseDocBlocks(file, string(text))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range blocks {
			kind, err := classify(b)
			if err != nil {
				t.Error(err)
				continue
			}
			counts[kind]++
			switch kind {
			case "skip":
				skipped = append(skipped, fmt.Sprintf("%s: %s", b, b.notRun))
			case "test":
				runBy = append(runBy, fmt.Sprintf("%s: %s", b, b.runBy))
			case "json":
				var v any
				if err := json.Unmarshal([]byte(b.body), &v); err != nil {
					t.Errorf("%s: the example does not parse as JSON: %v", b, err)
				}
			case "config":
				t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) { runDocConfig(t, bin, b) })
			case "shell":
				t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) { runDocShell(t, root, bin, b) })
			}
		}
	}
	t.Logf("docs blocks: %d configs checked, %d shell blocks run, %d JSON examples parsed, %d output/prose blocks, %d run by another test:\n  %s\n%d not run by mark:\n  %s",
		counts["config"], counts["shell"], counts["json"], counts["text"], counts["test"], strings.Join(runBy, "\n  "),
		counts["skip"], strings.Join(skipped, "\n  "))
	if counts["config"] == 0 || counts["shell"] == 0 {
		t.Fatalf("the runner found nothing to run: %v", counts)
	}
}

// buildDocsBinary builds the waitroom binary the way a reader does, once
// for the tests of this file.
func buildDocsBinary(t *testing.T) string {
	t.Helper()
	path, err := docsBinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// docsBinaryPath builds the binary once and says where it is; a test may
// call it in a goroutine to build while it starts other things.
func docsBinaryPath() (string, error) {
	docsBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "waitroom-docs-")
		if err != nil {
			docsBinary.err = err
			return
		}
		docsBinary.path = filepath.Join(dir, "waitroom")
		out, err := exec.Command("go", "build", "-o", docsBinary.path, ".").CombinedOutput()
		if err != nil {
			docsBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return docsBinary.path, docsBinary.err
}

var docsBinary struct {
	once sync.Once
	path string
	err  error
}

// docEnv are the variables the docs' snippets expect the reader to have
// set: secrets and keys, made up and valid.
var docEnv = []string{
	"WAITROOM_ADMIN_TOKEN=" + adminToken,
	"TOKEN=" + adminToken,
	"REDIS_PASSWORD=docs-redis-password",
	"WAITROOM_COOKIE_HASH=" + testKey,
	"WAITROOM_COOKIE_BLOCK=" + testKey,
	"WAITROOM_WEBHOOK_SECRET=whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
	"WAITROOM_OPS_WEBHOOK_SECRET=whsec_ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=",
}

// docBase is the smallest valid file a fragment is merged into: a
// fragment's keys replace its keys, maps merge, and the fragment's routes
// come before the catch-all route.
const docBase = `
upstreams:
  shop: { url: "http://127.0.0.1:3000" }
  site: { url: "http://127.0.0.1:3001" }
routes:
  - { path: /, upstream: shop }
`

// runDocConfig runs a YAML block through `waitroom check`: as a file when
// it has upstreams and routes, else merged into docBase.
func runDocConfig(t *testing.T, bin string, b docBlock) {
	if err := checkDocConfig(bin, t.TempDir(), b); err != nil {
		t.Fatal(err)
	}
}

func checkDocConfig(bin, dir string, b docBlock) error {
	file, err := docConfigFile(b)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "doc.yaml")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "check", "--config", path)
	cmd.Env = append(os.Environ(), docEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: `waitroom check` refuses the block: %v\n%s\nthe file checked:\n%s", b, err, out, file)
	}
	return nil
}

// docConfigFile is the file a YAML block stands for: the block itself
// when it has upstreams and routes, else the block merged into docBase.
func docConfigFile(b docBlock) ([]byte, error) {
	var snippet map[string]any
	if err := yaml.Unmarshal([]byte(b.body), &snippet); err != nil {
		return nil, fmt.Errorf("%s: not YAML: %v", b, err)
	}
	file := []byte(b.body)
	_, hasUp := snippet["upstreams"]
	_, hasRoutes := snippet["routes"]
	if !hasUp || !hasRoutes {
		var base map[string]any
		if err := yaml.Unmarshal([]byte(docBase), &base); err != nil {
			return nil, err
		}
		merged := mergeYAML(base, snippet)
		if rs, ok := snippet["routes"].([]any); ok {
			merged["routes"] = append(rs, base["routes"].([]any)...)
		}
		var err error
		if file, err = yaml.Marshal(merged); err != nil {
			return nil, err
		}
	}
	return file, nil
}

// mergeYAML lays over on base: maps merge, anything else is replaced.
func mergeYAML(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = mergeYAML(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// The runner itself: it finds blocks in lists, reads marks, refuses what
// it cannot run by file and line, and a config block the loader refuses
// fails naming the block.
func TestDocs_RunnerRefuses(t *testing.T) {
	doc := "# t\n\n```go\nx := 1\n```\n\n<!-- not run: why -->\n```java\nint x;\n```\n\n" +
		"```\ncurl -s http://localhost:8080/\n```\n\n1. a step:\n   ```yaml\n   rooms: { concert: { max_active: -5 } }\n   ```\n"
	blocks, err := parseDocBlocks("t.md", doc)
	if err != nil || len(blocks) != 4 {
		t.Fatalf("blocks: %v %+v", err, blocks)
	}
	if _, err := classify(blocks[0]); err == nil || !strings.Contains(err.Error(), "t.md:3 (```go)") {
		t.Errorf("an unmarked Go block: %v", err)
	}
	if kind, err := classify(blocks[1]); kind != "skip" || err != nil || blocks[1].notRun != "why" {
		t.Errorf("a marked block: %q %v", kind, err)
	}
	if _, err := classify(blocks[2]); err == nil || !strings.Contains(err.Error(), "t.md:12") {
		t.Errorf("a command without a language: %v", err)
	}
	if kind, _ := classify(blocks[3]); kind != "config" || blocks[3].line != 17 || !strings.HasPrefix(blocks[3].body, "rooms:") {
		t.Fatalf("an indented yaml block: %q %+v", kind, blocks[3])
	}
	err = checkDocConfig(buildDocsBinary(t), t.TempDir(), blocks[3])
	if err == nil || !strings.Contains(err.Error(), "t.md:17") || !strings.Contains(err.Error(), "rooms.concert.max_active") {
		t.Errorf("a refused config: %v", err)
	}
}

// TestMain removes the binary buildDocsBinary built, if any.
func TestMain(m *testing.M) {
	flag.Parse()
	defaultParallel()
	code := m.Run()
	if docsBinary.path != "" {
		_ = os.RemoveAll(filepath.Dir(docsBinary.path))
	}
	os.Exit(code)
}

// Marks stack on the lines before a fence; an expect mark names its path
// for its block only, and a prompt or an admin tool is a command.
func TestDocs_RunnerMarks(t *testing.T) {
	doc := "<!-- run: serve -->\n<!-- expect: 404 /admin/api/rooms/concert/release (made-up id) -->\n```sh\ncurl x\n```\n\n" +
		"```sh\ncurl y\n```\n\n```\n$ openssl rand -base64 32\n```\n\n```\nsudo systemctl restart waitroom\n```\n\n" +
		"```\nredis-cli ping\n```\n\n<!-- expect: 404 /x (why) -->\nprose\n```sh\ncurl z\n```\n"
	blocks, err := parseDocBlocks("t.md", doc)
	if err != nil || len(blocks) != 6 {
		t.Fatalf("blocks: %v %+v", err, blocks)
	}
	if blocks[0].run != "serve" || blocks[0].expect["/admin/api/rooms/concert/release"] != "404" {
		t.Errorf("stacked marks: %+v", blocks[0])
	}
	if blocks[1].expect != nil || blocks[5].expect != nil {
		t.Errorf("a mark reached a block it was not on: %+v %+v", blocks[1], blocks[5])
	}
	for _, b := range blocks[2:5] {
		if _, err := classify(b); err == nil {
			t.Errorf("%s: %q is not taken for a command", b, b.body)
		}
	}

	// A "run by" mark hands a block to the test it names, which must
	// exist, and says how in parentheses; without them it is no mark.
	doc = "<!-- run by: TestDocs_RedisConf (redis-server with these lines) -->\n```conf\nport 1\n```\n\n" +
		"<!-- run by: TestDocs_NoSuchTest (nothing) -->\n```conf\nport 1\n```\n\n" +
		"<!-- run by: TestDocs_RedisConf -->\n```conf\nport 1\n```\n"
	blocks, err = parseDocBlocks("t.md", doc)
	if err != nil || len(blocks) != 3 {
		t.Fatalf("blocks: %v %+v", err, blocks)
	}
	if kind, err := classify(blocks[0]); kind != "test" || err != nil || blocks[0].runBy != "TestDocs_RedisConf" {
		t.Errorf("a block run by a test: %q %v %+v", kind, err, blocks[0])
	}
	if _, err := classify(blocks[1]); err == nil || !strings.Contains(err.Error(), "t.md:7") || !strings.Contains(err.Error(), "TestDocs_NoSuchTest") {
		t.Errorf("a block run by a test that does not exist: %v", err)
	}
	if _, err := classify(blocks[2]); err == nil || !strings.Contains(err.Error(), "cannot run a conf block") {
		t.Errorf("a run by mark that does not say how: %v", err)
	}
}
