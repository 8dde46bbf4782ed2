package proxy

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"go.uber.org/zap"
)

// Options are what an Upstream needs from the rest of the application. Every
// field is optional.
type Options struct {
	// Log receives upstream failures at warn and clients gone at debug. Nil
	// discards.
	Log *zap.Logger
	// TrustedProxies are the peers whose forwarding headers are passed on:
	// Forwarded and X-Forwarded-For extended, the rest (X-Forwarded-Host,
	// -Proto, X-Real-IP, True-Client-IP, ...) as sent, in their canonical
	// spelling only. From anyone else every forwarding header is dropped,
	// in any spelling: a client could otherwise claim any address.
	TrustedProxies []netip.Prefix
	// OwnCookie reports whether a cookie name belongs to the waiting room;
	// such cookies never reach the upstream.
	OwnCookie func(name string) bool
	// Pass, if set, makes the admission pass of a request the gate vouched
	// for (its Waitroom-Visitor and Waitroom-Room set), for path, the path
	// the upstream receives (escaped, without the query); "" adds none. Its
	// header is reserved: a client's own never reaches the site, and
	// neither does one in the upstream's answer.
	Pass func(in *http.Request, path string) string
	// DropHeaders are further request headers never forwarded, such as the
	// bypass secret's (Bypass.HeaderName).
	DropHeaders []string
	// ErrorPage writes the page for an error status (400, 502, 504). Nil
	// writes a short plain-text body.
	ErrorPage func(w http.ResponseWriter, r *http.Request, status int)
	// OnCommand is called once for each command (see Commands) the
	// upstream gives in "Waitroom-Command", a header or a trailer, with the
	// command in lower case. res.Request is the outbound request, which
	// carries the Waitroom-Room and Waitroom-Visitor headers; when the
	// command came in a header, res.Header is still being prepared and may
	// be added to (say, a Set-Cookie that ends the ticket). It runs before
	// the response is relayed, so it must be quick; its context ends when
	// the client goes away.
	OnCommand func(res *http.Response, command string)
	// OnDone is called after every request with the status sent (499 when the
	// client went away first, 101 for an upgrade) and the time taken.
	OnDone func(r *http.Request, status int, d time.Duration)
	// OnFirstByte is called after a request that says something of the
	// site: its answer, timed from the request written whole to the first
	// byte of the answer, or the gateway's 502 or 504 for a site that
	// failed it, or a client that gave up waiting (499). Not after an
	// answer the gateway wrote for its own reasons (400), an upgrade, or a
	// request whose body the client did not finish (see Timing): the
	// latency a room's autopilot judges the site by (timing.go).
	OnFirstByte OnFirstByteFunc
	// Measures, when set, says whether r is timed for OnFirstByte at all:
	// tracing a request costs a few allocations, which a request no
	// autopilot judges need not pay. Nil: every request is.
	Measures func(r *http.Request) bool
}

// Upstream forwards requests to one upstream site. It is an http.Handler,
// safe for concurrent use; it owns a connection pool, released by Close.
type Upstream struct {
	name    string
	target  *url.URL
	opt     Options
	log     *zap.Logger
	trusted []netip.Prefix
	// reserved are the request headers, in any spelling, that never reach
	// the upstream from a client (see dropReserved).
	reserved []string
	rp       *httputil.ReverseProxy
	tr       *http.Transport
}

// NewUpstream builds the reverse proxy for the upstream called name.
func NewUpstream(name string, s UpstreamSettings, opt Options) (*Upstream, error) {
	tr, err := newTransport(s)
	if err != nil {
		return nil, fmt.Errorf("building upstream %q: %w", name, err)
	}
	log := opt.Log
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String(fieldUpstream, name))
	errLog, err := zap.NewStdLogAt(log, zap.WarnLevel)
	if err != nil {
		return nil, fmt.Errorf("building upstream %q: making error log: %w", name, err)
	}
	u := &Upstream{name: name, target: s.target, opt: opt, log: log, tr: tr}
	for _, p := range opt.TrustedProxies {
		u.trusted = append(u.trusted, p.Masked())
	}
	u.opt.DropHeaders = slices.Clone(opt.DropHeaders)
	u.reserved = append([]string{TokenHeader, VisitorHeader, RoomHeader, PassHeader}, opt.DropHeaders...)
	u.rp = &httputil.ReverseProxy{
		Rewrite:        u.rewrite,
		Transport:      tr,
		ErrorLog:       errLog,
		ErrorHandler:   u.handleError,
		ModifyResponse: u.modifyResponse,
		BufferPool:     copyBuffers,
	}
	return u, nil
}

// Name is the upstream's name in the configuration.
func (u *Upstream) Name() string { return u.name }

// Close drops the idle connections to the upstream; requests in flight go on.
// A reload calls it on the upstreams it replaced.
func (u *Upstream) Close() error {
	u.tr.CloseIdleConnections()
	return nil
}

// ServeHTTP forwards r. It cleans the path itself, so the upstream receives
// exactly the path a router would have matched even if the caller forgot to.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, in: r}
	defer u.timed(rec)
	if u.opt.OnDone != nil {
		start := time.Now()
		defer func() { u.opt.OnDone(rec.in, rec.code(), time.Since(start)) }()
	}
	if badUpgrade(r.Header) {
		u.refuse(rec, r, "refused upgrade")
		return
	}
	clean, err := CleanPath(r.URL.Path)
	if err != nil {
		u.refuse(rec, r, "refused path")
		return
	}
	rec.in = withPath(r, clean)
	if u.opt.OnFirstByte != nil && (u.opt.Measures == nil || u.opt.Measures(rec.in)) {
		rec.trace = &siteTrace{}
		rec.in = rec.trace.follow(rec.in)
	}
	// An upgraded connection lives until either side closes it or r's
	// context ends: ReverseProxy then closes the upstream's side, and the
	// client's once it returns. That is how a caller ends a socket whose
	// session is over.
	u.rp.ServeHTTP(rec, rec.in)
}

// refuse answers 400 to a request that must not reach the upstream.
func (u *Upstream) refuse(w http.ResponseWriter, r *http.Request, msg string) {
	if ce := u.log.Check(zap.DebugLevel, msg); ce != nil {
		ce.Write(zap.Int(fieldStatus, http.StatusBadRequest))
	}
	u.writeError(w, r, http.StatusBadRequest)
}

// withPath returns r with its URL path set to clean and no raw spelling left,
// copying the request only when something changes. RawPath must go: the
// outbound URL would otherwise be written with the client's escapes.
func withPath(r *http.Request, clean string) *http.Request {
	if r.URL.Path == clean && r.URL.RawPath == "" && r.URL.Opaque == "" {
		return r
	}
	r2 := r.WithContext(r.Context()) // a shallow copy; r stays the caller's
	u := *r.URL
	u.Path, u.RawPath, u.Opaque = clean, "", ""
	r2.URL = &u
	return r2
}

// rewrite builds the outbound request. ReverseProxy has already removed the
// hop-by-hop headers (re-adding Connection and Upgrade for an upgrade) and
// the inbound Forwarded and X-Forwarded-For, -Host and -Proto headers.
func (u *Upstream) rewrite(pr *httputil.ProxyRequest) {
	out := pr.Out
	out.URL.RawPath, out.URL.Opaque = "", ""
	trusted := inPrefixes(u.trusted, pr.In.RemoteAddr)
	dropForwarded(out.Header, trusted)
	if trusted {
		copyForwarded(out.Header, pr.In.Header)
	}
	pr.SetURL(u.target)
	pr.SetXForwarded()
	if trusted {
		keepForwardedOrigin(out.Header, pr.In.Header)
	}
	// The gate vouches for a visitor through the inbound request's canonical
	// headers (clients' own are removed before it runs). Set them on Out
	// only now: a "Connection: Waitroom-Visitor" from the client would have
	// had ReverseProxy delete them as hop-by-hop.
	id, room := pr.In.Header.Get(VisitorHeader), pr.In.Header.Get(RoomHeader)
	dropReserved(out.Header, u.reserved)
	if id != "" && room != "" {
		out.Header.Set(VisitorHeader, id)
		out.Header.Set(RoomHeader, room)
		if u.opt.Pass != nil {
			if p := u.opt.Pass(pr.In, out.URL.EscapedPath()); p != "" {
				out.Header.Set(PassHeader, p)
			}
		}
	}
	if u.opt.OwnCookie != nil {
		stripCookies(out.Header, u.opt.OwnCookie)
	}
}
