package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// newPages returns Pages with a clock fixed at 2025-03-01 05:04:03 UTC.
func newPages(tb testing.TB) *Pages {
	tb.Helper()
	p, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	p.now = func() time.Time { return time.Date(2025, 3, 1, 5, 4, 3, 0, time.UTC) }
	return p
}

// sample is a visitor well down a busy line.
func sample() View {
	return View{
		Room: "concert", Title: "Concert tickets", Locale: "en", State: "waiting",
		Position: 1234, Ahead: 1233, Behind: 820, Line: 2054, Ticket: 98765,
		ETA: 11*time.Minute + 20*time.Second, ETAKnown: true, Progress: 0.42,
		Refresh:   7 * time.Second,
		ReturnTo:  "/events/1",
		StatusURL: "/.waitroom/status?room=concert&return_to=%2Fevents%2F1",
		LeaveURL:  "/.waitroom/leave?room=concert",
		Token:     "SECRET-TOKEN-abc123",
	}
}

// get runs Pages.Waiting for a request with the given headers.
func get(tb testing.TB, p *Pages, v View, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest("GET", "/events/1", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	p.Waiting(w, r, v)
	return w
}

func TestWaiting_HTMLInBothLanguages(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	tests := []struct {
		lang string
		want []string
	}{
		{"en", []string{`<html lang="en">`, "Concert tickets", "Your place in line", ">1,234<",
			"1,233 people ahead", "820 people behind", "2,054 waiting in total",
			"Estimated wait", "About 12 minutes", "Refreshing this page does not lose your place.",
			"no need to refresh.", "Leave the line", "05:04:03 UTC", `aria-valuenow="42"`}},
		{"ko", []string{`<html lang="ko">`, "Concert tickets", "대기 순번", ">1,234<", "앞에 1,233명", "뒤에 820명",
			"전체 대기 2,054명", "예상 대기 시간", "약 12분", "잠시만 기다려 주세요",
			"새로고침하지 않아도 자동으로 이동합니다", "새로고침해도 대기 순번은 유지됩니다", "대기 취소하기", "14:04:03 KST"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			t.Parallel()
			w := get(t, p, sample(), "Accept-Language", tt.lang)
			body := w.Body.String()
			if w.Code != 200 {
				t.Errorf("status = %d, want 200", w.Code)
			}
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range []string{
				`<noscript><meta http-equiv="refresh" content="7"></noscript>`,
				`role="progressbar"`, `aria-valuemin="0"`, `aria-valuemax="100"`, `aria-live="polite"`,
				`<form class="leave" method="post" action="/.waitroom/leave?room=concert">`,
			} {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			if strings.Contains(body, "SECRET-TOKEN") {
				t.Error("page contains the token")
			}
			assertNoExternal(t, body)
		})
	}
}

// assertNoExternal fails if the page would load or link anything off site.
func assertNoExternal(tb testing.TB, body string) {
	tb.Helper()
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		tb.Error("page contains an absolute URL")
	}
	for _, m := range regexp.MustCompile(`(?i)(src|href|action)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if strings.HasPrefix(m[2], "//") || strings.Contains(m[2], ":") && !strings.HasPrefix(m[2], "data:") {
			tb.Errorf("page refers to %s=%q", m[1], m[2])
		}
	}
	// Only its own style and scripts, from StaticPrefix on this site.
	for _, m := range regexp.MustCompile(`(?i)<(link|img|script)[^>]*\s(src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[3], "data:") && !strings.HasPrefix(m[3], StaticPrefix) {
			tb.Errorf("page loads %q", m[3])
		}
	}
}

func TestWaiting_HeadersAndCSP(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, accept := range []string{"text/html", "application/json"} {
		w := get(t, p, sample(), "Accept", accept)
		h := w.Header()
		for k, want := range map[string]string{
			"Cache-Control":          "no-store",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "same-origin",
			"Vary":                   "Accept, Accept-Language",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("Accept %s: %s = %q, want %q", accept, k, got, want)
			}
		}
		if ct := h.Get("Content-Type"); !strings.Contains(ct, "charset=utf-8") {
			t.Errorf("Accept %s: Content-Type = %q, want a charset", accept, ct)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") {
			t.Errorf("Accept %s: CSP = %q", accept, csp)
		}
	}
	// The style and script the page loads must be served, as the bytes its
	// integrity attributes name, under a policy that lets them run, or a
	// browser would show the page bare and frozen.
	w := get(t, p, sample())
	csp, body := w.Header().Get("Content-Security-Policy"), w.Body.String()
	for _, tag := range []string{"link", "script"} {
		m := regexp.MustCompile(`<` + tag + `[^>]* (?:href|src)="([^"]+)" integrity="([^"]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no <%s> with an integrity attribute", tag)
		}
		r := httptest.NewRequest(http.MethodGet, m[1], nil)
		rec := httptest.NewRecorder()
		p.Static(rec, r)
		sum := sha256.Sum256(rec.Body.Bytes())
		// The attribute is HTML: a "+" in the hash comes as &#43;.
		if rec.Code != http.StatusOK || "sha256-"+base64.StdEncoding.EncodeToString(sum[:]) != html.UnescapeString(m[2]) {
			t.Errorf("%s: served %d, %d bytes whose hash is not %s", m[1], rec.Code, rec.Body.Len(), m[2])
		}
		want := map[string]string{"link": "style", "script": "script"}[tag] + "-src 'self' "
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	for _, s := range []string{"'unsafe-inline'", "'unsafe-eval'", "http"} {
		if strings.Contains(csp, s) {
			t.Errorf("CSP allows %s: %q", s, csp)
		}
	}
}

func TestWaiting_JSON(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	unknown := sample()
	unknown.ETAKnown, unknown.Refresh = false, 1500*time.Millisecond
	admitted := sample()
	admitted.State = "admitted"
	offsite := admitted
	offsite.ReturnTo = "//evil.example/"
	tests := []struct {
		name string
		v    View
		want string
	}{
		{"waiting", sample(), `{"room":"concert","state":"waiting","position":1234,"ahead":1233,"behind":820,"waiting":2054,"ticket":98765,"eta_seconds":680,"eta_max_seconds":null,"paused":false,"progress":0.42,"refresh_after":7,"token":"SECRET-TOKEN-abc123","next":"","message":"","challenge":null}`},
		{"eta unknown", unknown, `{"room":"concert","state":"waiting","position":1234,"ahead":1233,"behind":820,"waiting":2054,"ticket":98765,"eta_seconds":null,"eta_max_seconds":null,"paused":false,"progress":0.42,"refresh_after":2,"token":"SECRET-TOKEN-abc123","next":"","message":"","challenge":null}`},
		{"admitted", admitted, `{"room":"concert","state":"admitted","position":1234,"ahead":1233,"behind":820,"waiting":2054,"ticket":98765,"eta_seconds":680,"eta_max_seconds":null,"paused":false,"progress":0.42,"refresh_after":7,"token":"SECRET-TOKEN-abc123","next":"/events/1","message":"","challenge":null}`},
		{"admitted off site", offsite, `"next":"/","message":"","challenge":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := get(t, p, tt.v, "Accept", "application/json")
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			if got := strings.TrimSpace(w.Body.String()); !strings.HasSuffix(got, tt.want) {
				t.Errorf("body = %s\nwant  %s", got, tt.want)
			}
			var m map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"position", "ahead", "behind", "waiting", "refresh_after", "progress"} {
				if _, ok := m[k].(float64); !ok {
					t.Errorf("%s = %#v, want a number", k, m[k])
				}
			}
		})
	}
}

func TestJSON_StatusAndRefreshFloor(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	v := sample()
	v.Refresh = 0
	w := httptest.NewRecorder()
	p.JSON(w, http.StatusTooManyRequests, v)
	if w.Code != 429 || !strings.Contains(w.Body.String(), `"refresh_after":5`) {
		t.Errorf("JSON() = %d %s", w.Code, w.Body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Error("JSON() is cacheable")
	}
}

func TestWaiting_StatusCodes(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for in, want := range map[int]int{0: 200, 200: 200, 202: 202, 429: 429, 500: 200} {
		v := sample()
		v.StatusCode = in
		w := get(t, p, v)
		if w.Code != want {
			t.Errorf("StatusCode %d: got %d, want %d", in, w.Code, want)
		}
		if ra := w.Header().Get("Retry-After"); (want == 429) != (ra == "7") {
			t.Errorf("StatusCode %d: Retry-After = %q", in, ra)
		}
	}
}

func TestWaiting_States(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	tests := []struct {
		state, lang string
		want, not   []string
	}{
		{"hold", "en", []string{"Please hold", "reconnecting", "<noscript>"}, nil},
		{"hold", "ko", []string{"잠시만 기다려 주세요", "다시 연결하고"}, nil},
		{"admitted", "en", []string{`content="0;url=/events/1"`, `href="/events/1"`, "It is your turn"}, []string{"<form"}},
		{"closed", "en", []string{"closed", `id="wr-line" aria-labelledby="wr-pos-label" hidden`}, nil},
		{"paused", "ko", []string{"입장이 잠시 멈췄습니다", `id="wr-eta">입장이 멈춘 동안은 알 수 없습니다<`}, nil},
		{"paused", "en", []string{"The line is paused", `id="wr-eta">None while entry is paused<`}, nil},
		{"waiting", "en", []string{`id="wr-eta">About 12 minutes<`}, nil},
		{"something new", "en", []string{"You are in line"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.state+"/"+tt.lang, func(t *testing.T) {
			t.Parallel()
			v := sample()
			v.State = waitroom.AnswerState(tt.state)
			body := get(t, p, v, "Accept-Language", tt.lang).Body.String()
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(body, s) {
					t.Errorf("page has %q", s)
				}
			}
		})
	}
}

// A paused line has no estimate in JSON either, whatever the view held.
func TestWaiting_PausedJSONHasNoEstimate(t *testing.T) {
	t.Parallel()
	v := sample()
	v.State = waitroom.AnswerPaused
	if b := v.Body(); b.ETASeconds != nil || b.ETAMaxSecs != nil || b.State != "paused" || !b.Paused {
		t.Fatalf("a paused answer: %+v", b)
	}
	// A room with max_active 0 lets nobody in either: its line stays
	// "waiting" and is told paused, with no estimate.
	v = sample()
	v.Paused = true
	if b := v.Body(); b.ETASeconds != nil || b.State != "waiting" || !b.Paused {
		t.Fatalf("a stopped answer: %+v", b)
	}
}

func TestWaiting_EscapesEverything(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	v := sample()
	v.Title = `<script>alert(1)</script>"'&`
	v.StatusURL = `/s?x=</script><script>alert(2)</script>`
	v.LeaveURL = `javascript:alert(3)`
	v.ReturnTo = `/ok"><script>alert(4)</script>`
	v.State = "admitted"
	body := get(t, p, v).Body.String()
	if strings.Count(body, "<script") != 2 { // the data block and waiting.js
		t.Errorf("page has %d <script> tags, want 2", strings.Count(body, "<script"))
	}
	for _, s := range []string{"alert(1)</script>", "javascript:", `"><script>`} {
		if strings.Contains(body, s) {
			t.Errorf("page contains %q unescaped", s)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("title was not shown escaped")
	}
	// The script's data block is JSON that gives the title back whole.
	_, rest, _ := strings.Cut(body, `<script type="application/json" id="wr-data">`)
	block, _, _ := strings.Cut(rest, "</script>")
	var data struct {
		Title  string            `json:"title"`
		Ticket int64             `json:"ticket"`
		Text   map[string]string `json:"text"`
	}
	if err := json.Unmarshal([]byte(block), &data); err != nil || data.Title != v.Title || data.Text["leave"] == "" || data.Ticket != v.Ticket {
		t.Errorf("data block %q: %+v, %v", block, data, err)
	}
	v.State, v.LeaveURL, v.StatusURL = "waiting", "//evil.example/leave", "https://evil.example/status"
	body = get(t, p, v).Body.String()
	if strings.Contains(body, "<form") || strings.Contains(body, "evil.example") {
		t.Error("page keeps an off-site leave or status URL")
	}
}

func TestWaiting_HeadHasNoBody(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	r := httptest.NewRequest("HEAD", "/events/1", nil)
	w := httptest.NewRecorder()
	p.Waiting(w, r, sample())
	if w.Body.Len() != 0 || w.Header().Get("Content-Length") == "0" {
		t.Errorf("HEAD: body %d bytes, Content-Length %q", w.Body.Len(), w.Header().Get("Content-Length"))
	}
}
