package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const releaseToken = "site-release-token-0123456789abcdef"

// withReleaseTokenFile gives cfg an admin.release_token_file holding
// token; the file's path.
func withReleaseTokenFile(t *testing.T, cfg, token string) (string, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "release-token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(cfg, fmt.Sprintf("token: %q }", adminToken), fmt.Sprintf("token: %q, release_token_file: %q }", adminToken, file), 1)
	if out == cfg {
		t.Fatal("no admin section to add release_token_file to")
	}
	return out, file
}

// The site's release token ends a session through POST
// /admin/api/rooms/{room}/release and does nothing else: it cannot read,
// pause, admit, create, delete or reload, nor reach the release by another
// spelling of its path; the admin token still does everything. A new token
// in the file is in service after a reload and the old one stops.
func TestRelease_ScopedToken(t *testing.T) {
	site, url := newPassSite(t)
	cfg, file := withReleaseTokenFile(t, gwConfig(url, "    max_active: 5"), releaseToken)
	app, base, path, _ := fileGateway(t, cfg, false)
	v := newVisitor(t, base)
	if r := v.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("admitted request: %d %q", r.status, r.body)
	}
	_, visitor := site.last()
	rel := newAdmin(t, app)
	rel.token = releaseToken
	body := fmt.Sprintf(`{"visitor":%q}`, visitor)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/admin/api/rooms", ""},
		{"GET", "/admin/api/rooms/concert", ""},
		{"PATCH", "/admin/api/rooms/concert", `{"mode":"paused"}`},
		{"PATCH", "/admin/api/rooms/concert", `{"max_active":0}`},
		{"POST", "/admin/api/rooms/concert/admit", `{"count":5}`},
		{"POST", "/admin/api/rooms", `{"name":"evil","max_active":1,"routes":[{"path":"/evil/","upstream":"site"}]}`},
		{"PUT", "/admin/api/rooms/concert", `{"max_active":1}`},
		{"DELETE", "/admin/api/rooms/concert", ""},
		{"DELETE", "/admin/api/rooms/concert/overrides", ""},
		{"POST", "/admin/api/reload", ""},
		{"GET", "/metrics", ""},
		{"GET", "/admin/api/jwks", ""},
		{"GET", "/admin/api/rooms/concert/release", body},
		{"POST", "/admin/api/rooms/concert/x/release", body},
		{"POST", "/admin/api/rooms/../rooms/concert/release/x", body},
		{"POST", "/admin/api/rooms/concert/release/", body},
	} {
		if code, _, _ := rel.do(c.method, c.path, c.body); code != http.StatusUnauthorized {
			t.Errorf("the release token, %s %s: %d, want 401", c.method, c.path, code)
		}
	}
	if code, v, _ := newAdmin(t, app).do("GET", "/admin/api/rooms/concert", ""); code != 200 || v["mode"] == "paused" {
		t.Fatalf("the room after the release token's tries: %d %v", code, v)
	}
	if code, _, b := rel.do("POST", "/admin/api/rooms/concert/release", body); code != 200 {
		t.Fatalf("the release token releasing: %d %s", code, b)
	}
	if code, _, _ := rel.do("POST", "/admin/api/rooms/concert/release", body); code != http.StatusNotFound {
		t.Fatalf("releasing again: %d, want 404", code)
	}

	// A new token in the file, a reload: the new one releases, the old not.
	const next = "site-release-token-rotated-0123456789"
	if err := os.WriteFile(file, []byte(next+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, cfg)
	if err := app.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := rel.do("POST", "/admin/api/rooms/concert/release", body); code != http.StatusUnauthorized {
		t.Fatalf("the old release token after a rotation: %d, want 401", code)
	}
	rel.token = next
	if code, _, _ := rel.do("POST", "/admin/api/rooms/concert/release", body); code != http.StatusNotFound {
		t.Fatalf("the new release token: %d, want 404 (nobody to release)", code)
	}
}

// admin.release_token is refused when it would scope nothing: short, the
// admin token itself, or with no admin token (the API open).
func TestRelease_TokenChecked(t *testing.T) {
	base := gwConfig("http://127.0.0.1:1", "    max_active: 5")
	for _, c := range []struct{ name, from, to, want string }{
		{"short", fmt.Sprintf("token: %q }", adminToken), fmt.Sprintf("token: %q, release_token: short }", adminToken), "admin.release_token: must be at least 16"},
		{"the admin token", fmt.Sprintf("token: %q }", adminToken), fmt.Sprintf("token: %q, release_token: %q }", adminToken, adminToken), "admin.release_token: must differ from admin.token"},
		{"no admin token", fmt.Sprintf("token: %q }", adminToken), fmt.Sprintf("release_token: %q }", releaseToken), "admin.release_token: needs admin.token"},
		{"both", fmt.Sprintf("token: %q }", adminToken), fmt.Sprintf("token: %q, release_token: %q, release_token_file: /nonexistent }", adminToken, releaseToken), "admin.release_token_file: give the secret or its file, not both"},
	} {
		cfg := strings.Replace(base, c.from, c.to, 1)
		path := filepath.Join(t.TempDir(), "waitroom.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadConfig(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The site releases a visitor with the pass it was given, no admin token:
// POST /.waitroom/release?room= ends that visitor's session and no other
// (the next in line gets the slot), once; a pass for another room, a
// forged or missing pass, and GET are refused.
func TestRelease_WithPass(t *testing.T) {
	site, url := newPassSite(t)
	key := filepath.Join(t.TempDir(), "pass.pem")
	writeEd25519(t, key)
	app, base := startGateway(t, gwConfig(url, "    max_active: 2\n    tick: 50ms\n    page: { refresh: 1s }")+fmt.Sprintf("pass: { key_files: [%q] }\n", key))
	a, b := newVisitor(t, base), newVisitor(t, base)
	a.get("/events/1")
	passA, visitorA := site.last()
	b.get("/events/1")
	_, visitorB := site.last()
	if passA == "" || visitorA == "" || visitorB == "" || visitorA == visitorB {
		t.Fatal("two visitors inside with passes wanted")
	}
	c := newVisitor(t, base)
	if r := c.getJSON("/events/1"); r.state() != "waiting" {
		t.Fatalf("a third visitor: %v", r.json)
	}
	release := func(method, room string, passes ...string) reply {
		s := newVisitor(t, base) // the site's own client: no cookie
		hdr := []string{}
		for _, p := range passes {
			hdr = append(hdr, "Waitroom-Pass", p)
		}
		return s.do(method, "/.waitroom/release?room="+room, hdr...)
	}
	forged := strings.Split(passA, ".")
	for _, tc := range []struct {
		name   string
		r      reply
		status int
		reason string
	}{
		{"GET", release("GET", "concert", passA), http.StatusMethodNotAllowed, ""},
		{"no pass", release("POST", "concert"), http.StatusBadRequest, ""},
		{"another room", release("POST", "festival", passA), http.StatusForbidden, "room"},
		{"forged", release("POST", "concert", forged[0]+"."+forged[1]+"."+flip(forged[2])), http.StatusForbidden, "signature"},
		{"garbage", release("POST", "concert", "x.y.z"), http.StatusForbidden, "malformed"},
	} {
		if tc.r.status != tc.status || (tc.reason != "" && tc.r.json["reason"] != tc.reason) {
			t.Errorf("%s: %d %v, want %d %q", tc.name, tc.r.status, tc.r.json, tc.status, tc.reason)
		}
		if strings.Contains(tc.r.body, passA) {
			t.Errorf("%s: the answer quotes the pass", tc.name)
		}
	}
	if r := release("POST", "concert", passA); r.status != 200 || r.json["released"] != true {
		t.Fatalf("release with A's pass: %d %v", r.status, r.json)
	}
	if r := release("POST", "concert", passA); r.status != http.StatusNotFound {
		t.Fatalf("release with A's pass again: %d %v", r.status, r.json)
	}
	// B is still inside, as B; the slot A freed goes to C.
	b.get("/events/2")
	if _, who := site.last(); who != visitorB {
		t.Fatalf("B after A's release: the site saw %q", who)
	}
	c.waitAdmitted("concert", 30*time.Second)
	st, err := app.store.Stats(t.Context(), "concert")
	if err != nil || st.Released != 1 {
		t.Fatalf("stats after one release: %+v %v", st, err)
	}
	// A's cookie was never expired (the release's answer went to the
	// site), yet it admits nothing now: A queues behind B and C.
	before := len(site.passes)
	if r := a.getJSON("/events/3"); strings.HasPrefix(r.body, "site:") || r.state() != "waiting" {
		t.Fatalf("A after its release, with its old cookie: %d %.200s", r.status, r.body)
	}
	if len(site.passes) != before {
		t.Fatal("A's request after its release reached the site")
	}
}

// flip changes the first letter of a base64url segment.
func flip(seg string) string {
	if seg[0] == 'A' {
		return "B" + seg[1:]
	}
	return "A" + seg[1:]
}
