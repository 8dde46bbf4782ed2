package pass

import (
	"context"
	"crypto"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A pass is the documented header, the claims of its Pass with iss and
// times added, and reads back through a verifier.
func TestSigner_Sign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Unix(1_800_000_000, 700_000_000))
	tok := sign(t, f.signer, f.pass, f.now)
	segs := strings.Split(tok, ".")
	head, _ := b64.DecodeString(segs[0])
	if want := headerJSON(f.cur); string(head) != want {
		t.Fatalf("header %s, want %s", head, want)
	}
	body, _ := b64.DecodeString(segs[1])
	want := `{"iss":"waitroom","aud":"shop","sub":"acct:\"zoë\"@example.com","room":"concert","path":"/events/7/checkout","tkt":1800000000000042,"iat":1800000000,"exp":1800000060}`
	if string(body) != want {
		t.Fatalf("claims %s\nwant   %s", body, want)
	}
	if _, err := goVerifier(t, f.signer, f.now).Verify(context.Background(), tok, testRoom); err != nil {
		t.Fatal(err)
	}
}

func TestSigner_Refuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	for name, edit := range map[string]func(*Pass){
		"no audience":      func(p *Pass) { p.Audience = "" },
		"no room":          func(p *Pass) { p.Room = "" },
		"no subject":       func(p *Pass) { p.Subject = "" },
		"bad UTF-8":        func(p *Pass) { p.Subject = "\xff" },
		"negative ticket":  func(p *Pass) { p.Ticket = -1 },
		"ticket past 2^53": func(p *Pass) { p.Ticket = 1 << 53 },
		"too long":         func(p *Pass) { p.Subject = strings.Repeat("s", MaxTokenSize) },
	} {
		p := f.pass
		edit(&p)
		if tok, err := f.signer.Sign(p, f.now); err == nil {
			t.Errorf("%s: signed %d bytes", name, len(tok))
		}
	}
	for name, o := range map[string]SignerOptions{
		"no key":       {Issuer: "w", TTL: time.Minute},
		"no issuer":    {Keys: []crypto.Signer{f.cur}, TTL: time.Minute},
		"zero ttl":     {Keys: []crypto.Signer{f.cur}, Issuer: "w"},
		"fraction ttl": {Keys: []crypto.Signer{f.cur}, Issuer: "w", TTL: 1500 * time.Millisecond},
		"bad key":      {Keys: []crypto.Signer{f.cur[:10]}, Issuer: "w", TTL: time.Minute},
		"same key":     {Keys: []crypto.Signer{f.cur, f.cur}, Issuer: "w", TTL: time.Minute},
	} {
		if _, err := NewSigner(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// For reuses a pass until a quarter of its TTL is left, and makes a new one
// for another pass, after that, or when the clock stepped back.
func TestSigner_For(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Unix(1_800_000_000, 0))
	s := f.signer
	get := func(p Pass, at time.Duration) string {
		t.Helper()
		tok, err := s.For(p, f.now.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first := get(f.pass, 0)
	if get(f.pass, 44*time.Second) != first {
		t.Fatal("a pass with more than a quarter of its TTL left was made again")
	}
	other := f.pass
	other.Ticket++
	if get(other, time.Second) == first {
		t.Fatal("another ticket got the same pass")
	}
	renewed := get(f.pass, 45*time.Second)
	if renewed == first {
		t.Fatal("a pass with a quarter of its TTL left was reused")
	}
	c, err := goVerifier(t, s, f.now.Add(45*time.Second)).Verify(context.Background(), renewed, testRoom)
	if err != nil || c.IssuedAt != f.now.Unix()+45 {
		t.Fatalf("the renewed pass: %+v %v", c, err)
	}
	if get(f.pass, 30*time.Second) == renewed {
		t.Fatal("after the clock stepped back, a pass issued in its future was reused")
	}
	if _, err := s.For(Pass{}, f.now); err == nil {
		t.Fatal("For signed an empty pass")
	}
}

// Memory holds the sessions of the last two TTLs at most, and a pass
// outlives its use in the cache.
func TestPassCache_Bounded(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	c := newPassCache(10 * time.Second)
	watched := Pass{Subject: "watched"}
	for i := range 10_000 {
		now := t0.Add(time.Duration(i) * 10 * time.Millisecond) // 100 new sessions a second for 100s
		c.put(Pass{Subject: fmt.Sprint(i)}, cachedPass{token: "t", issued: now, renew: now.Add(7500 * time.Millisecond)}, now)
		switch i {
		case 5_500: // the generations swap at 60s, 5s later
			c.put(watched, cachedPass{token: "w", issued: now, renew: now.Add(7500 * time.Millisecond)}, now)
		case 6_249: // 7.49s later
			if tok, ok := c.get(watched, now); !ok || tok != "w" {
				t.Fatal("a pass still in use was dropped")
			}
		case 6_250:
			if _, ok := c.get(watched, now); ok {
				t.Fatal("a pass due for renewal was reused")
			}
		}
	}
	if n := c.len(); n > 2_000 {
		t.Fatalf("the cache holds %d passes after 10 TTLs of 1,000 sessions, want at most 2,000", n)
	}
}

// One admitted client asking for a new path on every request fills the
// cache to its bound and no further; passes past the bound are still made
// and valid, and the paths cached before are still reused.
func TestPassCache_CappedByPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v := goVerifier(t, f.signer, f.now)
	first := f.pass
	first.Path = "/events/7/p0"
	tok0, err := f.signer.For(first, f.now)
	if err != nil {
		t.Fatal(err)
	}
	const requests = maxCachedPasses + 2_000
	var last string
	for i := 1; i < requests; i++ {
		p := f.pass
		p.Path = fmt.Sprintf("/events/7/p%d", i)
		if last, err = f.signer.For(p, f.now); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.signer.cache.len(); n != maxCachedPasses {
		t.Fatalf("after %d paths of one visitor the cache holds %d passes, want the bound %d", requests, n, maxCachedPasses)
	}
	if _, err := v.Verify(context.Background(), last, f.pass.Room); err != nil {
		t.Fatalf("a pass made past the bound: %v", err)
	}
	if tok, _ := f.signer.For(first, f.now); tok != tok0 {
		t.Fatal("a pass cached before the bound was not reused")
	}
}

func TestSigner_ForConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v := goVerifier(t, f.signer, f.now)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := f.pass
				p.Subject = fmt.Sprint(i % 20)
				tok, err := f.signer.For(p, f.now.Add(time.Duration(g*i)*time.Millisecond))
				if err == nil {
					_, err = v.Verify(context.Background(), tok, testRoom)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSigner_JWKSHandler(t *testing.T) {
	t.Parallel()
	s := newFixture(t, time.Now()).signer
	h := s.JWKSHandler()
	for _, tc := range []struct {
		method string
		status int
		body   string
	}{
		{http.MethodGet, 200, string(s.JWKS())},
		{http.MethodHead, 200, ""},
		{http.MethodPost, 405, "method not allowed\n"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, "/.waitroom/jwks.json", nil))
		if w.Code != tc.status || w.Body.String() != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.method, w.Code, w.Body, tc.status, tc.body)
		}
		if tc.status == 200 && w.Header().Get("Content-Type") != "application/jwk-set+json" {
			t.Errorf("%s: Content-Type %q", tc.method, w.Header().Get("Content-Type"))
		}
	}
}
