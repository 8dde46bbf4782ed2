package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/web/browsertest"
)

// TestBrowser_PollsAndMovesOn runs waiting.js in a real headless Chromium
// against a status endpoint that counts down and then admits. Without a
// chromium binary it skips on a developer's machine and fails in CI
// (CI=true), where .ci/run installs Debian's chromium.
func TestBrowser_PollsAndMovesOn(t *testing.T) {
	chromium := browsertest.Chromium(t)
	tests := []struct {
		name   string
		admit  int64 // poll number that admits; 0 never
		want   []string
		absent []string
	}{
		{"updates in place", 0, []string{"<title>#997 in line · Waiting room</title>", ">997<", "996 people ahead", "About 3 minutes", `aria-valuenow="70"`}, []string{"DONE"}},
		{"moves on", 3, []string{"DONE /events/1?seat=A1"}, []string{"wr-pos"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dom := runBrowser(t, chromium, tt.admit)
			for _, s := range tt.want {
				if !strings.Contains(dom, s) {
					t.Errorf("DOM lacks %q:\n%s", s, dom)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(dom, s) {
					t.Errorf("DOM has %q", s)
				}
			}
		})
	}
}

// runBrowser serves a waiting room whose status moves one place per poll and
// returns the DOM Chromium ends up with.
func runBrowser(t *testing.T, chromium string, admit int64) string {
	p := newPages(t)
	var polls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("seat") != "" {
			fmt.Fprintf(w, "<!doctype html><p>DONE %s</p>", r.URL.RequestURI())
			return
		}
		v := sample()
		v.Title, v.Refresh, v.Position = "", time.Second, 1000
		p.Waiting(w, r, v)
	})
	mux.HandleFunc("GET "+StaticPrefix, p.Static)
	mux.HandleFunc("GET /.waitroom/status", func(w http.ResponseWriter, r *http.Request) {
		n := polls.Add(1)
		v := sample()
		v.Refresh, v.ReturnTo = time.Second, "/events/1?seat=A1"
		v.Position, v.Ahead, v.ETA, v.Progress = 1000-n, 999-n, 150*time.Second, 0.7
		if n == admit {
			v.State = "admitted"
		}
		p.JSON(w, http.StatusOK, v)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// The flags keep Chromium off the network (this machine has none) and
	// out of any profile of the user's.
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3500", "--dump-dom",
		srv.URL+"/events/1").Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	t.Logf("%d polls", polls.Load())
	return string(out)
}
