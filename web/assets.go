package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// StaticPrefix is where the waiting page's stylesheet and scripts are
// served, each under a name that holds its hash, so a browser keeps it for
// a year and asks once: the page a crowd polls is then a couple of
// kilobytes, not fifteen.
const StaticPrefix = "/.waitroom/static/"

// asset is one static file, compressed once.
type asset struct {
	url       string // StaticPrefix + name.hash.ext
	integrity string // sha256-… of body, for the element's integrity attribute
	ctype     string
	body, gz  []byte
	etag      string
}

// newAsset names body after its hash and compresses it.
func newAsset(name, ext, ctype string, body []byte) *asset {
	sum := sha256.Sum256(body)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level cannot fail
	_, _ = zw.Write(body)
	_ = zw.Close()
	version := hex.EncodeToString(sum[:6])
	return &asset{
		url:       StaticPrefix + name + "." + version + "." + ext,
		integrity: "sha256-" + base64.StdEncoding.EncodeToString(sum[:]),
		ctype:     ctype, body: body, gz: gz.Bytes(), etag: `"` + version + `"`,
	}
}

// IsStatic reports whether path is under StaticPrefix: the caller then
// hands the request to Static.
func IsStatic(path string) bool { return strings.HasPrefix(path, StaticPrefix) }

// Static serves the waiting page's stylesheet and scripts by their hashed
// names: immutable for a year, gzip when the client takes it, 404 for any
// other name (an old version's included, so a stale page shows bare
// rather than with the wrong script).
func (p *Pages) Static(w http.ResponseWriter, r *http.Request) {
	a := p.assets[r.URL.Path]
	if a == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		p.Error(w, r, http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = a.gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip reads Accept-Encoding for gzip not refused with q=0.
func acceptsGzip(ae string) bool {
	for part := range strings.SplitSeq(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// assetRef is what a page needs to load an asset: its URL and integrity.
type assetRef struct{ URL, Integrity string }

// ref is a's assetRef; the zero one for a nil asset (a Pages made
// without New, as loadTemplate's sample is).
func (a *asset) ref() assetRef {
	if a == nil {
		return assetRef{}
	}
	return assetRef{URL: a.url, Integrity: a.integrity}
}
