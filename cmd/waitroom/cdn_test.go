package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// A CDN obeys its own cache rules before Cache-Control: beside a fresh
// ticket or a Waitroom-Token they are dropped, so "private" is all a
// cache hears; an answer that carries no ticket keeps the site's rules.
func TestGateway_CDNCacheRulesDroppedBesideATicket(t *testing.T) {
	rules := []string{"CDN-Cache-Control", "Surrogate-Control", "Cloudflare-CDN-Cache-Control"}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		for _, k := range rules {
			w.Header().Set(k, "max-age=86400")
		}
		fmt.Fprintf(w, "site:%s", r.URL.Path)
	}))
	t.Cleanup(site.Close)
	_, base := startGateway(t, gwConfig(site.URL, twoInside))
	dropped := func(what string, r reply) {
		t.Helper()
		for _, k := range rules {
			if v := r.header.Get(k); v != "" {
				t.Errorf("%s: %s: %q beside a ticket", what, k, v)
			}
		}
	}
	v := newVisitor(t, base)
	first := v.get("/events/a")
	if first.body != "site:/events/a" || len(setNames(first)) == 0 {
		t.Fatalf("first visit: %d %q, Set-Cookie %v", first.status, first.body, setNames(first))
	}
	dropped("the answer with a new cookie", first)
	second := v.get("/events/a")
	for _, k := range rules {
		if len(setNames(second)) != 0 || second.header.Get(k) != "max-age=86400" {
			t.Errorf("an answer without a ticket: %s %q, Set-Cookie %v", k, second.header.Get(k), setNames(second))
		}
	}
	app := newVisitor(t, base)
	app.c.Jar = nil
	handed := app.get("/events/a")
	token := handed.header.Get(waitroom.TokenHeader)
	if token == "" {
		t.Fatal("no Waitroom-Token for a client without cookies")
	}
	dropped("the answer handing out a token", handed)
	r := app.do(http.MethodGet, "/events/a", waitroom.TokenHeader, token)
	if r.body != "site:/events/a" || r.header.Get(waitroom.TokenHeader) == "" {
		t.Fatalf("an app's admitted request: %d %q", r.status, r.body)
	}
	dropped("an app's admitted answer", r)
}
