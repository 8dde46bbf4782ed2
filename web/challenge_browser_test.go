package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/web/browsertest"
)

// The browser test solves at the default base difficulty; the benchmark at
// 16 bits, so each op is long enough to time.
var browserBits = challenge.DefaultPolicy().Base

const benchBits = 16

// solverPage serves a page that carries challenge.js inline and nothing
// else, under a policy that lets only those bytes run, as the waiting page
// will. It returns the page's URL.
func solverPage(tb testing.TB) string {
	tb.Helper()
	js, err := os.ReadFile("static/challenge.js")
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(js)
	csp := "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	page := "<!doctype html><html lang=en><meta charset=utf-8><title>challenge</title><script>" + string(js) +
		"</script><p id=status>Checking your browser…</p>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// solverBrowser starts headless Chromium on the solver page, with the flags
// that keep it off the network and out of the user's profile, and installs
// the test's helpers. DevTools evaluation is outside the page's policy, so
// the helpers may run; the page's own script stays bound by it.
func solverBrowser(tb testing.TB) context.Context {
	tb.Helper()
	chromium := browsertest.Chromium(tb)
	url := solverPage(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	tb.Cleanup(cancel)
	ctx, cancel = chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(tb.TempDir()))
	tb.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(ctx)
	tb.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		tb.Fatal(err)
	}
	ready, err := chromedp.Run(ctx, chromedp.Evaluate[bool](solverHelpers))
	if err != nil || !ready {
		tb.Fatalf("the page's script did not run under its policy (or WebCrypto is missing): %v", err)
	}
	return ctx
}

// solverHelpers records policy violations and defines run(), which solves
// with one engine and keeps every progress report and the largest gap
// between ticks of a 10 ms timer, to show the page stayed responsive, and
// idle(), the same timer's largest gap on a page with nothing to do: what
// the machine alone costs it.
const solverHelpers = `(() => {
  window.violations = [];
  document.addEventListener('securitypolicyviolation', e => violations.push(e.violatedDirective + ' ' + e.blockedURI));
  window.idle = ms => new Promise(resolve => {
    let last = performance.now(), gap = 0;
    const tick = setInterval(() => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; }, 10);
    setTimeout(() => { clearInterval(tick); resolve(Math.max(gap, performance.now() - last)); }, ms);
  });
  window.run = async (fn, prefix, bits, abortAfter) => {
    const reports = [], ac = new AbortController();
    let last = performance.now(), gap = 0;
    const tick = setInterval(() => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; }, 10);
    if (abortAfter) setTimeout(() => ac.abort(), abortAfter);
    const t0 = performance.now();
    let res;
    try {
      res = {nonce: await window[fn](prefix, bits, (n, e) => reports.push([n, e]), ac.signal)};
    } catch (e) {
      res = {error: e.name};
    }
    clearInterval(tick);
    return {...res, reports, ms: performance.now() - t0, gap: Math.max(gap, performance.now() - last)};
  };
  return typeof waitroomSolve === 'function' && typeof waitroomSolveJS === 'function' &&
    isSecureContext && !!crypto.subtle;
})()`

// solveResult is what run() answers.
type solveResult struct {
	Nonce   string       `json:"nonce"`
	Error   string       `json:"error"`
	Reports [][2]float64 `json:"reports"`
	Gap     float64      `json:"gap"` // ms
	MS      float64      `json:"ms"`
}

func solveIn(tb testing.TB, ctx context.Context, fn, prefix string, bits, abortAfterMS int) solveResult {
	tb.Helper()
	expr := fmt.Sprintf("run(%q, %q, %d, %d)", fn, prefix, bits, abortAfterMS)
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // a solver that never yields hangs here
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.Evaluate[solveResult](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.Fatalf("%s: %v", expr, err)
	}
	return res
}

// idleGap is the longest wait of a 10 ms timer over ms on the page with no
// work running.
func idleGap(tb testing.TB, ctx context.Context, ms int) float64 {
	tb.Helper()
	gap, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf("idle(%d)", ms), chromedp.EvalAwaitPromise))
	if err != nil {
		tb.Fatalf("idle(%d): %v", ms, err)
	}
	return gap
}

func testIssuer(tb testing.TB) *challenge.Issuer {
	tb.Helper()
	is, err := challenge.New(challenge.DeriveKey([]byte("browser test secret"), "challenge"))
	if err != nil {
		tb.Fatal(err)
	}
	return is
}

func issueAt(is *challenge.Issuer, room string, bits int) string {
	now := time.Now()
	return is.Issue(challenge.Challenge{Room: room, Network: "203.0.113.0/24", Number: 1_700_000_000_000_042,
		Bits: bits, Issued: now, Expires: now.Add(2 * time.Minute)})
}

// TestChallengeBrowser_Solves has real Chromium solve a prefix from the Go
// issuer with each engine and the Go checker accept the nonce; it then plays
// the other side: a tampered prefix, another room or network, a nonce
// moved to another prefix, bad arguments, and a stop. Without chromium it
// skips on a developer's machine and fails in CI (CI=true).
func TestChallengeBrowser_Solves(t *testing.T) {
	ctx := solverBrowser(t)
	is := testIssuer(t)
	const room, network = "concert", "203.0.113.0/24"
	for _, fn := range []string{"waitroomSolve", "waitroomSolveJS"} {
		t.Run(fn, func(t *testing.T) {
			prefix := issueAt(is, room, browserBits)
			res := solveIn(t, ctx, fn, prefix, browserBits, 0)
			if res.Error != "" {
				t.Fatalf("rejected: %s", res.Error)
			}
			t.Logf("%d bits: nonce %s after %.0f ms, longest pause %.0f ms", browserBits, res.Nonce, res.MS, res.Gap)
			c, err := is.Check(prefix+":"+res.Nonce, room, network, time.Now())
			if err != nil || c.Bits != browserBits || c.Number != 1_700_000_000_000_042 {
				t.Fatalf("Check = %+v, %v", c, err)
			}
			if want := challenge.Solve(prefix, browserBits); res.Nonce != want {
				t.Errorf("nonce %s, the Go solver found %s first", res.Nonce, want)
			}
			checkReports(t, res, browserBits)
			for _, tt := range []struct {
				room, network string
				want          error
			}{{"festival", network, challenge.ErrWrongRoom}, {room, "198.51.100.0/24", challenge.ErrWrongNetwork}} {
				if _, err := is.Check(prefix+":"+res.Nonce, tt.room, tt.network, time.Now()); !errors.Is(err, tt.want) {
					t.Errorf("checked for %s from %s: %v, want %v", tt.room, tt.network, err, tt.want)
				}
			}
		})
	}
	// The JS engine hashes from a midstate, finishing in one block or two
	// depending on where the prefix ends; every length must agree with Go.
	t.Run("engines agree with Go", func(t *testing.T) {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		long := strings.Repeat(alphabet, 4)
		for _, n := range []int{1, 47, 54, 55, 56, 63, 64, 65, 71, 100, 118, 119, 120, 127, 128, 129, 200} {
			prefix := long[n%7 : n%7+n]
			want := challenge.Solve(prefix, 10)
			for _, fn := range []string{"waitroomSolve", "waitroomSolveJS"} {
				if got := solveIn(t, ctx, fn, prefix, 10, 0); got.Nonce != want {
					t.Errorf("%s on a %d-byte prefix: %+v, Go found %s", fn, n, got, want)
				}
			}
		}
	})
	t.Run("wrong prefix", func(t *testing.T) {
		prefix := issueAt(is, room, browserBits)
		nonce := solveIn(t, ctx, "waitroomSolve", prefix, browserBits, 0).Nonce
		other := issueAt(is, room, browserBits)
		for challenge.WorkBits(other, nonce) >= browserBits { // one chance in 2^14
			other = issueAt(is, room, browserBits)
		}
		if _, err := is.Check(other+":"+nonce, room, network, time.Now()); !errors.Is(err, challenge.ErrNotEnoughWork) {
			t.Errorf("a nonce moved to another prefix: %v", err)
		}
		// A prefix changed in transit still gets solved, but the work is
		// worthless: the signature no longer matches.
		tampered := prefix[:40] + flip(prefix[40]) + prefix[41:]
		res := solveIn(t, ctx, "waitroomSolve", tampered, 8, 0)
		if _, err := is.Check(tampered+":"+res.Nonce, room, network, time.Now()); !errors.Is(err, challenge.ErrBadMAC) {
			t.Errorf("tampered prefix: %q, %v", res.Nonce, err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, args := range []struct {
			prefix string
			bits   int
		}{{"abc:def", 8}, {"", 8}, {"abc", 33}, {"abc", -1}, {strings.Repeat("A", 201), 8}} {
			if res := solveIn(t, ctx, "waitroomSolve", args.prefix, args.bits, 0); res.Error != "TypeError" {
				t.Errorf("waitroomSolve(%q, %d) = %+v, want a TypeError", args.prefix, args.bits, res)
			}
		}
	})
	t.Run("stops", func(t *testing.T) {
		for _, fn := range []string{"waitroomSolve", "waitroomSolveJS"} {
			// The page stays responsive while the work goes on: the work
			// adds at most 250 ms to the longest wait of a 10 ms timer,
			// over what the same timer waits just before on an idle page
			// (on a busy machine the page waits for a core either way).
			// The best of three tries counts: a stall of the whole machine
			// in one try says nothing of the solver, while a solver that
			// does not yield fails every try.
			var tries []string
			for try := 0; try < 3; try++ {
				idle := idleGap(t, ctx, 700)
				res := solveIn(t, ctx, fn, issueAt(is, room, challenge.MaxBits), challenge.MaxBits, 700)
				if res.Error != "AbortError" || res.MS > 3000 || len(res.Reports) < 2 {
					t.Errorf("%s stopped after %.0f ms with %q and %d reports", fn, res.MS, res.Error, len(res.Reports))
					break
				}
				tries = append(tries, fmt.Sprintf("%.0f ms (%.0f ms idle)", res.Gap, idle))
				if res.Gap <= 250+idle {
					tries = nil
					break
				}
			}
			if tries != nil {
				t.Errorf("%s: a 10 ms timer waited %s", fn, strings.Join(tries, ", "))
			}
		}
	})
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`violations`)); err != nil || len(v) != 0 {
		t.Errorf("policy violations %v (%v)", v, err)
	}
}

// checkReports checks that progress starts at 0, never goes back, and ends
// at the attempts the answer took, always against 2^bits expected.
func checkReports(t *testing.T, res solveResult, bits int) {
	t.Helper()
	r := res.Reports
	if len(r) < 2 || r[0][0] != 0 {
		t.Fatalf("reports %v", r)
	}
	for i, p := range r {
		if p[1] != float64(uint64(1)<<bits) || i > 0 && p[0] < r[i-1][0] {
			t.Fatalf("report %d of %v", i, r)
		}
	}
	if last := r[len(r)-1][0]; fmt.Sprint(last-1) != res.Nonce {
		t.Errorf("last report %v attempts for nonce %s", last, res.Nonce)
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

// BenchmarkChallengeBrowser_HashRate measures each engine's hashes per
// second in headless Chromium, each op solving a fresh 16-bit prefix; the
// "phone" runs are the same under DevTools' 5x CPU throttling.
//
//	go test -run '^$' -bench ChallengeBrowser -benchtime 20x ./web/
func BenchmarkChallengeBrowser_HashRate(b *testing.B) {
	is := testIssuer(b)
	for _, tt := range []struct {
		name, fn string
		slow     float64
	}{{"webcrypto", "waitroomSolve", 1}, {"js", "waitroomSolveJS", 1},
		{"webcrypto-phone", "waitroomSolve", 5}, {"js-phone", "waitroomSolveJS", 5}} {
		b.Run(tt.name, func(b *testing.B) {
			ctx := solverBrowser(b)
			if tt.slow > 1 {
				if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: tt.slow}); err != nil {
					b.Fatal(err)
				}
			}
			var attempts, ms float64
			for b.Loop() {
				res := solveIn(b, ctx, tt.fn, issueAt(is, "concert", benchBits), benchBits, 0)
				var n float64
				fmt.Sscan(res.Nonce, &n)
				attempts += n + 1
				ms += res.MS
			}
			b.ReportMetric(attempts/(ms/1000), "hashes/s")
			b.ReportMetric(attempts/float64(b.N), "hashes/op")
		})
	}
}
