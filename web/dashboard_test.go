package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/web/browsertest"
)

func TestDashboard_Headers(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	tests := []struct {
		method string
		status int
	}{{http.MethodGet, 200}, {http.MethodHead, 200}, {http.MethodPost, 405}}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			p.Dashboard(rec, httptest.NewRequest(tt.method, "/admin/", nil))
			h := rec.Result().Header
			if rec.Code != tt.status || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("status %d, headers %v", rec.Code, h)
			}
			if tt.status != 200 {
				if h.Get("Allow") != "GET, HEAD" {
					t.Errorf("Allow = %q", h.Get("Allow"))
				}
				return
			}
			if h.Get("X-Frame-Options") != "DENY" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
				t.Errorf("headers %v", h)
			}
			if tt.method == http.MethodHead {
				if rec.Body.Len() != 0 {
					t.Errorf("HEAD sent a body of %d bytes", rec.Body.Len())
				}
				return
			}
			checkInline(t, rec.Body.String(), h.Get("Content-Security-Policy"))
		})
	}
}

// checkInline checks that the policy allows exactly the inline style and
// script the page carries, that those are the embedded files byte for byte,
// and that the page loads nothing from anywhere.
func checkInline(t *testing.T, body, csp string) {
	t.Helper()
	dir := map[string]string{}
	for d := range strings.SplitSeq(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		dir[name] = value
	}
	for name, want := range map[string]string{"default-src": "'none'", "connect-src": "'self'",
		"img-src": "data:", "form-action": "'none'", "base-uri": "'none'", "frame-ancestors": "'none'"} {
		if dir[name] != want {
			t.Errorf("CSP %s = %q, want %q (policy %q)", name, dir[name], want, csp)
		}
	}
	for tag, file := range map[string]string{"style": "static/dashboard.css", "script": "static/dashboard.js"} {
		found := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(body, -1)
		if len(found) != 1 {
			t.Fatalf("%d inline <%s> blocks, want 1", len(found), tag)
		}
		sum := sha256.Sum256([]byte(found[0][1]))
		if got, want := dir[tag+"-src"], "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'"; got != want {
			t.Errorf("CSP %s-src = %q, want the hash of the inlined bytes %q", tag, got, want)
		}
		if disk, err := os.ReadFile(file); err != nil || string(disk) != found[0][1] {
			t.Errorf("inline <%s> differs from %s (%v)", tag, file, err)
		}
	}
	if m := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?(https?:|//)`).FindString(body); m != "" {
		t.Errorf("page loads something from elsewhere: %s", m)
	}
	if !strings.Contains(body, `data-api="/admin/api"`) {
		t.Error("page does not name the API")
	}
}

// TestDashboard_Browser signs in to the dashboard in headless Chromium with a
// fake admin API, checks the cards against the API's numbers, pauses a room
// and takes its picture (into docs/dashboard.png with WAITROOM_UPDATE_DOCS=1).
// Without chromium it skips on a developer's machine and fails in CI
// (CI=true).
func TestDashboard_Browser(t *testing.T) {
	chromium := browsertest.Chromium(t)
	api := newFakeAdmin("s3cret-admin-token")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/{$}", newPages(t).Dashboard)
	api.routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	// The flags keep Chromium off the network and out of the user's profile.
	ctx, cancel = chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(t.TempDir()))
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()
	dialogs, problems := watchPage(ctx)

	run(t, ctx, chromedp.EmulateViewport(1280, 800),
		setTimezone("Asia/Seoul"), // the fake's clock reads 09:59 in Seoul
		chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.SendKeys(chromedp.ID("token"), "wrong"), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `document.getElementById('signin-err').textContent.includes('refused')`, "the refused token's message")
	run(t, ctx, chromedp.SendKeys(chromedp.ID("token"), api.token), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(t, ctx, `document.querySelectorAll('.chart polyline.line[points*=","]').length === 6`, "the cards and their charts")

	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]cardText](`[...document.querySelectorAll('article.room')].map(a => {
		const f = k => a.querySelector('[data-f="' + k + '"]').textContent;
		return {room: a.dataset.room, waiting: f('waiting'), active: f('active'), max: f('max'), mode: f('mode'),
			rate: f('rate'), override: !a.querySelector('[data-f=override]').hidden};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	var want []cardText
	for _, r := range api.snapshot() {
		want = append(want, cardText{r.Name, thousands(r.Waiting), thousands(r.Active), thousands(r.Effective.MaxActive),
			map[string]string{"fifo": "FIFO", "paused": "Paused"}[r.Mode], thousands(r.AdmittedLastMinute), r.Override != nil})
	}
	if !slices.Equal(cards, want) {
		t.Errorf("cards show\n%+v\nthe API said\n%+v", cards, want)
	}
	if stored, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem('waitroom.admin.token')`)); stored != api.token {
		t.Errorf("sessionStorage holds %q", stored)
	}
	saveScreenshot(t, ctx, filepath.Join("..", "docs", "dashboard.png"))

	run(t, ctx, chromedp.Click(chromedp.CSS(`article[data-room="concert"] button[data-act="mode"]`)))
	select {
	case c := <-api.calls:
		if c.method != "PATCH" || c.path != "/admin/api/rooms/concert" || c.body != `{"mode":"paused"}` || c.auth != "Bearer "+api.token {
			t.Errorf("the fake got %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Pause sent nothing")
	}
	waitJS(t, ctx, `document.querySelector('article[data-room="concert"] [data-f=mode]').textContent === 'Paused'`, "the paused badge")
	if msg := <-dialogs; !strings.Contains(msg, "Pause admissions") {
		t.Errorf("confirm said %q", msg)
	}
	if api.refused() == 0 {
		t.Error("the wrong token never reached the API")
	}
	problems.check(t)
}

// cardText is what a room card shows, as text.
type cardText struct {
	Room     string `json:"room"`
	Waiting  string `json:"waiting"`
	Active   string `json:"active"`
	Max      string `json:"max"`
	Mode     string `json:"mode"`
	Rate     string `json:"rate"`
	Override bool   `json:"override"`
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func setTimezone(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
		return err
	})
}

// waitJS evaluates expr until it is true. chromedp.Poll would build its
// predicate with new Function, which the page's policy rightly forbids.
func waitJS(t *testing.T, ctx context.Context, expr, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s (%v)", what, err)
		}
	}
}

// pageProblems collects uncaught script errors and policy violations.
type pageProblems struct {
	mu   sync.Mutex
	seen []string
}

func (p *pageProblems) check(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.seen {
		t.Errorf("page problem: %s", s)
	}
}

// watchPage accepts every confirm() (sending its message on the returned
// channel) and records the page's errors; the 401 of the wrong token is the
// one network error expected.
func watchPage(ctx context.Context) (<-chan string, *pageProblems) {
	msgs, problems := make(chan string, 8), &pageProblems{}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			msgs <- ev.Message
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	_ = chromedp.Listen(ctx, func(ev any) {
		var s string
		switch e := ev.(type) {
		case *log.EventEntryAdded: // policy violations arrive here, source "security"
			if e.Entry.Level == log.EntryLevelError && e.Entry.Source != log.EntrySourceNetwork {
				s = string(e.Entry.Source) + ": " + e.Entry.Text
			}
		case *runtime.EventExceptionThrown:
			s = "uncaught: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				s += " " + e.ExceptionDetails.Exception.Description
			}
		}
		if s != "" {
			problems.mu.Lock()
			problems.seen = append(problems.seen, s)
			problems.mu.Unlock()
		}
	})
	return msgs, problems
}

// saveScreenshot writes a full-page PNG, only when it changed, so a run that
// draws the same page leaves the working tree clean.
//
// Only with WAITROOM_UPDATE_DOCS=1 does it write into docs/: another
// machine's fonts draw other bytes, and a test run must not leave the tree
// dirty. Otherwise the picture goes to the test's temporary directory.
func saveScreenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if os.Getenv("WAITROOM_UPDATE_DOCS") != "1" {
		path = filepath.Join(t.TempDir(), filepath.Base(path))
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, png) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(png))
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
