package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
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
