package main

import (
	"context"
	"flag"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/waitroom"
)

// demoConfig puts a built-in shop behind a room small enough to watch:
// two people inside, six let in per minute.
const demoConfig = `
listen: %q
admin: { listen: %q }
log: { level: info, format: console }
cookie: { secure: false }
upstreams:
  shop: { url: %q }
rooms:
  demo:
    max_active: 2
    admit_rate: 6/m
    admit_burst: 2
    session_ttl: 60s
    abandon_after: 30s
    tick: 1s
    page: { title: "Demo ticket sale", refresh: 2s, refresh_max: 10s }
routes:
  - { path: /, upstream: shop, room: demo }
`

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "localhost:8080", "address of the waiting room (\":8080\" for every interface)")
	adminListen := fs.String("admin", "localhost:9090", "address of the dashboard and admin API (loopback only: the demo sets no token)")
	bots := fs.Int("bots", 4, "simulated visitors who arrive first, so there is a line to watch (0 to 50)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bots < 0 || *bots > 50 {
		return &usageError{fmt.Errorf("--bots: must be from 0 to 50, got %d", *bots)}
	}
	log, err := newLogger(LogConfig{Level: "info", Format: "console"})
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	d, err := startDemo(*listen, *adminListen, log)
	if err != nil {
		return err
	}
	defer d.Close()
	url := "http://" + displayAddr(d.app.Addr())
	fmt.Fprintf(stdout, "\n  waitroom demo: a shop behind a room of 2 visitors, 6 admitted per minute.\n"+
		"  %d simulated visitors are in line first. Open %s in a browser to join the line,\n"+
		"  watch your place fall, and get in. Open it in a private window to queue again.\n"+
		"  The operators' dashboard is at http://%s/admin/ (no token in the demo).\n\n", *bots, url, displayAddr(d.app.AdminAddr()))
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.app.Run(gctx) })
	g.Go(func() error { runBots(gctx, url, *bots, 15*time.Second, log.Named("bots")); return nil })
	return g.Wait()
}

// demo is a running demo: the shop and the gateway in front of it.
type demo struct {
	app  *App
	shop *http.Server
}

// startDemo starts the shop on a loopback port and the gateway on listen.
func startDemo(listen, adminListen string, log *zap.Logger) (*demo, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the demo shop: %w", err)
	}
	shop := &http.Server{Handler: shopHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = shop.Serve(ln) }()
	cfg, err := parseConfig("demo configuration", fmt.Appendf(nil, demoConfig, listen, adminListen, "http://"+ln.Addr().String()))
	if err != nil {
		_ = shop.Close()
		return nil, err
	}
	cfg.demo = true
	app, err := NewApp(cfg, log)
	if err != nil {
		_ = shop.Close()
		return nil, err
	}
	return &demo{app: app, shop: shop}, nil
}

func (d *demo) Close() {
	_ = d.app.Close()
	_ = d.shop.Close()
}

func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil || host == "::" || host == "0.0.0.0" || host == "" {
		return "localhost:" + port
	}
	return net.JoinHostPort(host, port)
}

var shopPage = template.Must(template.New("shop").Parse(`<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo shop</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d2433}
.card{border:1px solid #d7dce5;border-radius:12px;padding:1.5rem}button{font:inherit;padding:.6rem 1.2rem;border-radius:8px;border:0;background:#2f5bd3;color:#fff;cursor:pointer}
code{background:#f1f3f7;padding:.1rem .3rem;border-radius:4px}</style>
<div class="card">{{if .Done}}<h1>Thank you!</h1><p>Your order is placed and your slot went to the next person in line.</p><p><a href="/">Back to the shop</a> (you will queue again).</p>
{{else}}<h1>You're in the demo shop</h1>
<p>waitroom let you through. Your visitor id is <code>{{.Visitor}}</code>.</p>
<p>While you are here, you hold one of the two places inside. Finish to free it for the next person:
the shop answers with <code>Waitroom-Command: release</code>, which waitroom acts on and removes.</p>
<form method="post" action="/checkout"><button>Buy a ticket and finish</button></form>{{end}}
</div></html>`))

// shopHandler is the demo site. It knows nothing of waitroom but two
// headers: who the visitor is, and how to say "this visitor is done".
func shopHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = shopPage.Execute(w, map[string]any{"Visitor": r.Header.Get(waitroom.VisitorHeader)})
	})
	mux.HandleFunc("POST /checkout", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Waitroom-Command", "release")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = shopPage.Execute(w, map[string]any{"Done": true})
	})
	return mux
}
