package pass

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v := goVerifier(t, f.signer, f.now)
	site := Middleware(v, MiddlewareOptions{Room: testRoom})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := FromContext(r.Context())
		if !ok {
			t.Error("no claims in the context")
		}
		json.NewEncoder(w).Encode(c)
	}))
	valid := sign(t, f.signer, f.pass, f.now)
	for _, tc := range []struct {
		name   string
		path   string
		passes []string
		status int
	}{
		{"valid", testPath, []string{valid}, 200},
		{"another path", "/events/7/refund", []string{valid}, 403},
		{"the path in another spelling", "/events/7/check%6Fut", []string{valid}, 403},
		{"none", testPath, nil, 403},
		{"two", testPath, []string{valid, valid}, 403},
		{"expired", testPath, []string{sign(t, f.signer, f.pass, f.now.Add(-time.Hour))}, 403},
		{"garbage", testPath, []string{"x.y.z"}, 403},
	} {
		r := httptest.NewRequest(http.MethodPost, tc.path, nil)
		for _, p := range tc.passes {
			r.Header.Add(HeaderName, p)
		}
		w := httptest.NewRecorder()
		site.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s: %d %q, want %d", tc.name, w.Code, w.Body, tc.status)
			continue
		}
		if tc.status != 200 {
			if body := w.Body.String(); body != "a valid waiting room pass is required\n" {
				t.Errorf("%s: body %q tells more than it should", tc.name, body)
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("%s: a refusal without Cache-Control: no-store", tc.name)
			}
			continue
		}
		var c Claims
		if err := json.NewDecoder(w.Body).Decode(&c); err != nil || c.Subject != f.pass.Subject || c.Room != testRoom {
			t.Errorf("%s: the handler saw %+v %v", tc.name, c, err)
		}
	}
	if _, ok := FromContext(httptest.NewRequest("GET", "/", nil).Context()); ok {
		t.Fatal("claims in a request that never had a pass")
	}
}

// Key trouble is the gateway's, not the visitor's: 503. A custom answer and
// header name are honoured.
func TestMiddleware_Options(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	down := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(down.Close)
	remote := newRemote(t, down.URL, RemoteOptions{})
	v := goVerifier(t, remote, f.now)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	r := httptest.NewRequest(http.MethodGet, testPath, nil)
	r.Header.Set(HeaderName, sign(t, f.signer, f.pass, f.now))
	w := httptest.NewRecorder()
	Middleware(v, MiddlewareOptions{})(ok).ServeHTTP(w, r)
	if w.Code != 503 || strings.Contains(w.Body.String(), "404") {
		t.Fatalf("keys unavailable: %d %q, want 503 without detail", w.Code, w.Body)
	}
	var reason string
	custom := Middleware(goVerifier(t, f.signer, f.now), MiddlewareOptions{Header: "X-Pass", Room: "vip",
		Refused: func(w http.ResponseWriter, r *http.Request, err error) {
			reason = Reason(err)
			w.WriteHeader(http.StatusTeapot)
		}})(ok)
	r = httptest.NewRequest(http.MethodGet, testPath, nil)
	r.Header.Set("X-Pass", sign(t, f.signer, f.pass, f.now))
	w = httptest.NewRecorder()
	custom.ServeHTTP(w, r)
	if w.Code != http.StatusTeapot || reason != "room" {
		t.Fatalf("custom refusal: %d %q, want 418 and reason room", w.Code, reason)
	}
}

// A site of template rooms names the room from the request (RoomOf, here
// from a ServeMux pattern): a pass for event-7 opens /events/7/ and no
// other event's path, even where the path claim matched; a site behind a
// rewriting proxy checks the path the gateway saw (PathOf).
func TestMiddleware_RoomOfRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v := goVerifier(t, f.signer, f.now)
	guard := Middleware(v, MiddlewareOptions{RoomOf: func(r *http.Request) string {
		if id := r.PathValue("id"); id != "" {
			return "event-" + id
		}
		return ""
	}})
	mux := http.NewServeMux()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	mux.Handle("/events/{id}/checkout", guard(ok))
	mux.Handle("/about", guard(ok))
	p := f.pass
	p.Room = "event-7"
	for _, tc := range []struct {
		name, path string
		pass       Pass
		status     int
	}{
		{"its own event", "/events/7/checkout", p, 200},
		{"another event, pass made for that path", "/events/8/checkout", Pass{Audience: p.Audience, Room: "event-7", Subject: p.Subject, Path: "/events/8/checkout"}, 403},
		{"a path in no room", "/about", Pass{Audience: p.Audience, Room: "event-7", Subject: p.Subject, Path: "/about"}, 403},
	} {
		r := httptest.NewRequest(http.MethodPost, tc.path, nil)
		r.Header.Set(HeaderName, sign(t, f.signer, tc.pass, f.now))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.status)
		}
	}
	rewritten := Middleware(v, MiddlewareOptions{Room: testRoom, PathOf: func(r *http.Request) string {
		return "/events" + r.URL.EscapedPath()
	}})(ok)
	r := httptest.NewRequest(http.MethodPost, "/7/checkout", nil)
	r.Header.Set(HeaderName, sign(t, f.signer, f.pass, f.now))
	w := httptest.NewRecorder()
	rewritten.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("PathOf: %d", w.Code)
	}
}

// The path a pass names is the request line's, as the site received it:
// in auth mode the gateway names the raw path ("{" bare), in proxy mode the
// one it sent (escaped); the middleware takes each on its own request line
// and refuses it on the other spelling.
func TestMiddleware_RawRequestPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Now())
	v := goVerifier(t, f.signer, f.now)
	site := Middleware(v, MiddlewareOptions{Room: testRoom})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	raw, escaped := "/events/{7}/check|out", "/events/%7B7%7D/check%7Cout"
	for _, tc := range []struct {
		claim, line string
		status      int
	}{
		{raw, raw + "?seat=1", 200},
		{escaped, escaped, 200},
		{raw, escaped, 403},
		{escaped, raw, 403},
	} {
		p := f.pass
		p.Path = tc.claim
		r := httptest.NewRequest(http.MethodPost, tc.line, nil)
		r.Header.Set(HeaderName, sign(t, f.signer, p, f.now))
		w := httptest.NewRecorder()
		site.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("a pass for %s on the request line %s: %d, want %d (EscapedPath %s)", tc.claim, tc.line, w.Code, tc.status, r.URL.EscapedPath())
		}
	}
}
