package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"sync"
	"time"
)

//go:embed templates/*.html static/*.css static/*.js static/*.d.ts
var files embed.FS

// Pages renders the waiting room and the error pages. Templates and the
// Content-Security-Policy hashes of the inline style and script are built once
// by New; a Pages is safe for concurrent use.
type Pages struct {
	tmpl *template.Template
	css  template.CSS
	js   template.JS
	// solver is challenge.js, the proof of work a room with challenge: pow
	// asks of a newcomer; only a challenge answer carries it.
	solver template.JS

	// client is /.waitroom/client.js for sites' own pages.
	client clientScript

	// assets are the waiting page's stylesheet and scripts as files (see
	// Static), by URL path; style, script and solverFile are those three.
	assets                    map[string]*asset
	style, script, solverFile *asset

	// plans render the built-in waiting page without walking its template
	// on every request (fastpage.go).
	plans plans

	// One policy per kind of answer, so error pages allow no script at all.
	cspWaiting, cspError string

	now func() time.Time // a field so tests can fix the clock
}

// cspJSON leaves a JSON answer nothing to load or run should a browser ever
// render it as a document.
const cspJSON = "default-src 'none'; frame-ancestors 'none'"

// New parses the embedded templates and hashes the embedded assets.
func New() (*Pages, error) {
	css, err := fs.ReadFile(files, "static/waitroom.css")
	if err != nil {
		return nil, fmt.Errorf("reading stylesheet: %w", err)
	}
	js, err := fs.ReadFile(files, "static/waiting.js")
	if err != nil {
		return nil, fmt.Errorf("reading script: %w", err)
	}
	// The page's script is turn.js (the alerts when the visitor's turn
	// comes in a background tab) then waiting.js, one file, so a room's
	// own template that inlines {{.JS}} gets the alerts too.
	turn, err := fs.ReadFile(files, "static/turn.js")
	if err != nil {
		return nil, fmt.Errorf("reading the turn alerts: %w", err)
	}
	js = append(append(append([]byte{}, turn...), '\n'), js...)
	solver, err := fs.ReadFile(files, "static/challenge.js")
	if err != nil {
		return nil, fmt.Errorf("reading the challenge solver: %w", err)
	}
	client, err := loadClient()
	if err != nil {
		return nil, err
	}
	tmpl, err := template.ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing templates: %w", err)
	}
	// The built-in page loads its style and scripts as files under
	// StaticPrefix, named by hash, with integrity attributes: a browser
	// fetches them once, and every poll or reload after that is a couple of
	// kilobytes. 'self' lets those files run; the hashes let a room's own
	// template inline the same bytes ({{.CSS}}, {{.JS}}), and nothing else.
	style, script, solverFile := newAsset("waitroom", "css", "text/css; charset=utf-8", css),
		newAsset("waiting", "js", "text/javascript; charset=utf-8", js),
		newAsset("challenge", "js", "text/javascript; charset=utf-8", solver)
	styleSrc, scriptSrc := hashSource(css), hashSource(js)+" "+hashSource(solver)
	return &Pages{
		tmpl:   tmpl,
		css:    template.CSS(css),
		js:     template.JS(js),
		solver: template.JS(solver),
		client: client,
		assets: map[string]*asset{style.url: style, script.url: script, solverFile.url: solverFile},
		style:  style, script: script, solverFile: solverFile,
		cspWaiting: "default-src 'none'; script-src 'self' " + scriptSrc + "; style-src 'self' " + styleSrc +
			"; img-src data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'",
		cspError: "default-src 'none'; style-src " + styleSrc +
			"; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
		now: time.Now,
	}, nil
}

// hashSource is the CSP source expression that allows exactly these bytes
// inline.
func hashSource(b []byte) string {
	sum := sha256.Sum256(b)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// buffers keeps render buffers between requests: a crowd polling the same
// page would otherwise allocate one page-sized buffer per request.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled stops one unusually large answer from pinning its buffer forever.
const maxPooled = 64 << 10

func getBuffer() *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		buffers.Put(b)
	}
}

// html renders the named template and sends it in one write, so a template
// error becomes a clean 500 rather than half a page.
func (p *Pages) html(w http.ResponseWriter, r *http.Request, status int, csp, name string, data any) {
	p.render(w, r, status, csp, nil, name, data)
}

// render is html with a room's own template in place of the named one,
// when custom is not nil.
func (p *Pages) render(w http.ResponseWriter, r *http.Request, status int, csp string, custom *template.Template, name string, data any) {
	buf := getBuffer()
	defer putBuffer(buf)
	var err error
	if custom != nil {
		// Checked at load; should it still fail on some value, the visitor
		// gets the built-in page rather than an error.
		if err = custom.Execute(buf, data); err != nil {
			buf.Reset()
		}
	}
	if custom == nil || err != nil {
		err = p.tmpl.ExecuteTemplate(buf, name, data)
	}
	if err != nil {
		// Only a broken embedded template gets here; New's tests render every
		// one, so this is a guard, not a path.
		secure(w.Header(), cspJSON)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	send(w, r, status, csp, "text/html; charset=utf-8", buf)
}

// json encodes v and sends it in one write.
func (p *Pages) json(w http.ResponseWriter, r *http.Request, status int, v any) {
	buf := getBuffer()
	defer putBuffer(buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		secure(w.Header(), cspJSON)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	send(w, r, status, cspJSON, "application/json; charset=utf-8", buf)
}

// send writes the headers every answer carries, then the body; HEAD gets the
// headers only.
func send(w http.ResponseWriter, r *http.Request, status int, csp, contentType string, body *bytes.Buffer) {
	h := w.Header()
	secure(h, csp)
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	if r == nil || r.Method != http.MethodHead {
		_, _ = w.Write(body.Bytes())
	}
}

// secure sets the headers that keep an answer out of caches and confine what
// a browser does with it. A waiting answer is personal and changes every few
// seconds, so no shared or browser cache may keep it.
func secure(h http.Header, csp string) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", csp)
	h.Del("ETag")
	h.Del("Last-Modified")
}

// retrySeconds rounds up to whole seconds, at least one, as Retry-After and
// refresh_after want: a zero would invite a client to ask again at once.
func retrySeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
