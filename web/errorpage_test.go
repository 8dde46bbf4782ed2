package web

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func errorPage(tb testing.TB, p *Pages, status int, lang string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest("GET", "/events/1?q=<b>", nil)
	r.Header.Set("Accept-Language", lang)
	w := httptest.NewRecorder()
	p.Error(w, r, status)
	return w
}

func notForwardedPage(tb testing.TB, p *Pages, lang string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest("POST", "/events/1/buy", strings.NewReader("seat=A1"))
	r.Header.Set("Accept-Language", lang)
	r.Header.Set("Referer", "http://example.com/events/1?seat=A1")
	w := httptest.NewRecorder()
	p.NotForwarded(w, r, "concert", 2500*time.Millisecond)
	return w
}

func TestError_EveryStatusInBothLanguages(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	tests := []struct {
		status int
		en, ko string
	}{
		{400, "Bad request", "잘못된 요청입니다"},
		{404, "No such page", "페이지를 찾을 수 없습니다"},
		{413, "Request too large", "요청이 너무 큽니다"},
		{431, "Request headers too large", "요청 헤더가 너무 큽니다"},
		{500, "Something went wrong", "문제가 발생했습니다"},
		{502, "The site is not answering", "사이트가 응답하지 않습니다"},
		{503, "Temporarily unavailable", "일시적으로 이용할 수 없습니다"},
		{504, "The site took too long", "사이트 응답이 너무 늦습니다"},
		{418, "I&#39;m a teapot", "요청을 처리할 수 없습니다"},
	}
	for _, tt := range tests {
		for lang, want := range map[string]string{"en": tt.en, "ko": tt.ko} {
			t.Run(lang+"/"+tt.en, func(t *testing.T) {
				t.Parallel()
				w := errorPage(t, p, tt.status, lang)
				body := w.Body.String()
				if w.Code != tt.status {
					t.Errorf("status = %d, want %d", w.Code, tt.status)
				}
				if !strings.Contains(body, "<h1>"+want+"</h1>") || !strings.Contains(body, `<html lang="`+lang+`">`) {
					t.Errorf("page lacks %q in %s:\n%s", want, lang, body)
				}
				if strings.Contains(body, "<b>") || strings.Contains(body, "<script") {
					t.Error("page echoes input or carries a script")
				}
				if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("headers = %v", w.Header())
				}
				if csp := w.Header().Get("Content-Security-Policy"); strings.Contains(csp, "script-src") {
					t.Errorf("error page allows scripts: %q", csp)
				}
				assertNoExternal(t, body)
			})
		}
	}
}

func TestError_RetryLinkStaysOnSite(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	r := httptest.NewRequest("GET", "http://example.com//evil.example/x", nil)
	w := httptest.NewRecorder()
	p.Error(w, r, 502)
	if !strings.Contains(w.Body.String(), `<a class="button" href="/">`) {
		t.Errorf("retry link not reduced to /:\n%s", w.Body)
	}
}

func TestError_OutOfRangeIs500(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, s := range []int{0, 200, 302, 600} {
		if w := errorPage(t, p, s, "en"); w.Code != 500 {
			t.Errorf("Error(%d) sent %d, want 500", s, w.Code)
		}
	}
}

func TestError_JSON(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	r := httptest.NewRequest("GET", "/x", nil)
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Accept-Language", "ko")
	w := httptest.NewRecorder()
	p.Error(w, r, 504)
	var got errorJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	want := errorJSON{Status: 504, Error: "upstream_timeout", Message: problems[504].ko[1]}
	if got != want || w.Code != 504 {
		t.Errorf("Error JSON = %d %+v, want %+v", w.Code, got, want)
	}
}

func TestNotForwarded(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for lang, want := range map[string][]string{
		"en": {"Your request was not sent", "nothing was changed", "Go back to the waiting page", `href="/events/1?seat=A1"`},
		"ko": {"요청이 전송되지 않았습니다", "아무것도 변경되지 않았습니다", "대기 페이지로 돌아가기"},
	} {
		w := notForwardedPage(t, p, lang)
		if w.Code != 503 || w.Header().Get("Retry-After") != "3" {
			t.Errorf("%s: %d Retry-After %q, want 503 and 3", lang, w.Code, w.Header().Get("Retry-After"))
		}
		for _, s := range want {
			if !strings.Contains(w.Body.String(), s) {
				t.Errorf("%s: page lacks %q", lang, s)
			}
		}
	}
}

func TestNotForwarded_JSONAndRetryFloor(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	r := httptest.NewRequest("DELETE", "/cart/1", nil)
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Referer", "https://evil.example/phish")
	w := httptest.NewRecorder()
	p.NotForwarded(w, r, "concert", 0)
	if w.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", w.Header().Get("Retry-After"))
	}
	want := `{"status":503,"error":"not_forwarded","message":"` + notForwarded.en[1] + `","room":"concert","state":"waiting","retry_after":1}`
	if got := strings.TrimSpace(w.Body.String()); got != want {
		t.Errorf("body = %s\nwant  %s", got, want)
	}
}

func TestBackURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ target, referer, want string }{
		{"http://example.com/buy", "http://example.com/events/1?a=b", "/events/1?a=b"},
		{"http://example.com/buy", "https://evil.example/events/1", "/buy"},
		{"http://example.com/buy", "", "/buy"},
		{"http://example.com/buy", "http://example.com", "/"},
		{"http://example.com//evil.example/", "", "/"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", tt.target, nil)
		if tt.referer != "" {
			r.Header.Set("Referer", tt.referer)
		}
		if got := backURL(r); got != tt.want {
			t.Errorf("backURL(%s, Referer %s) = %q, want %q", tt.target, tt.referer, got, tt.want)
		}
	}
}
