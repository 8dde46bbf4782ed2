package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// With cookie.secure and no domain the room cookie is __Host-prefixed, so
// a sibling subdomain cannot toss one in. On the upgrade a ticket in the
// old name is read and moved, so nobody in line loses a place; an
// old-named copy of a ticket sealed since is a newcomer; neither name
// reaches the site.
func TestGateway_HostPrefixedCookie(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "cookie:%s", r.Header.Get("Cookie"))
	}))
	t.Cleanup(site.Close)
	plain := gwConfig(site.URL, "    max_active: 0")
	app, base, path, _ := fileGateway(t, plain, false)
	bare := newVisitor(t, base)
	bare.c.Jar = nil
	old := setCookie(bare.get("/events/a"), "waitroom_concert")
	inside := setCookie(bare.get("/festival/a"), "waitroom_festival")
	if old == nil || inside == nil {
		t.Fatal("no ticket before the upgrade")
	}
	rewrite(t, path, strings.Replace(plain, "secure: false", "secure: true", 1))
	if res, problems, err := app.ReloadNow(context.Background()); err != nil || res != "ok" {
		t.Fatalf("reload: %q %v %v", res, problems, err)
	}
	tickets := testTickets(t)
	visitorOf := func(value string) string {
		tk, err := tickets.Decode("concert", value)
		if err != nil {
			t.Fatalf("decoding a ticket: %v", err)
		}
		return tk.Visitor
	}
	r := bare.do(http.MethodGet, "/events/a", "Cookie", "waitroom_concert="+old.Value)
	moved, dropped := setCookie(r, "__Host-waitroom_concert"), setCookie(r, "waitroom_concert")
	if moved == nil || !moved.Secure || moved.Path != "/" || moved.Domain != "" || visitorOf(moved.Value) != visitorOf(old.Value) {
		t.Fatalf("the old name was not moved to __Host-: %v", setNames(r))
	}
	if dropped == nil || dropped.MaxAge >= 0 {
		t.Fatalf("the old name was not dropped: %v", setNames(r))
	}
	// Moved beside an admitted answer, the ticket keeps that answer private.
	r = bare.do(http.MethodGet, "/festival/a", "Cookie", "waitroom_festival="+inside.Value)
	if c := setCookie(r, "__Host-waitroom_festival"); c == nil || r.body != "cookie:" || !strings.Contains(r.header.Get("Cache-Control"), "private") {
		t.Fatalf("an admitted ticket moved: %q, Cache-Control %q, Set-Cookie %v", r.body, r.header.Get("Cache-Control"), setNames(r))
	}
	time.Sleep(1100 * time.Millisecond) // a ticket sealed after the reload
	fresh := setCookie(bare.get("/events/a"), "__Host-waitroom_concert")
	if fresh == nil {
		t.Fatal("a newcomer got no __Host- cookie")
	}
	tossed := bare.do(http.MethodGet, "/events/a", "Cookie", "waitroom_concert="+fresh.Value)
	if c := setCookie(tossed, "__Host-waitroom_concert"); c == nil || visitorOf(c.Value) == visitorOf(fresh.Value) {
		t.Fatalf("an old-named copy of a new ticket was taken: %v", setNames(tossed))
	}
	in := bare.do(http.MethodGet, "/festival/x", "Cookie", "__Host-waitroom_festival=x; waitroom_festival=y; site=1")
	if in.body != "cookie:site=1" {
		t.Fatalf("the site heard %q, want only its own cookie", in.body)
	}
}

// setCookie is the Set-Cookie of r named name; nil for none.
func setCookie(r reply, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// setNames are the names r sets cookies under, never their values.
func setNames(r reply) []string {
	var names []string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		names = append(names, c.Name)
	}
	return names
}
