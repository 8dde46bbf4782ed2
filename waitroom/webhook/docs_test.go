package webhook_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

// docsPath is the receiver's guide, whose Node and Java code these tests
// run, so the code sites copy from it verifies what the gateway sends.
const docsPath = "../../docs/webhooks.md"

// verifyCase is one message for a verifier in another language, and
// whether it must verify.
type verifyCase struct {
	name, secret, id, ts, sigs string
	body                       []byte
	valid                      bool
}

// verifyCases are a message the dispatcher really sent, and that message
// spoiled in the ways a verifier must notice.
func verifyCases(t *testing.T) []verifyCase {
	t.Helper()
	r := newReceiver(t, nil)
	d := webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)}, Delivery: fast()})
	d.Send(queueStarted(1))
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.requests()
	if len(reqs) != 1 || reqs[0].err != nil {
		t.Fatalf("receiver got %d requests (%v), want 1 that verifies", len(reqs), reqs)
	}
	h, body := reqs[0].header, reqs[0].body
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	key, _ := webhook.ParseSecret(r.secret)
	old := time.Now().Add(-10 * time.Minute)
	other := newSecret(t)
	otherKey, _ := webhook.ParseSecret(other)
	return []verifyCase{
		{"as sent", r.secret, id, ts, sigs, body, true},
		{"among other entries", r.secret, id, ts, "v1a,AAAA v1,bm9wZQ== " + sigs + " v2,x", body, true},
		{"body changed", r.secret, id, ts, sigs, append([]byte(" "), body...), false},
		{"id changed", r.secret, "msg_other", ts, sigs, body, false},
		{"another secret", other, id, ts, sigs, body, false},
		{"signed with another secret", r.secret, id, ts, webhook.Sign(otherKey, id, time.Now(), body), body, false},
		{"too old", r.secret, id, fmt.Sprint(old.Unix()), webhook.Sign(key, id, old, body), body, false},
		{"not a number", r.secret, id, "12ab", sigs, body, false},
		{"not base64", r.secret, id, ts, "v1,%%%%", body, false},
	}
}

// casesFile writes the cases one a line: secret, id, timestamp, signatures
// and the body in base64, tab-separated.
func casesFile(t *testing.T, cases []verifyCase) string {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", c.secret, c.id, c.ts, c.sigs, base64.StdEncoding.EncodeToString(c.body))
	}
	path := filepath.Join(t.TempDir(), "cases.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// docsBlock is the first fenced block of lang in the guide.
func docsBlock(t *testing.T, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```"+lang+"\n")
	code, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("%s has no ```%s block", docsPath, lang)
	}
	return code
}

// requireBin finds a binary, or skips the test without it (fails on CI).
func requireBin(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found: CI must run the docs' %s code", name, name)
		}
		t.Skipf("skipping: %s not found", name)
	}
	return path
}

// checkVerdicts runs a verifier and compares its answer, one word a case.
func checkVerdicts(t *testing.T, cases []verifyCase, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Path, err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cases) {
		t.Fatalf("%d answers for %d cases:\n%s", len(got), len(cases), out)
	}
	for i, c := range cases {
		if want := map[bool]string{true: "valid", false: "invalid"}[c.valid]; got[i] != want {
			t.Errorf("%s: %s, want %s", c.name, got[i], want)
		}
	}
}

func TestDocs_NodeVerifierAgrees(t *testing.T) {
	t.Parallel()
	node := requireBin(t, "node")
	cases := verifyCases(t)
	harness := docsBlock(t, "js") + `
const fs = require('node:fs');
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean)) {
  const [secret, id, ts, sigs, body] = line.split('\t');
  const headers = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sigs };
  console.log(verifyWebhook(secret, headers, Buffer.from(body, 'base64')) ? 'valid' : 'invalid');
}
`
	script := filepath.Join(t.TempDir(), "verify.js")
	if err := os.WriteFile(script, []byte(harness), 0o600); err != nil {
		t.Fatal(err)
	}
	checkVerdicts(t, cases, exec.Command(node, script, casesFile(t, cases)))
}

func TestDocs_JavaVerifierAgrees(t *testing.T) {
	t.Parallel()
	java := requireBin(t, "java")
	cases := verifyCases(t)
	code := docsBlock(t, "java")
	var imports, rest []string
	for _, line := range strings.Split(code, "\n") {
		if strings.HasPrefix(line, "import ") {
			imports = append(imports, line)
		} else {
			rest = append(rest, line)
		}
	}
	// The launcher runs the file's first class: the harness, then the
	// guide's class.
	src := strings.Join(imports, "\n") + `
public class Main {
  public static void main(String[] args) throws Exception {
    for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(args[0]))) {
      String[] f = line.split("\t", -1);
      byte[] body = Base64.getDecoder().decode(f[4]);
      System.out.println(WebhookVerifier.verify(f[0], f[1], f[2], f[3], body) ? "valid" : "invalid");
    }
  }
}
` + strings.Join(rest, "\n")
	file := filepath.Join(t.TempDir(), "Main.java")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	checkVerdicts(t, cases, exec.Command(java, file, casesFile(t, cases)))
}
