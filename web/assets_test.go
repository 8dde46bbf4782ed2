package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page's files are served by their hashed names only, cached for a
// year, compressed for clients that take gzip, and refused by any other
// name or method.
func TestStatic_ServesTheHashedFiles(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, a := range []*asset{p.style, p.script, p.solverFile} {
		if !strings.HasPrefix(a.url, StaticPrefix) || !IsStatic(a.url) {
			t.Fatalf("asset at %q", a.url)
		}
		rec := serve(p, http.MethodGet, a.url, "")
		h := rec.Header()
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), a.body) || h.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d, %d bytes, encoding %q", a.url, rec.Code, rec.Body.Len(), h.Get("Content-Encoding"))
		}
		if h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("Content-Type") != a.ctype ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") == "" {
			t.Errorf("%s: headers %v", a.url, h)
		}
		rec = serve(p, http.MethodGet, a.url, "gzip, deflate, br")
		zr, err := gzip.NewReader(rec.Body)
		if err != nil || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s gzip: %v, encoding %q", a.url, err, rec.Header().Get("Content-Encoding"))
		}
		if got, _ := io.ReadAll(zr); !bytes.Equal(got, a.body) || len(a.gz) >= len(a.body) {
			t.Errorf("%s: gzip body of %d bytes unpacks to %d, want %d", a.url, len(a.gz), len(got), len(a.body))
		}
		r := httptest.NewRequest(http.MethodGet, a.url, nil)
		r.Header.Set("If-None-Match", a.etag)
		w := httptest.NewRecorder()
		p.Static(w, r)
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
			t.Errorf("%s with its ETag: %d, %d bytes", a.url, w.Code, w.Body.Len())
		}
		if rec := serve(p, http.MethodHead, a.url, ""); rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
			t.Errorf("HEAD %s: %d, %d bytes", a.url, rec.Code, rec.Body.Len())
		}
		if rec := serve(p, http.MethodPost, a.url, ""); rec.Code != http.StatusNotFound {
			t.Errorf("POST %s: %d", a.url, rec.Code)
		}
	}
	for _, path := range []string{StaticPrefix + "waiting.000000000000.js", StaticPrefix + "waitroom.css", StaticPrefix, StaticPrefix + "../page.go"} {
		if rec := serve(p, http.MethodGet, path, ""); rec.Code != http.StatusNotFound || rec.Header().Get("Cache-Control") == "public, max-age=31536000, immutable" {
			t.Errorf("%s: %d, %q", path, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
}

func serve(p *Pages, method, path, ae string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if ae != "" {
		r.Header.Set("Accept-Encoding", ae)
	}
	w := httptest.NewRecorder()
	p.Static(w, r)
	return w
}

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	for ae, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "br, gzip;q=0.5": true, "gzip;q=0": false, "gzip; q=0.0": false,
		"deflate": false, "x-gzip": false, "identity, gzip ; q=1": true,
	} {
		if got := acceptsGzip(ae); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", ae, got, want)
		}
	}
}
