package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/middleware"
	"github.com/waitroom/waitroom/web"
)

func Example() {
	cfg := waitroom.DefaultRoom()
	cfg.MaxActive = 200
	room, err := middleware.New(middleware.Options{Name: "concert", Room: &cfg})
	if err != nil {
		panic(err)
	}
	defer room.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go room.Run(ctx)
	shop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "welcome, "+r.Header.Get(waitroom.VisitorHeader)[:4]+"…")
	})
	srv := httptest.NewServer(room.Handler(shop))
	defer srv.Close()
	res, _ := http.Get(srv.URL + "/tickets")
	fmt.Println(res.StatusCode)
	// Output: 200
}

// The room holds the line: one inside, the next waits until the site
// releases the first, then goes in.
func TestMiddleware_HoldsTheLine(t *testing.T) {
	cfg := waitroom.DefaultRoom()
	cfg.MaxActive, cfg.Tick = 1, "50ms"
	cookie := waitroom.DefaultCookie()
	cookie.Secure = false
	room, err := middleware.New(middleware.Options{Name: "concert", Room: &cfg, Cookie: &cookie})
	if err != nil {
		t.Fatal(err)
	}
	defer room.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go room.Run(ctx)
	var inside string
	srv := httptest.NewServer(room.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside = r.Header.Get(waitroom.VisitorHeader)
		fmt.Fprint(w, "site")
	})))
	defer srv.Close()
	client := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 5 * time.Second}
	}
	state := func(c *http.Client, path string) string {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", "application/json")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.Header.Get(waitroom.StateHeader) == "" {
			return "site"
		}
		var v map[string]any
		_ = json.NewDecoder(res.Body).Decode(&v)
		return fmt.Sprint(v["state"])
	}
	a, b := client(), client()
	if s := state(a, "/x"); s != "site" {
		t.Fatalf("the first visitor: %s", s)
	}
	first := inside
	if s := state(b, "/x"); s != "waiting" {
		t.Fatalf("the second visitor: %s", s)
	}
	if err := room.Release(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for state(b, "/.waitroom/status?room=concert") != "admitted" {
		if time.Now().After(deadline) {
			t.Fatal("the second visitor never went in")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := state(b, "/x"); s != "site" || inside == first {
		t.Fatalf("the second visitor after admission: %s", s)
	}
}

// The middleware checks a room against its page as the gateway does: a
// visitor far back polls every page.refresh_max, so abandon_after must be
// at least twice that.
func TestMiddleware_AbandonAfterAgainstRefreshMax(t *testing.T) {
	cfg, page := waitroom.DefaultRoom(), web.DefaultPage()
	cfg.AbandonAfter, page.RefreshMax = "40s", "30s"
	_, err := middleware.New(middleware.Options{Name: "concert", Room: &cfg, Page: &page})
	if err == nil || !strings.Contains(err.Error(), "abandon_after") {
		t.Fatalf("abandon_after 40s with page.refresh_max 30s: %v, want an abandon_after problem", err)
	}
}

// The middleware reads /.waitroom/ as the gateway's front door does: on
// the cleaned path, whatever its case, and never hands it to the site.
func TestMiddleware_WaitroomPathsAsTheGatewayReadsThem(t *testing.T) {
	room, err := middleware.New(middleware.Options{Name: "concert"})
	if err != nil {
		t.Fatal(err)
	}
	defer room.Close()
	var reached []string
	srv := httptest.NewServer(room.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.URL.Path)
	})))
	defer srv.Close()
	for path, want := range map[string]int{
		"/.waitroom//status?room=concert": http.StatusOK,
		"/.WAITROOM/status?room=concert":  http.StatusNotFound,
		"/.Waitroom/nothing":              http.StatusNotFound,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
	if len(reached) != 0 {
		t.Fatalf("waitroom's own paths reached the site: %q", reached)
	}
}
