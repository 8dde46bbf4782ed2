package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
)

// clientScript is /.waitroom/client.js: client.js with turn.js's alerts
// and challenge.js's solver after it, one file for a site's pages to load.
type clientScript struct {
	body    []byte
	version string // the first 12 hex digits of the body's SHA-256
}

func loadClient() (clientScript, error) {
	client, err := fs.ReadFile(files, "static/client.js")
	if err != nil {
		return clientScript{}, fmt.Errorf("reading client.js: %w", err)
	}
	solver, err := fs.ReadFile(files, "static/challenge.js")
	if err != nil {
		return clientScript{}, fmt.Errorf("reading the challenge solver: %w", err)
	}
	turn, err := fs.ReadFile(files, "static/turn.js")
	if err != nil {
		return clientScript{}, fmt.Errorf("reading the turn alerts: %w", err)
	}
	body := append(append(append(append(append([]byte{}, client...), '\n'), turn...), '\n'), solver...)
	sum := sha256.Sum256(body)
	return clientScript{body: body, version: hex.EncodeToString(sum[:6])}, nil
}

// ClientVersion is the version client.js is served under: a page that
// loads /.waitroom/client.js?v=VERSION may keep it for a year.
func (p *Pages) ClientVersion() string { return p.client.version }

// Client serves client.js: cached for a year (immutable) when asked by its
// version, for five minutes otherwise, with an ETag either way.
func (p *Pages) Client(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	etag := `"` + p.client.version + `"`
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", etag)
	if r.URL.Query().Get("v") == p.client.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(p.client.body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(p.client.body)
}

// ClientTypes serves client.d.ts, the TypeScript types of client.js, beside
// it (docs/client.md). It changes with the build, so it is cached briefly.
func (p *Pages) ClientTypes(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(files, "static/client.d.ts")
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError) // embedded at build time: a broken build
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/typescript; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}
