package pass

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jwksServer serves a key set the test may change, and counts requests.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	status  int
	delay   chan struct{} // when set, requests wait for it to close
	fetches atomic.Int64
}

func newJWKSServer(tb testing.TB, body []byte) *jwksServer {
	tb.Helper()
	s := &jwksServer{body: body, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		body, status, delay := s.body, s.status, s.delay
		s.mu.Unlock()
		if delay != nil {
			select {
			case <-delay:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(body []byte, status int) {
	s.mu.Lock()
	s.body, s.status = body, status
	s.mu.Unlock()
}

// clock is a settable time for RemoteJWKS and Verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newRemote(tb testing.TB, url string, o RemoteOptions) *RemoteJWKS {
	tb.Helper()
	r, err := NewRemoteJWKS(url, o)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// eventually waits up to 5s for cond.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRemoteJWKS_CacheAndRefresh(t *testing.T) {
	t.Parallel()
	a, b := newKey(t), newKey(t)
	srv := newJWKSServer(t, newSigner(t, testIssuer, testTTL, a).JWKS())
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	r := newRemote(t, srv.URL, RemoteOptions{Now: clk.Now, Refresh: time.Minute, MinRefetch: 10 * time.Second})
	ka, kb := Thumbprint(pub(a)), Thumbprint(pub(b))
	for range 3 {
		if _, err := r.Key(context.Background(), ka); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for three lookups of a known kid, want 1", n)
	}
	// b is published; until MinRefetch has passed its kid is not looked for.
	srv.set(newSigner(t, testIssuer, testTTL, b, a).JWKS(), http.StatusOK)
	if _, err := r.Key(context.Background(), kb); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("a new kid within MinRefetch: %v, want ErrUnknownKey", err)
	}
	clk.Add(10 * time.Second)
	if _, err := r.Key(context.Background(), kb); err != nil {
		t.Fatalf("a new kid after MinRefetch: %v", err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	// a is withdrawn: a stale set still answers at once and is fetched
	// again behind the caller's back; then a is gone.
	srv.set(newSigner(t, testIssuer, testTTL, b).JWKS(), http.StatusOK)
	clk.Add(time.Minute)
	if _, err := r.Key(context.Background(), ka); err != nil {
		t.Fatalf("a known kid in a stale set: %v", err)
	}
	eventually(t, "the background refresh", func() bool {
		_, err := r.Key(context.Background(), ka)
		return errors.Is(err, ErrUnknownKey)
	})
	if n := srv.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
}

// A flood of made-up kids costs one fetch per MinRefetch, however many
// arrive at once.
func TestRemoteJWKS_UnknownKidFlood(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, newSigner(t, testIssuer, testTTL, newKey(t)).JWKS())
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	r := newRemote(t, srv.URL, RemoteOptions{Now: clk.Now, MinRefetch: 30 * time.Second})
	flood := func() {
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := r.Key(context.Background(), strings.Repeat("x", i)); !errors.Is(err, ErrUnknownKey) {
					t.Errorf("made-up kid: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	flood()
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for 200 made-up kids, want 1", n)
	}
	clk.Add(29 * time.Second)
	flood()
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches within MinRefetch, want 1", n)
	}
	clk.Add(time.Second)
	flood()
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after MinRefetch, want 2", n)
	}
}

// A key set that cannot be had is ErrKeysUnavailable, tried again only after
// MinRefetch; a failed refresh keeps the keys already known.
func TestRemoteJWKS_Failures(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	kid := Thumbprint(pub(k))
	good := newSigner(t, testIssuer, testTTL, k).JWKS()
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
	}{
		{"status 500", good, http.StatusInternalServerError},
		{"not a key set", []byte("<html>"), http.StatusOK},
		{"too large", append(good, make([]byte, 64<<10)...), http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, tc.body)
			srv.set(tc.body, tc.status)
			clk := &clock{t: time.Unix(1_800_000_000, 0)}
			r := newRemote(t, srv.URL, RemoteOptions{Now: clk.Now, Refresh: time.Minute, MinRefetch: 10 * time.Second})
			for range 3 {
				if _, err := r.Key(context.Background(), kid); !errors.Is(err, ErrKeysUnavailable) {
					t.Fatalf("%v, want ErrKeysUnavailable", err)
				}
			}
			if n := srv.fetches.Load(); n != 1 {
				t.Fatalf("%d fetches after a failure, within MinRefetch; want 1", n)
			}
			srv.set(good, http.StatusOK)
			clk.Add(10 * time.Second)
			if _, err := r.Key(context.Background(), kid); err != nil {
				t.Fatalf("after the server recovered: %v", err)
			}
			srv.set(tc.body, tc.status)
			clk.Add(time.Minute)
			r.Key(context.Background(), kid) // starts the refresh, which fails
			eventually(t, "the failed refresh", func() bool { return srv.fetches.Load() == 3 })
			clk.Add(time.Second)
			if _, err := r.Key(context.Background(), kid); err != nil {
				t.Fatalf("after a failed refresh: %v, want the keys kept", err)
			}
		})
	}
}

// A hung server costs a caller Timeout, not forever; a caller that gives up
// sooner is let go.
func TestRemoteJWKS_Timeouts(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, nil)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	srv.mu.Lock()
	srv.delay = hang
	srv.mu.Unlock()
	r := newRemote(t, srv.URL, RemoteOptions{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := r.Key(context.Background(), "kid")
	if !errors.Is(err, ErrKeysUnavailable) || time.Since(start) > 3*time.Second {
		t.Fatalf("%v after %v, want ErrKeysUnavailable after about 200ms", err, time.Since(start))
	}
	r2 := newRemote(t, srv.URL, RemoteOptions{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r2.Key(ctx, "kid"); !errors.Is(err, ErrKeysUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller's deadline: %v", err)
	}
}

// Callers that arrive together before the first load share one fetch.
func TestRemoteJWKS_FirstLoadShared(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	srv := newJWKSServer(t, newSigner(t, testIssuer, testTTL, k).JWKS())
	release := make(chan struct{})
	srv.mu.Lock()
	srv.delay = release
	srv.mu.Unlock()
	r := newRemote(t, srv.URL, RemoteOptions{})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Key(context.Background(), Thumbprint(pub(k))); err != nil {
				t.Error(err)
			}
		}()
	}
	eventually(t, "the first fetch", func() bool { return srv.fetches.Load() == 1 })
	close(release)
	wg.Wait()
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

func TestNewRemoteJWKS(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "ftp://x/jwks", "file:///etc/passwd", "/.waitroom/jwks.json", "http://"} {
		if _, err := NewRemoteJWKS(u, RemoteOptions{}); err == nil {
			t.Errorf("%q: accepted", u)
		}
	}
	if _, err := NewRemoteJWKS("https://x/jwks", RemoteOptions{Refresh: -1}); err == nil {
		t.Error("a negative option was accepted")
	}
}
