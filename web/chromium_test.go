package web

import (
	"os"
	"os/exec"
	"testing"
)

// requireChromium finds Debian's chromium for the browser tests. Without it
// they skip on a developer's machine and fail in CI (CI=true), where
// make test installs it.
func requireChromium(t *testing.T) string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; CI must install it (apt-get install chromium)")
		}
		t.Skip("no chromium in PATH; install Debian's chromium to run the browser test")
	}
	return chromium
}
