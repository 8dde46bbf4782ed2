package pass

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// RemoteOptions tune a RemoteJWKS. Zero values take the defaults.
type RemoteOptions struct {
	// Client makes the requests. Default: a client with Timeout.
	Client *http.Client
	// Timeout bounds one fetch. Default 5s.
	Timeout time.Duration
	// Refresh is how old the set may grow before it is fetched again.
	// Default 5m.
	Refresh time.Duration
	// MinRefetch is the least time between two fetches that an unknown kid
	// or a failed fetch may start, so a flood of made-up kids costs the
	// gateway one request per MinRefetch at most. Default 30s.
	MinRefetch time.Duration
	// MaxBytes bounds the body read. Default 64 KiB.
	MaxBytes int64
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// RemoteJWKS is a key set fetched from the gateway's JWKS URL and cached.
// The first Key call fetches it; a set older than Refresh is fetched again
// by the next call, while calls arriving meanwhile use the old one; an
// unknown kid fetches it again at most once per MinRefetch, which is how a
// newly published key is found before Refresh. A failed fetch keeps the
// keys already known.
type RemoteJWKS struct {
	url    string
	client *http.Client
	o      RemoteOptions

	mu        sync.Mutex
	keys      JWKS
	fetched   time.Time     // when keys were loaded
	attempted time.Time     // when the last fetch started
	lastErr   error         // how the last fetch failed, nil if it did not
	inflight  chan struct{} // closed when the running fetch ends
}

// NewRemoteJWKS checks the URL (http or https) and the options. Nothing
// is fetched until the first Key call.
func NewRemoteJWKS(rawURL string, o RemoteOptions) (*RemoteJWKS, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pass key set url: want an http or https URL, got %q", rawURL)
	}
	if o.Timeout < 0 || o.Refresh < 0 || o.MinRefetch < 0 || o.MaxBytes < 0 {
		return nil, errors.New("pass key set: negative option")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Timeout, 5*time.Second)
	def(&o.Refresh, 5*time.Minute)
	def(&o.MinRefetch, 30*time.Second)
	if o.MaxBytes == 0 {
		o.MaxBytes = 64 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &RemoteJWKS{url: u.String(), client: o.Client, o: o}
	if r.client == nil {
		r.client = &http.Client{Timeout: o.Timeout}
	}
	return r, nil
}

// Key implements KeySet. A known kid is answered at once, from a stale set
// too while it is fetched again in the background; an unknown kid, or no
// set yet, waits for a fetch when one runs or may start.
func (r *RemoteJWKS) Key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	r.mu.Lock()
	now := r.o.Now()
	k, known := r.keys[kid]
	stale := r.keys == nil || now.Sub(r.fetched) >= r.o.Refresh
	if known && !stale {
		r.mu.Unlock()
		return k, nil
	}
	done := r.inflight
	if done == nil && r.mayFetch(now, stale) {
		done = make(chan struct{})
		r.inflight, r.attempted = done, now
		go r.fetch(done)
	}
	r.mu.Unlock()
	if known {
		// A stale set answers with what it held when asked: the refresh
		// just started may finish first and drop the kid, and this caller
		// must not depend on that race.
		return k, nil
	}
	if done == nil {
		return r.lookup(kid)
	}
	return r.await(ctx, done, kid)
}

// mayFetch: the first fetch, a refresh of a set that is due after a
// success, or any fetch MinRefetch after the last one started. Called with
// mu held.
func (r *RemoteJWKS) mayFetch(now time.Time, stale bool) bool {
	return r.attempted.IsZero() || (stale && r.lastErr == nil) || now.Sub(r.attempted) >= r.o.MinRefetch
}

// await waits for the running fetch, then looks kid up.
func (r *RemoteJWKS) await(ctx context.Context, done chan struct{}, kid string) (crypto.PublicKey, error) {
	select {
	case <-done:
		return r.lookup(kid)
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the key set: %w", ErrKeysUnavailable, ctx.Err())
	}
}

// lookup answers from the keys held now.
func (r *RemoteJWKS) lookup(kid string) (crypto.PublicKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		if r.lastErr == nil {
			return nil, ErrKeysUnavailable
		}
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, r.lastErr)
	}
	return r.keys.Key(context.Background(), kid)
}

// fetch loads the set and records the outcome. It runs in its own goroutine
// on its own deadline, so a caller that gives up does not cancel it: the
// keys serve every caller.
func (r *RemoteJWKS) fetch(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Timeout)
	defer cancel()
	keys, err := r.get(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
	if err == nil {
		r.keys, r.fetched = keys, r.o.Now()
	}
	r.inflight = nil
	close(done)
}

func (r *RemoteJWKS) get(ctx context.Context) (JWKS, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the key set: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.o.MaxBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("fetching the key set: %w", err)
	case int64(len(body)) > r.o.MaxBytes:
		return nil, fmt.Errorf("fetching the key set: larger than %d bytes", r.o.MaxBytes)
	}
	return ParseJWKS(body)
}
