package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// No Traefik or Envoy runs in CI: `go install
// github.com/traefik/traefik/v3/cmd/traefik@latest` (v3.7.13) is refused
// by the go command in 5 s, as Traefik's go.mod has replace directives
// (building it needs a clone of its repository and its web UI), and Envoy
// is a C++ binary Debian does not ship. So each is played by a stand-in written from the proxy's own
// source or documentation, configured by the shipped file
// (docs/integrations/traefik/dynamic.yml, docs/integrations/envoy/envoy.yaml),
// in front of a real gateway and a real site, and a full room must hold
// every newcomer, whatever forwarding headers the client sends.

// traefikForwardAuth follows Traefik v3's pkg/middlewares/auth/forward.go
// (ServeHTTP and writeHeader) for the settings the shipped file uses:
// address, trustForwardHeader, authResponseHeaders,
// addAuthCookiesToResponse. The entry point is taken to trust its peer
// (forwardedHeaders.trustedIPs, Traefik behind a load balancer), the
// case where a client's own X-Forwarded-* headers reach the middleware.
type traefikForwardAuth struct {
	address             string
	trustForwardHeader  bool
	authResponseHeaders []string
	authCookies         map[string]bool
	next                func(rw http.ResponseWriter, req *http.Request, modify func(*http.Response) error)
}

// hopHeaders are the hop-by-hop headers Traefik removes (forward.go's
// hopHeaders).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailers", "Transfer-Encoding", "Upgrade"}

func (fa *traefikForwardAuth) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	forwardReq, err := http.NewRequestWithContext(req.Context(), http.MethodGet, fa.address, nil)
	if err != nil {
		rw.WriteHeader(http.StatusInternalServerError)
		return
	}
	fa.writeHeader(req, forwardReq)
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	forwardResponse, err := client.Do(forwardReq)
	if err != nil {
		rw.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer forwardResponse.Body.Close()
	body, err := io.ReadAll(forwardResponse.Body)
	if err != nil {
		rw.WriteHeader(http.StatusInternalServerError)
		return
	}
	// "Pass the forward response's body and selected headers if it didn't
	// return a response within the range of [200, 300)."
	if forwardResponse.StatusCode < http.StatusOK || forwardResponse.StatusCode >= http.StatusMultipleChoices {
		for k, v := range forwardResponse.Header {
			rw.Header()[k] = append([]string(nil), v...)
		}
		for _, h := range hopHeaders {
			rw.Header().Del(h)
		}
		if loc, err := forwardResponse.Location(); err == nil && loc.String() != "" {
			rw.Header().Set("Location", loc.String())
		}
		rw.WriteHeader(forwardResponse.StatusCode)
		_, _ = rw.Write(body)
		return
	}
	for _, name := range fa.authResponseHeaders {
		key := http.CanonicalHeaderKey(name)
		req.Header.Del(key)
		if len(forwardResponse.Header[key]) > 0 {
			req.Header[key] = append([]string(nil), forwardResponse.Header[key]...)
		}
	}
	req.RequestURI = req.URL.RequestURI()
	authCookies := forwardResponse.Cookies()
	if len(authCookies) == 0 {
		fa.next(rw, req, nil)
		return
	}
	// buildModifier: the site's own cookies of the listed names give way
	// to the auth server's.
	fa.next(rw, req, func(res *http.Response) error {
		cookies := res.Cookies()
		res.Header.Del("Set-Cookie")
		for _, c := range cookies {
			if !fa.authCookies[c.Name] {
				res.Header.Add("Set-Cookie", c.String())
			}
		}
		for _, c := range authCookies {
			if fa.authCookies[c.Name] {
				res.Header.Add("Set-Cookie", c.String())
			}
		}
		return nil
	})
}

// writeHeader is forward.go's writeHeader with trustForwardHeader set and
// no authRequestHeaders (the shipped file lists none: every header goes).
func (fa *traefikForwardAuth) writeHeader(req, forwardReq *http.Request) {
	for k, v := range req.Header {
		forwardReq.Header[k] = append([]string(nil), v...)
	}
	for _, h := range hopHeaders {
		forwardReq.Header.Del(h)
	}
	if !fa.trustForwardHeader {
		// forwardedheaders.DeleteXForwardedHeaders: every X-Forwarded-*
		// header Traefik manages, and X-Real-Ip.
		for k := range forwardReq.Header {
			if strings.HasPrefix(k, "X-Forwarded-") || k == "X-Real-Ip" {
				delete(forwardReq.Header, k)
			}
		}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		forwardReq.Header.Set("User-Agent", "")
	}
	if clientIP, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		if prior, ok := forwardReq.Header["X-Forwarded-For"]; ok {
			clientIP = strings.Join(prior, ", ") + ", " + clientIP
		}
		forwardReq.Header.Set("X-Forwarded-For", clientIP)
	}
	setIfAbsent := func(k, v string) {
		if _, ok := forwardReq.Header[k]; !ok {
			forwardReq.Header.Set(k, v)
		}
	}
	setIfAbsent("X-Forwarded-Method", req.Method)
	setIfAbsent("X-Forwarded-Proto", "http")
	setIfAbsent("X-Forwarded-Host", req.Host)
	setIfAbsent("X-Forwarded-Uri", req.URL.RequestURI())
}

// services maps the shipped files' service addresses (http://waitroom:8080,
// site:3000) to this test's.
type services struct{ waitroom, site string }

func (s services) rewrite(u string) string {
	u = strings.Replace(u, "http://waitroom:8080", s.waitroom, 1)
	return strings.Replace(u, "http://site:3000", s.site, 1)
}

// proxyTo serves req from target, with modify applied to its answer.
func proxyTo(target string) func(rw http.ResponseWriter, req *http.Request, modify func(*http.Response) error) {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	return func(rw http.ResponseWriter, req *http.Request, modify func(*http.Response) error) {
		p := httputil.NewSingleHostReverseProxy(u)
		p.ModifyResponse = modify
		p.ServeHTTP(rw, req)
	}
}

var pathPrefixRule = regexp.MustCompile("^PathPrefix\\(`([^`]*)`\\)(?: && !PathPrefix\\(`([^`]*)`\\))?$")

// newTraefik builds the stand-in from the shipped dynamic.yml: its routers
// (PathPrefix rules, the longer rule first, as Traefik's default priority
// is the rule's length), their middlewares and services.
func newTraefik(t *testing.T, svc services) http.Handler {
	t.Helper()
	cfg := readYAML(t, "docs", "integrations", "traefik", "dynamic.yml")
	fa := at(cfg, "http", "middlewares", "waitroom", "forwardAuth")
	trust, ok := at(fa, "trustForwardHeader").(bool)
	if !ok {
		t.Fatal("traefik: trustForwardHeader is not set (Traefik then keeps some X-Forwarded headers and warns)")
	}
	mw := &traefikForwardAuth{address: svc.rewrite(fmt.Sprint(at(fa, "address"))), trustForwardHeader: trust, authCookies: map[string]bool{}}
	for _, h := range list(at(fa, "authResponseHeaders")) {
		mw.authResponseHeaders = append(mw.authResponseHeaders, fmt.Sprint(h))
	}
	for _, c := range list(at(fa, "addAuthCookiesToResponse")) {
		mw.authCookies[fmt.Sprint(c)] = true
	}
	if at(fa, "authRequestHeaders") != nil || at(fa, "forwardBody") != nil || at(fa, "preserveRequestMethod") != nil {
		t.Fatal("traefik: the stand-in follows forward.go for the settings the shipped file had; it has more now")
	}
	type router struct {
		prefix, not string
		handler     http.Handler
	}
	var routers []router
	routersCfg, _ := at(cfg, "http", "routers").(map[string]any)
	for name, r := range routersCfg {
		m := pathPrefixRule.FindStringSubmatch(fmt.Sprint(at(r, "rule")))
		if m == nil {
			t.Fatalf("traefik: router %s: the stand-in reads PathPrefix rules (and one && !PathPrefix) only, got %v", name, at(r, "rule"))
		}
		service := fmt.Sprint(at(r, "service"))
		servers := list(at(cfg, "http", "services", service, "loadBalancer", "servers"))
		if len(servers) != 1 {
			t.Fatalf("traefik: service %s: %v", service, servers)
		}
		next := proxyTo(svc.rewrite(fmt.Sprint(at(servers[0], "url"))))
		var h http.Handler = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) { next(rw, req, nil) })
		mws := list(at(r, "middlewares"))
		for i := len(mws) - 1; i >= 0; i-- { // the first listed is the outermost
			mwName := fmt.Sprint(mws[i])
			switch def := at(cfg, "http", "middlewares", mwName); {
			case at(def, "forwardAuth") != nil:
				if _, ok := h.(http.HandlerFunc); !ok {
					t.Fatalf("traefik: router %s: forwardAuth must come right before the service", name)
				}
				auth := *mw
				auth.next = next
				h = &auth
			case at(def, "headers") != nil:
				// The headers middleware: a customResponseHeaders entry
				// with an empty value removes that header from the answer.
				var hide []string
				for k, v := range at(def, "headers", "customResponseHeaders").(map[string]any) {
					if v != "" {
						t.Fatalf("traefik: middleware %s sets %s; the stand-in only removes", mwName, k)
					}
					hide = append(hide, k)
				}
				if len(hide) == 0 || len(def.(map[string]any)["headers"].(map[string]any)) != 1 {
					t.Fatalf("traefik: middleware %s: the stand-in reads customResponseHeaders only: %v", mwName, def)
				}
				inner := h
				h = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
					inner.ServeHTTP(&hidingWriter{ResponseWriter: rw, hide: hide}, req)
				})
			default:
				t.Fatalf("traefik: router %s: middleware %s is not one the stand-in follows: %v", name, mwName, def)
			}
		}
		routers = append(routers, router{m[1], m[2], h})
	}
	// Traefik's default priority is the rule's length: the longer first.
	sort.Slice(routers, func(i, j int) bool {
		return len(routers[i].prefix)+len(routers[i].not) > len(routers[j].prefix)+len(routers[j].not)
	})
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		for _, r := range routers {
			if strings.HasPrefix(req.URL.Path, r.prefix) && (r.not == "" || !strings.HasPrefix(req.URL.Path, r.not)) {
				r.handler.ServeHTTP(rw, req)
				return
			}
		}
		http.NotFound(rw, req)
	})
}

// hidingWriter removes headers from an answer as it is written, as
// Traefik's headers middleware does for an empty customResponseHeaders
// value.
type hidingWriter struct {
	http.ResponseWriter
	hide  []string
	wrote bool
}

func (w *hidingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		for _, h := range w.hide {
			w.Header().Del(h)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *hidingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// envoyExtAuthz follows Envoy's ext_authz HTTP service as documented
// (envoy.extensions.filters.http.ext_authz.v3): the check request has the
// original method, path_prefix before the original path, no body, and of
// the original headers only Host, Method, Path, Content-Length,
// Authorization and those allowed_headers matches, then headers_to_add
// set; a 200 allows the request, copying allowed_upstream_headers to it
// and allowed_client_headers_on_success to the answer; any other status
// goes to the client with the check's body and headers.
type envoyExtAuthz struct {
	server, pathPrefix             string
	allowed                        map[string]bool // lower case
	headersToAdd                   [][2]string
	upstreamHeaders, clientHeaders map[string]bool
}

func (e *envoyExtAuthz) check(rw http.ResponseWriter, req *http.Request, next func(http.ResponseWriter, *http.Request, func(*http.Response) error)) {
	checkReq, err := http.NewRequestWithContext(req.Context(), req.Method, e.server+e.pathPrefix+req.URL.RequestURI(), nil)
	if err != nil {
		rw.WriteHeader(http.StatusForbidden)
		return
	}
	checkReq.Host = req.Host
	for k, v := range req.Header {
		if e.allowed[strings.ToLower(k)] || k == "Authorization" {
			checkReq.Header[k] = append([]string(nil), v...)
		}
	}
	for _, h := range e.headersToAdd {
		v := strings.NewReplacer("%REQ(:PATH)%", req.URL.RequestURI(), "%REQ(:METHOD)%", req.Method, "%REQ(:AUTHORITY)%", req.Host).Replace(h[1])
		checkReq.Header.Set(h[0], v)
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(checkReq)
	if err != nil {
		rw.WriteHeader(http.StatusForbidden) // failure_mode_allow is false
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		for k, v := range res.Header {
			rw.Header()[k] = v
		}
		rw.WriteHeader(res.StatusCode)
		_, _ = rw.Write(body)
		return
	}
	// x-envoy-auth-headers-to-remove: the headers the OK answer names are
	// removed from the request to the site (pseudo headers and Host
	// excepted).
	for _, h := range strings.Split(res.Header.Get("X-Envoy-Auth-Headers-To-Remove"), ",") {
		if h = strings.TrimSpace(h); h != "" && !strings.HasPrefix(h, ":") && !strings.EqualFold(h, "host") {
			req.Header.Del(h)
		}
	}
	for k, v := range res.Header {
		if e.upstreamHeaders[strings.ToLower(k)] {
			req.Header[k] = v
		}
	}
	next(rw, req, func(up *http.Response) error {
		for k, v := range res.Header {
			if e.clientHeaders[strings.ToLower(k)] {
				up.Header[k] = append(up.Header[k], v...)
			}
		}
		return nil
	})
}

// exacts reads a list of { exact: name } string matchers.
func exacts(t *testing.T, v any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range list(v) {
		m, _ := p.(map[string]any)
		if len(m) != 1 || m["exact"] == nil {
			t.Fatalf("envoy: the stand-in reads { exact: name } matchers only, got %v", p)
		}
		out[strings.ToLower(fmt.Sprint(m["exact"]))] = true
	}
	return out
}

// newEnvoy builds the stand-in from the shipped envoy.yaml: the listener's
// routes by prefix, in order, ext_authz on each unless disabled for it,
// and use_remote_address appending the peer to X-Forwarded-For.
func newEnvoy(t *testing.T, svc services) http.Handler {
	t.Helper()
	cfg := readYAML(t, "docs", "integrations", "envoy", "envoy.yaml")
	hcm := at(list(at(list(at(list(at(cfg, "static_resources", "listeners"))[0], "filter_chains"))[0], "filters"))[0], "typed_config")
	var authz any
	for _, f := range list(at(hcm, "http_filters")) {
		if at(f, "name") == "envoy.filters.http.ext_authz" {
			authz = at(f, "typed_config")
		}
	}
	hs := at(authz, "http_service")
	e := &envoyExtAuthz{
		server: svc.rewrite(fmt.Sprint(at(hs, "server_uri", "uri"))), pathPrefix: fmt.Sprint(at(hs, "path_prefix")),
		allowed:         exacts(t, at(authz, "allowed_headers", "patterns")),
		upstreamHeaders: exacts(t, at(hs, "authorization_response", "allowed_upstream_headers", "patterns")),
		clientHeaders:   exacts(t, at(hs, "authorization_response", "allowed_client_headers_on_success", "patterns")),
	}
	for _, h := range list(at(hs, "authorization_request", "headers_to_add")) {
		e.headersToAdd = append(e.headersToAdd, [2]string{fmt.Sprint(at(h, "key")), fmt.Sprint(at(h, "value"))})
	}
	clusters := map[string]string{"waitroom": svc.waitroom, "site": svc.site}
	type route struct {
		prefix   string
		next     func(http.ResponseWriter, *http.Request, func(*http.Response) error)
		disabled bool
		add      [][2]string
	}
	var routes []route
	for _, r := range list(at(list(at(hcm, "route_config", "virtual_hosts"))[0], "routes")) {
		var next func(http.ResponseWriter, *http.Request, func(*http.Response) error)
		if st, ok := at(r, "direct_response", "status").(int); ok {
			next = func(rw http.ResponseWriter, _ *http.Request, _ func(*http.Response) error) { rw.WriteHeader(st) }
		} else {
			target, ok := clusters[fmt.Sprint(at(r, "route", "cluster"))]
			if !ok {
				t.Fatalf("envoy: a route to cluster %v", at(r, "route", "cluster"))
			}
			next = proxyTo(target)
		}
		rt := route{prefix: fmt.Sprint(at(r, "match", "prefix")), next: next,
			disabled: at(r, "typed_per_filter_config", "envoy.filters.http.ext_authz", "disabled") == true}
		if hide := list(at(r, "response_headers_to_remove")); len(hide) > 0 {
			// The route's response_headers_to_remove: gone from the site's
			// answer before any filter adds to it.
			inner := rt.next
			rt.next = func(rw http.ResponseWriter, req *http.Request, modify func(*http.Response) error) {
				inner(rw, req, func(res *http.Response) error {
					for _, h := range hide {
						res.Header.Del(fmt.Sprint(h))
					}
					if modify != nil {
						return modify(res)
					}
					return nil
				})
			}
		}
		for _, h := range list(at(r, "request_headers_to_add")) {
			rt.add = append(rt.add, [2]string{fmt.Sprint(at(h, "header", "key")), fmt.Sprint(at(h, "header", "value"))})
		}
		routes = append(routes, rt)
	}
	remote := at(hcm, "use_remote_address") == true
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil && remote {
			if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
				host = prior + ", " + host
			}
			req.Header.Set("X-Forwarded-For", host)
		}
		for _, rt := range routes {
			if !strings.HasPrefix(req.URL.Path, rt.prefix) {
				continue
			}
			for _, h := range rt.add {
				req.Header.Add(h[0], strings.ReplaceAll(h[1], "%REQ(:PATH)%", req.URL.RequestURI()))
			}
			if rt.disabled {
				rt.next(rw, req, nil)
				return
			}
			e.check(rw, req, rt.next)
			return
		}
		http.NotFound(rw, req)
	})
}

// forgedForwarding are the headers a client may send to choose what the
// check judges: a path without a room, another host, another method.
var forgedForwarding = [][]string{
	{"X-Forwarded-Uri", "/about"},
	{"X-Forwarded-Uri", "/static/a.css", "X-Forwarded-Method", "OPTIONS"},
	{"X-Forwarded-Host", "other.example", "X-Forwarded-Uri", "/about"},
	{"X-Forwarded-Prefix", "/about", "X-Forwarded-Uri", "/about", "X-Forwarded-Method", "GET", "X-Forwarded-Host", "shop.example"},
	{"Waitroom-Visitor", "forged", "Waitroom-Room", "festival"},
}

// A full room holds every newcomer at the site through Traefik's
// forwardAuth and Envoy's ext_authz as the shipped files configure them:
// of 20 newcomers (10 of them with forged forwarding headers) none reaches
// the site, each gets the waiting answer (429, not 2xx); the visitor inside
// reaches it, the site hearing who they are, forged headers or not.
func TestStandIns_FullRoomHoldsEveryNewcomer(t *testing.T) {
	for _, proxy := range []string{"traefik", "envoy"} {
		t.Run(proxy, func(t *testing.T) {
			up, site := newUpstream(t)
			// The other helper's rule: the auth endpoint answers peers in
			// server.trusted_proxies; the stand-in calls from loopback.
			cfg := gwConfig(site.URL, "    max_active: 1\n    tick: 50ms") + "server: { trusted_proxies: [127.0.0.1/32] }\n"
			_, base := startGateway(t, cfg)
			svc := services{waitroom: base, site: site.URL}
			var h http.Handler
			if proxy == "traefik" {
				h = newTraefik(t, svc)
			} else {
				h = newEnvoy(t, svc)
			}
			front := newHTTPServer(t, h)
			checkStandInHolds(t, up, front)
		})
	}
}

func checkStandInHolds(t *testing.T, up *upstreamLog, front string) {
	in := newVisitor(t, front)
	if r := in.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("the first visitor of an empty room: %d %.300s", r.status, r.body)
	}
	who := up.since(0)
	if len(who) != 1 {
		t.Fatalf("the site heard visitors %v for the first visitor", who)
	}
	if r := in.get("/events/2"); r.body != "site:/events/2" {
		t.Fatalf("the visitor inside, again (their ticket came back to them): %d %.300s", r.status, r.body)
	}
	before := up.count()
	held := 0
	const newcomers = 20
	for i := range newcomers {
		v := newVisitor(t, front)
		var hdr []string
		if i%2 == 1 {
			hdr = forgedForwarding[(i/2)%len(forgedForwarding)]
		}
		r := v.do(http.MethodGet, fmt.Sprintf("/events/%d", i), append([]string{"Accept", "application/json"}, hdr...)...)
		if r.status/100 == 2 || strings.HasPrefix(r.body, "site:") {
			t.Errorf("newcomer %d (headers %v) was let through: %d %.200s", i, hdr, r.status, r.body)
			continue
		}
		if r.status == http.StatusTooManyRequests && r.state() == "waiting" {
			held++
		} else {
			t.Errorf("newcomer %d (headers %v): want the waiting answer at 429, got %d %.200s", i, hdr, r.status, r.body)
		}
	}
	if n := up.count() - before; n != 0 {
		t.Errorf("%d of %d newcomers' requests reached the site of a full room", n, newcomers)
	}
	t.Logf("%d of %d newcomers held at the waiting answer; %d reached the site", held, newcomers, up.count()-before)
	if r := newVisitor(t, front).do(http.MethodPost, "/events/buy", "X-Forwarded-Uri", "/about", "X-Forwarded-Method", "GET"); r.status/100 == 2 {
		t.Errorf("a newcomer's POST with a forged X-Forwarded-Uri: %d", r.status)
	}
	// The visitor inside, with forged headers: still in, still themselves.
	for _, hdr := range forgedForwarding {
		if r := in.do(http.MethodGet, "/events/3", hdr...); r.body != "site:/events/3" {
			t.Errorf("the visitor inside with %v: %d %.200s", hdr, r.status, r.body)
		}
	}
	if who := up.since(0); len(who) != 1 || who["forged"] {
		t.Errorf("the site heard visitors %v", who)
	}
	// A path without a room passes; waitroom's own paths are served by
	// waitroom, not judged.
	if r := newVisitor(t, front).get("/about"); r.body != "site:/about" {
		t.Errorf("a page without a room: %d %.200s", r.status, r.body)
	}
	if r := newVisitor(t, front).getJSON("/.waitroom/status?room=concert"); r.status != 200 || bytes.Contains([]byte(r.body), []byte("site:")) {
		t.Errorf("the waiting page's poll: %d %.200s", r.status, r.body)
	}
}

// The site hears Waitroom-* headers from waitroom only, and the pass it is
// given never travels back: through both stand-ins, a client's own
// Waitroom-Visitor, -Room and -Pass never reach the site (a route without
// a room, a bypass, a room's route), and a site that echoes Waitroom-Pass
// in its answer has it removed before the client.
func TestStandIns_SiteHeadersHeld(t *testing.T) {
	for _, proxy := range []string{"traefik", "envoy"} {
		t.Run(proxy, func(t *testing.T) {
			var mu sync.Mutex
			heard := map[string][]string{} // path -> the Waitroom-* headers the site got
			site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var got []string
				for _, h := range []string{"Waitroom-Visitor", "Waitroom-Room", "Waitroom-Pass"} {
					if v := r.Header.Get(h); v != "" {
						got = append(got, h+"="+v)
					}
				}
				mu.Lock()
				heard[r.URL.Path] = got
				mu.Unlock()
				w.Header().Set("Waitroom-Pass", "echoed-by-the-site")
				fmt.Fprintf(w, "site:%s", r.URL.Path)
			}))
			t.Cleanup(site.Close)
			cfg := gwConfig(site.URL, "    max_active: 5") + "server: { trusted_proxies: [127.0.0.1/32] }\n"
			_, base := startGateway(t, cfg)
			svc := services{waitroom: base, site: site.URL}
			var h http.Handler
			if proxy == "traefik" {
				h = newTraefik(t, svc)
			} else {
				h = newEnvoy(t, svc)
			}
			front := newHTTPServer(t, h)
			v := newVisitor(t, front)
			forged := []string{"Waitroom-Visitor", "forged", "Waitroom-Room", "festival", "Waitroom-Pass", "forged-pass"}
			for _, path := range []string{"/about", "/static/a.css", "/events/1"} {
				r := v.do(http.MethodGet, path, forged...)
				if r.body != "site:"+path {
					t.Fatalf("%s: %d %.200s", path, r.status, r.body)
				}
				if p := r.header.Get("Waitroom-Pass"); p != "" {
					t.Errorf("%s: the site's Waitroom-Pass reached the client (%q)", path, p)
				}
				mu.Lock()
				got := heard[path]
				mu.Unlock()
				for _, g := range got {
					if strings.Contains(g, "forged") || g == "Waitroom-Room=festival" {
						t.Errorf("%s: the site heard the client's own %s", path, g)
					}
				}
				if path == "/events/1" && len(got) < 2 {
					t.Errorf("%s: the admitted visitor's request came without waitroom's headers: %v", path, got)
				}
				t.Logf("%s: the site heard %v", path, got)
			}
		})
	}
}
