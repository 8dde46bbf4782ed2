package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const rightToken = "a-right-admin-token-0123456789"

// tokenServer is an admin listener whose API answers 404 past the token
// (no JWKS configured), so a 404 means the token was right.
func tokenServer(t *testing.T, pace time.Duration) (*httptest.Server, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	srv := httptest.NewServer(NewAdmin(AdminOptions{Token: rightToken, Pages: newPages(t), Log: zap.New(core), WrongTokenPace: pace}))
	t.Cleanup(srv.Close)
	return srv, logs
}

func tryToken(t *testing.T, url, token string) int {
	req, _ := http.NewRequest(http.MethodGet, url+"/admin/api/jwks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// 300 wrong tokens in a row from one client take at least their paces
// (after the burst) and make a bounded number of log lines, none with a
// token; a right token right after does not wait.
func TestAdmin_WrongTokensArePacedAndLoggedRarely(t *testing.T) {
	t.Parallel()
	const pace, tries = 5 * time.Millisecond, 300
	srv, logs := tokenServer(t, pace)
	start := time.Now()
	for i := range tries {
		if code := tryToken(t, srv.URL, "wrong-"+strconv.Itoa(i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i, code)
		}
	}
	if took, least := time.Since(start), (tries-wrongTokenBurst-1)*pace; took < least {
		t.Fatalf("%d wrong tokens took %v, want at least %v", tries, took, least)
	}
	lines := logs.FilterMessageSnippet("wrong admin tokens").All()
	if len(lines) < 1 || len(lines) > 2 {
		t.Fatalf("%d log lines for %d wrong tokens, want 1 or 2", len(lines), tries)
	}
	for _, l := range lines {
		for _, f := range l.Context {
			if strings.Contains(f.String, "wrong-") || strings.Contains(f.String, rightToken) {
				t.Fatalf("a token is in the log line %q", l.Message)
			}
		}
	}
	t0 := time.Now()
	if code := tryToken(t, srv.URL, rightToken); code != http.StatusNotFound {
		t.Fatalf("the right token: %d", code)
	}
	if took := time.Since(t0); took > 100*time.Millisecond {
		t.Fatalf("the right token waited %v", took)
	}
}

// With the default pace, guesses sent all at once wait their turns too
// (one per 250ms after the burst), while a right token sent meanwhile
// is answered at once.
func TestAdmin_WrongTokensAtOnceWaitTheirTurn(t *testing.T) {
	t.Parallel()
	const tries = 12
	srv, _ := tokenServer(t, 0)
	// What a right token's answer costs this machine now, with no wrong
	// ones around: on a busy machine a request alone may take 100ms+.
	t0 := time.Now()
	if code := tryToken(t, srv.URL, rightToken); code != http.StatusNotFound {
		t.Fatalf("the right token alone: %d", code)
	}
	alone := time.Since(t0)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code := tryToken(t, srv.URL, "wrong-"+strconv.Itoa(i)); code != http.StatusUnauthorized {
				t.Errorf("wrong token %d: %d", i, code)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	t0 = time.Now()
	if code := tryToken(t, srv.URL, rightToken); code != http.StatusNotFound {
		t.Errorf("the right token: %d", code)
	}
	// Behind the wrong ones it would wait their turns, 250ms each.
	if took := time.Since(t0); took > 100*time.Millisecond+2*alone {
		t.Errorf("the right token waited %v behind wrong ones (%v alone)", took, alone)
	}
	wg.Wait()
	if took, least := time.Since(start), (tries-wrongTokenBurst-1)*DefaultWrongTokenPace; took < least {
		t.Fatalf("%d wrong tokens at once took %v, want at least %v", tries, took, least)
	}
}
