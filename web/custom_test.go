package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

func writeTemplate(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "room.html")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCustomTemplate_ErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"unclosed action":  "<html>\n<body>\n{{if .Position}\n</body>",
		"unknown field":    "<html>\n<body>\n<p>{{.Nope}}</p>\n</body>",
		"unknown function": "<html>\n\n{{frobnicate .Title}}",
	}
	for name, src := range cases {
		path := writeTemplate(t, src)
		c := DefaultPage()
		c.Template = path
		_, err := c.Build()
		if err == nil || !strings.Contains(err.Error(), "template: ") || !strings.Contains(err.Error(), path+":3") {
			t.Errorf("%s: want a template problem naming %s:3, got %v", name, path, err)
		}
	}
	c := DefaultPage()
	c.Template = filepath.Join(t.TempDir(), "missing.html")
	if _, err := c.Build(); err == nil || !strings.Contains(err.Error(), "template: cannot read") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestCustomTemplate_RendersItsVariables(t *testing.T) {
	t.Parallel()
	path := writeTemplate(t, `<!doctype html><html lang="{{.Lang}}"><style>{{.CSS}}</style>
<h1 class="ours">{{.Title}} — you are number {{.Position}}, {{.Ahead}}</h1><p id="wr-message">{{.Message}}</p>
<script type="application/json" id="wr-data">{{.Data}}</script><script>{{.JS}}</script></html>`)
	c := DefaultPage()
	c.Title, c.Template = "Concert", path
	page, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	rs := NewResponder(newPages(t), map[string]Page{"concert": page})
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/events/1", nil)
	rs.Waiting(w, r, waitroom.Answer{Room: "concert", State: "waiting", Message: "<i>soon</i>",
		Decision: waitroom.Decision{State: waitroom.StateWaiting, Position: 7, Line: 9}})
	body := w.Body.String()
	for _, want := range []string{`class="ours"`, "Concert — you are number 7, 6 people ahead", "&lt;i&gt;soon&lt;/i&gt;", `"position":7`} {
		if !strings.Contains(body, want) {
			t.Errorf("the custom page lacks %q:\n%.600s", want, body)
		}
	}
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self' 'sha256-") {
		t.Errorf("the custom page lost its policy: %q", csp)
	}
}
