package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// adminClient talks to a gateway's admin listener.
type adminClient struct {
	t       testing.TB
	base    string
	token   string
	headers map[string]string
}

func newAdmin(t testing.TB, app *App) *adminClient {
	return &adminClient{t: t, base: "http://" + app.AdminAddr().String(), token: adminToken}
}

func (c *adminClient) do(method, path, body string) (int, map[string]any, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != "" || method == "PATCH" || method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, string(b)
}

func num(m map[string]any, key string) int {
	f, _ := m[key].(float64)
	return int(f)
}

func TestAdmin_EveryEndpointNeedsTheToken(t *testing.T) {
	_, srv := newUpstream(t)
	app, _ := startGateway(t, gwConfig(srv.URL, twoInside))
	endpoints := []struct{ method, path, body string }{
		{"GET", "/admin/api/rooms", ""},
		{"GET", "/admin/api/rooms/concert", ""},
		{"GET", "/admin/api/rooms/concert/history", ""},
		{"PATCH", "/admin/api/rooms/concert", `{"max_active":3}`},
		{"DELETE", "/admin/api/rooms/concert/overrides", ""},
		{"POST", "/admin/api/rooms/concert/admit", `{"count":1}`},
		{"POST", "/admin/api/rooms/concert/release", `{"visitor":"nobody-000000000000000"}`},
		{"GET", "/metrics", ""},
		{"POST", "/admin/api/rooms/concert/preview", `{"state":"closed"}`},
	}
	for _, token := range []string{"", "wrong-token-wrong-token"} {
		c := &adminClient{t: t, base: "http://" + app.AdminAddr().String(), token: token}
		for _, e := range endpoints {
			if code, _, body := c.do(e.method, e.path, e.body); code != http.StatusUnauthorized || strings.TrimSpace(body) != "unauthorized" {
				t.Errorf("%s %s with token %q: %d %q", e.method, e.path, token, code, body)
			}
		}
	}
	c := newAdmin(t, app)
	want := []int{200, 200, 200, 200, 200, 200, 404, 200, 200}
	for i, e := range endpoints {
		if code, _, body := c.do(e.method, e.path, e.body); code != want[i] {
			t.Errorf("%s %s with the token: %d, want %d: %s", e.method, e.path, code, want[i], body)
		}
	}
	open := &adminClient{t: t, base: c.base}
	for _, p := range []string{"/healthz", "/readyz", "/admin/"} {
		if code, _, _ := open.do("GET", p, ""); code != 200 {
			t.Errorf("GET %s without a token: %d", p, code)
		}
	}
}

func TestAdmin_BadRequestsNameTheField(t *testing.T) {
	_, srv := newUpstream(t)
	app, _ := startGateway(t, gwConfig(srv.URL, twoInside))
	c := newAdmin(t, app)
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"PATCH", "/admin/api/rooms/concert", `{"max_active":-1}`, 400, "max_active"},
		{"PATCH", "/admin/api/rooms/concert", `{"max_active":"lots"}`, 400, "max_active"},
		{"PATCH", "/admin/api/rooms/concert", `{"admit_rate":"fast"}`, 400, "admit_rate"},
		{"PATCH", "/admin/api/rooms/concert", `{"mode":"sideways"}`, 400, "mode"},
		{"PATCH", "/admin/api/rooms/concert", `{"max_activ":3}`, 400, "max_activ"},
		{"PATCH", "/admin/api/rooms/concert", `{`, 400, "JSON"},
		{"PATCH", "/admin/api/rooms/concert", ``, 400, "empty"},
		{"PATCH", "/admin/api/rooms/concert", `{}`, 400, "nothing to change"},
		{"PATCH", "/admin/api/rooms/nope", `{"max_active":3}`, 404, "nope"},
		{"POST", "/admin/api/rooms/concert/admit", `{"count":0}`, 400, "count"},
		{"POST", "/admin/api/rooms/concert/admit", `{"count":1e9}`, 400, "count"},
		{"POST", "/admin/api/rooms/concert/release", `{}`, 400, "visitor"},
		{"GET", "/admin/api/rooms/nope", ``, 404, "nope"},
	}
	for _, tc := range cases {
		code, m, body := c.do(tc.method, tc.path, tc.body)
		msg, _ := m["error"].(string)
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s %s: %d %s, want %d naming %q", tc.method, tc.path, tc.body, code, body, tc.code, tc.want)
		}
	}
}

func TestAdmin_PauseResumeAdmitAndRelease(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 3\n    admit_rate: 1/h\n    tick: 50ms"))
	c := newAdmin(t, app)
	first := newVisitor(t, base)
	if r := first.get("/events/1"); r.body != "site:/events/1" {
		t.Fatalf("the first visitor goes in on the only token: %d", r.status)
	}
	var line []*visitor
	for range 5 {
		v := newVisitor(t, base)
		v.getJSON("/events/1")
		v.getJSON("/events/1") // back with its ticket: its place
		line = append(line, v)
	}
	// Admit N lets in what max_active allows, bucket or not.
	code, m, body := c.do("POST", "/admin/api/rooms/concert/admit", `{"count":10}`)
	if code != 200 || num(m, "admitted") != 2 {
		t.Fatalf("admit 10 with 2 free slots: %d %s", code, body)
	}
	for i, v := range line {
		want := "waiting"
		if i < 2 {
			want = "admitted"
		}
		if s := v.getJSON("/.waitroom/status?room=concert").state(); s != want {
			t.Fatalf("visitor %d after admit: %s, want %s", i, s, want)
		}
	}
	// Paused: the page says so, and a release does not let the next in.
	if code, m, body := c.do("PATCH", "/admin/api/rooms/concert", `{"mode":"paused","admit_rate":"unlimited"}`); code != 200 || m["mode"] != "paused" {
		t.Fatalf("pause: %d %s", code, body)
	}
	if s := line[2].getJSON("/events/1").state(); s != "paused" {
		t.Fatalf("a waiting visitor in a paused room: %s", s)
	}
	first.get("/events/done")
	time.Sleep(300 * time.Millisecond) // six ticks
	if s := line[2].getJSON("/.waitroom/status?room=concert").state(); s != "paused" {
		t.Fatalf("paused room admitted someone: %s", s)
	}
	// Back to fifo: the freed slot goes to the next in line.
	if code, _, body := c.do("PATCH", "/admin/api/rooms/concert", `{"mode":"fifo"}`); code != 200 {
		t.Fatalf("resume: %d %s", code, body)
	}
	line[2].waitAdmitted("concert", 3*time.Second)
	// Release through the API frees a slot for the next visitor.
	tk, err := testTickets(t).Decode("concert", line[0].cookieValue("concert"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := c.do("POST", "/admin/api/rooms/concert/release", `{"visitor":"`+tk.Visitor+`"}`); code != 200 {
		t.Fatalf("release: %d %s", code, body)
	}
	line[3].waitAdmitted("concert", 3*time.Second)
	if s := line[4].getJSON("/.waitroom/status?room=concert").state(); s != "waiting" {
		t.Fatalf("one release must free one slot; the last visitor is %s", s)
	}
	if code, m, _ := c.do("DELETE", "/admin/api/rooms/concert/overrides", ""); code != 200 || m["override"] != nil {
		t.Fatalf("clearing the override: %d %v", code, m["override"])
	}
}

// A page of another site must not drive the admin API through the
// operator's browser: cross-origin writes and form bodies are refused, and
// a tokenless API answers only to a loopback Host (DNS rebinding).
func TestAdmin_CrossSiteRequestsAreRefused(t *testing.T) {
	_, srv := newUpstream(t)
	app, _ := startGateway(t, gwConfig(srv.URL, twoInside))
	c := newAdmin(t, app)
	c.headers = map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
	if code, _, body := c.do("POST", "/admin/api/rooms/concert/admit", `{"count":1}`); code != 403 {
		t.Fatalf("a cross-site POST: %d %s", code, body)
	}
	c.headers = map[string]string{"Content-Type": "text/plain"}
	if code, _, body := c.do("POST", "/admin/api/rooms/concert/admit", `{"count":1}`); code != 415 {
		t.Fatalf("a text/plain body: %d %s", code, body)
	}
	c.headers, c.token = map[string]string{"Authorization": "bearer " + adminToken}, ""
	if code, _, body := c.do("GET", "/admin/api/rooms", ""); code != 200 {
		t.Fatalf("a lower-case bearer scheme: %d %s", code, body)
	}

	open := strings.Replace(gwConfig(srv.URL, twoInside), `token: "`+adminToken+`"`, `token: ""`, 1)
	app2, _ := startGateway(t, open)
	req, _ := http.NewRequest("GET", "http://"+app2.AdminAddr().String()+"/admin/api/rooms", nil)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a tokenless API asked with a foreign Host: %d", resp.StatusCode)
	}
	if code, _, _ := (&adminClient{t: t, base: "http://" + app2.AdminAddr().String()}).do("GET", "/admin/api/rooms", ""); code != 200 {
		t.Fatalf("a tokenless API on loopback: %d", code)
	}
}

// The operator's notice comes from the file, can be replaced through the
// API, and reaches a waiting page's JSON (which the page shows in place).
func TestAdmin_MessageReachesTheWaitingPage(t *testing.T) {
	_, srv := newUpstream(t)
	app, base := startGateway(t, gwConfig(srv.URL, "    max_active: 0\n    tick: 50ms\n    page: { message: \"Doors open at 10:00\" }"))
	v := newVisitor(t, base)
	if r := v.getJSON("/events/"); r.json["message"] != "Doors open at 10:00" {
		t.Fatalf("configured message: %v", r.json)
	}
	if page := v.get("/events/"); !strings.Contains(page.body, "Doors open at 10:00") {
		t.Fatal("the HTML page does not show the message")
	}
	c := newAdmin(t, app)
	if code, m, body := c.do("PATCH", "/admin/api/rooms/concert", `{"message":"<b>Sold out</b> soon"}`); code != 200 || m["message"] != "<b>Sold out</b> soon" {
		t.Fatalf("PATCH message: %d %s", code, body)
	}
	if r := v.getJSON("/.waitroom/status?room=concert"); r.json["message"] != "<b>Sold out</b> soon" {
		t.Fatalf("status after the change: %v", r.json)
	}
	if page := v.get("/events/"); strings.Contains(page.body, "<b>Sold out</b>") || !strings.Contains(page.body, "&lt;b&gt;Sold out") {
		t.Fatal("the message must be shown as text, escaped")
	}
	if code, _, body := c.do("PATCH", "/admin/api/rooms/concert", `{"message":"`+strings.Repeat("x", 501)+`"}`); code != 400 || !strings.Contains(body, "message") {
		t.Fatalf("a 501-character message: %d %s", code, body)
	}
}

// An admin listener without a token (allowed on loopback only) says so
// at start, naming the risk; one with a token does not.
func TestAdmin_LoopbackWithoutTokenWarns(t *testing.T) {
	_, site := newUpstream(t)
	cfg := gwConfig(site.URL, "    max_active: 5")
	open := strings.Replace(cfg, fmt.Sprintf("token: %q", adminToken), `token: ""`, 1)
	if open == cfg {
		t.Fatal("the test config has no admin token to remove")
	}
	_, _, _, logs := fileGateway(t, open, false)
	if n := logs.FilterMessageSnippet("admin API has no token").FilterField(zap.String("listen", "127.0.0.1:0")).Len(); n != 1 {
		t.Fatalf("%d warnings for a tokenless admin listener, want 1", n)
	}
	_, _, _, logs = fileGateway(t, cfg, false)
	if n := logs.FilterMessageSnippet("admin API has no token").Len(); n != 0 {
		t.Fatalf("%d warnings with a token", n)
	}
}
