package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// Stopping the gateway (SIGTERM cancels Run's context) must let a request
// already on its way to the site finish.
func TestApp_ShutdownDrainsInFlightRequests(t *testing.T) {
	started := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "finished")
	}))
	defer slow.Close()
	cfg, err := parseConfig("test.yaml", []byte(gwConfig(slow.URL, twoInside)))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()

	body := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + app.Addr().String() + "/slow")
		if err != nil {
			body <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body <- string(b)
	}()
	<-started
	cancel()
	if got := <-body; got != "finished" {
		t.Fatalf("in-flight request during shutdown: %q", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the drain")
	}
}

func TestGateway_OversizedHeadersGet431(t *testing.T) {
	_, srv := newUpstream(t)
	_, base := startGateway(t, gwConfig(srv.URL, twoInside))
	r := newVisitor(t, base).do(http.MethodGet, "/", "X-Big", strings.Repeat("a", 80<<10))
	if r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("80 KiB of headers: %d", r.status)
	}
}
