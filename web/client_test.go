package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClient_ServedVersionedAndCached(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		p.Client(w, r)
		return w
	}
	w := get("/.waitroom/client.js")
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, "root.waitroom = {") || !strings.Contains(body, "waitroomSolve") ||
		w.Header().Get("Cache-Control") != "public, max-age=300" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("client.js: %d %v", w.Code, w.Header())
	}
	v := p.ClientVersion()
	if w := get("/.waitroom/client.js?v=" + v); w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("by its version: %v", w.Header())
	}
	if w := get("/.waitroom/client.js", "If-None-Match", `"`+v+`"`); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Fatalf("revalidated: %d", w.Code)
	}
}
