// Package browsertest finds Debian's chromium for the browser tests, shaped
// like httptest: a helper for tests only.
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the chromium binary. Without one the test skips on a
// developer's machine and fails in CI (CI=true), where make test installs
// it.
func Chromium(tb testing.TB) string {
	tb.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("chromium is not installed; CI must install it (apt-get install chromium)")
		}
		tb.Skip("no chromium in PATH; install Debian's chromium to run the browser test")
	}
	return chromium
}

// KoreanFont fails the test when the machine has no font for Korean: the
// Korean pages would render as empty boxes, and a screenshot taken so
// would go into docs/ (make deps installs Debian's fonts-nanum).
func KoreanFont(tb testing.TB) {
	tb.Helper()
	out, err := exec.Command("fc-list", ":lang=ko", "family").Output()
	if err != nil || len(out) == 0 {
		tb.Fatal("no Korean font (fc-list :lang=ko is empty): Korean pages render as boxes; make deps installs fonts-nanum")
	}
}
