package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// What browsers send, so the gateway picks the answers it gives browsers.
const (
	htmlAccept     = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	jsonAccept     = "application/json"
	acceptLanguage = "en-US,en;q=0.9"
	userAgent      = "Mozilla/5.0 (compatible; waitroom-load/1)"
	clientHeader   = "X-Load-Client" // tells our counting upstream which visitor this is
	maxBody        = 4 << 20         // a page longer than this is read no further
)

// newTransport is the one connection pool every visitor shares. Real
// browsers each hold their own connections, but the gateway keys a visitor
// by its cookie, never by its connection, so which socket carries a request
// changes nothing it decides; a socket per visitor would mostly measure
// both processes' file descriptor limits. The pool still opens a connection
// for every request in flight, so a spike's concurrency reaches the gateway.
func newTransport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // a load test through a proxy measures the proxy
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConns = 0 // no overall cap: thousands of visitors share one or two hosts
	t.MaxIdleConnsPerHost = 4096
	t.IdleConnTimeout = 60 * time.Second
	t.ResponseHeaderTimeout = timeout
	return t
}

// answer is a response read to its end.
type answer struct {
	status     int
	header     http.Header
	body       []byte
	sent, recv time.Duration // offsets from the run's start
}

// state is the Waitroom-State header: set on every answer the gateway makes
// itself, never on the site's.
func (a *answer) state() string { return a.header.Get("Waitroom-State") }

// statusJSON is the part of web.Status a visitor acts on.
type statusJSON struct {
	Room         string `json:"room"`
	State        string `json:"state"`
	Position     int64  `json:"position"`
	Ticket       int64  `json:"ticket"`
	RefreshAfter int64  `json:"refresh_after"`
	Next         string `json:"next"`
}

// pageData is the JSON the waiting page seeds its script with.
type pageData struct {
	Status  string `json:"status"`
	Refresh int64  `json:"refresh"`
	State   string `json:"state"`
	Ticket  int64  `json:"ticket"`
	Next    string `json:"next"`
}

// pageSeed finds the waiting page's <script id="wr-data"> JSON.
func pageSeed(body []byte) (pageData, error) {
	const open, end = `id="wr-data">`, `</script>`
	i := bytes.Index(body, []byte(open))
	if i < 0 {
		return pageData{}, errors.New("no wr-data in the page")
	}
	rest := body[i+len(open):]
	j := bytes.Index(rest, []byte(end))
	if j < 0 {
		return pageData{}, errors.New("wr-data not closed")
	}
	var d pageData
	if err := json.Unmarshal(rest[:j], &d); err != nil {
		return pageData{}, errors.New("wr-data is not JSON")
	}
	return d, nil
}

// headers make a request look like the browser (or app) action it stands
// for, including the Fetch Metadata the gateway reads to refuse cross-site
// leaves.
type action int

const (
	typed    action = iota // the address typed in: a top-level navigation
	fetched                // the page's script: fetch(status, {credentials: 'same-origin', cache: 'no-store'})
	followed               // a same-site navigation: a link, location.replace, a form post
)

func setHeaders(req *http.Request, a action, accept, referer string) {
	h := req.Header
	h.Set("User-Agent", userAgent)
	h.Set("Accept-Language", acceptLanguage)
	if accept == "json" {
		// An app, not a browser: it sends no Fetch Metadata.
		h.Set("Accept", jsonAccept)
		return
	}
	switch a {
	case typed:
		h.Set("Accept", htmlAccept)
		h.Set("Sec-Fetch-Site", "none")
		h.Set("Sec-Fetch-Mode", "navigate")
		h.Set("Sec-Fetch-Dest", "document")
		h.Set("Upgrade-Insecure-Requests", "1")
	case fetched:
		h.Set("Accept", jsonAccept)
		h.Set("Sec-Fetch-Site", "same-origin")
		h.Set("Sec-Fetch-Mode", "cors")
		h.Set("Sec-Fetch-Dest", "empty")
		h.Set("Cache-Control", "no-cache") // what cache: 'no-store' adds
		h.Set("Pragma", "no-cache")
	case followed:
		h.Set("Accept", htmlAccept)
		h.Set("Sec-Fetch-Site", "same-origin")
		h.Set("Sec-Fetch-Mode", "navigate")
		h.Set("Sec-Fetch-Dest", "document")
	}
	if referer != "" {
		h.Set("Referer", referer) // the page's Referrer-Policy is same-origin: the full URL
	}
}

// netError names a failed request's cause for the error table.
func netError(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EMFILE):
		return "local: out of ports or files" // this machine's limit, not the gateway's
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connect: refused"
	case errors.As(err, &op) && op.Op == "dial":
		return "connect"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "network"
}

// decodeStatus reads a JSON answer of the gateway.
func decodeStatus(body []byte) (statusJSON, error) {
	var s statusJSON
	if err := json.Unmarshal(body, &s); err != nil {
		return s, errors.New("bad JSON")
	}
	if s.State == "" {
		return s, errors.New("unexpected answer: JSON without a state")
	}
	return s, nil
}
