package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func readYAML(t *testing.T, parts ...string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", filepath.Join(parts...), err)
	}
	return v
}

// The settings the Traefik and Envoy recipes' security rests on, read from
// the shipped files: each was a hole once (Traefik believing a client's
// X-Forwarded-Uri, Envoy passing no ticket to the check, Envoy passing on a
// client's own X-Forwarded-For). No Traefik or Envoy runs here; the answers
// the recipes rely on are TestAuth_ForwardAuthAnswers' and its neighbours'.
func TestDocs_IntegrationRecipes(t *testing.T) {
	traefik := readYAML(t, "docs", "integrations", "traefik", "dynamic.yml")
	fa := at(traefik, "http", "middlewares", "waitroom", "forwardAuth")
	if at(fa, "trustForwardHeader") != false {
		t.Errorf("traefik: trustForwardHeader is %v, want false", at(fa, "trustForwardHeader"))
	}
	cookies := fmt.Sprint(at(fa, "addAuthCookiesToResponse"))
	if cookies != "[__Host-waitroom_concert waitroom_concert]" {
		t.Errorf("traefik: the room cookie in both spellings, got %s", cookies)
	}

	// The auth endpoint is off the clients' routes, and its pass goes to
	// the site only.
	if rule := fmt.Sprint(at(traefik, "http", "routers", "waitroom-endpoints", "rule")); !strings.Contains(rule, "!PathPrefix(`/.waitroom/auth`)") {
		t.Errorf("traefik: the endpoints' router reaches the auth endpoint (rule %s)", rule)
	}
	if strings.Contains(strings.ToLower(cookies), "pass") {
		t.Errorf("traefik: the pass goes back to the client (%s)", cookies)
	}
	// A site that echoes the pass: a headers middleware on the site's
	// router removes it from the answer (nginx: proxy_hide_header).
	hides := false
	for _, mw := range list(at(traefik, "http", "routers", "site", "middlewares")) {
		if v, ok := at(traefik, "http", "middlewares", fmt.Sprint(mw), "headers", "customResponseHeaders", "Waitroom-Pass").(string); ok && v == "" {
			hides = true
		}
	}
	if !hides {
		t.Errorf("traefik: no middleware on the site's router removes Waitroom-Pass from its answers")
	}

	envoy := readYAML(t, "docs", "integrations", "envoy", "envoy.yaml")
	hcm := at(list(at(list(at(envoy, "static_resources", "listeners"))[0], "filter_chains"))[0], "filters")
	cfg := at(list(hcm)[0], "typed_config")
	if at(cfg, "use_remote_address") != true {
		t.Errorf("envoy: use_remote_address is %v, want true", at(cfg, "use_remote_address"))
	}
	var authz any
	for _, f := range list(at(cfg, "http_filters")) {
		if at(f, "name") == "envoy.filters.http.ext_authz" {
			authz = at(f, "typed_config")
		}
	}
	var allowed []string
	for _, p := range list(at(authz, "allowed_headers", "patterns")) {
		allowed = append(allowed, fmt.Sprint(at(p, "exact")))
	}
	for _, h := range []string{"cookie", "waitroom-token", "waitroom-challenge", "accept"} {
		if !slices.Contains(allowed, h) {
			t.Errorf("envoy: %s does not reach the check (allowed_headers %v)", h, allowed)
		}
	}
	var back []string
	for _, p := range list(at(authz, "http_service", "authorization_response", "allowed_client_headers_on_success", "patterns")) {
		back = append(back, fmt.Sprint(at(p, "exact")))
	}
	if !slices.Contains(back, "set-cookie") || !slices.Contains(back, "waitroom-token") {
		t.Errorf("envoy: the ticket does not come back to an admitted client (%v)", back)
	}
	if slices.Contains(back, "waitroom-pass") {
		t.Errorf("envoy: the pass goes back to the client (%v)", back)
	}
	routes := list(at(list(at(at(cfg, "route_config"), "virtual_hosts"))[0], "routes"))
	for _, r := range routes {
		if at(r, "route", "cluster") == "site" && !slices.Contains(list(at(r, "response_headers_to_remove")), any("waitroom-pass")) {
			t.Errorf("envoy: the site's route %v does not remove Waitroom-Pass from its answers", at(r, "match"))
		}
	}
	first := routes[0]
	if at(first, "match", "prefix") != "/.waitroom/auth" || at(first, "direct_response", "status") != 404 {
		t.Errorf("envoy: the first route does not keep /.waitroom/auth from clients: %v", first)
	}
}
