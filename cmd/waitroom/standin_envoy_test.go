package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

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
