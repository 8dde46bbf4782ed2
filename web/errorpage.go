package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// problem is the wording of one error status. code is the stable
// machine-readable name JSON clients switch on; the texts are for people.
type problem struct {
	code   string
	en, ko [2]string // heading, explanation
	retry  bool      // worth a "try again" link: the cause is likely brief
}

var problems = map[int]problem{
	http.StatusBadRequest: {code: "bad_request",
		en: [2]string{"Bad request", "This request could not be understood. Check the address and try again."},
		ko: [2]string{"잘못된 요청입니다", "요청을 처리할 수 없습니다. 주소를 확인한 뒤 다시 시도해 주세요."}},
	http.StatusNotFound: {code: "not_found",
		en: [2]string{"No such page", "The address may be mistyped, or the page may have moved."},
		ko: [2]string{"페이지를 찾을 수 없습니다", "주소가 잘못되었거나 페이지가 옮겨졌을 수 있습니다."}},
	http.StatusRequestEntityTooLarge: {code: "request_too_large",
		en: [2]string{"Request too large", "What was sent is larger than this site accepts."},
		ko: [2]string{"요청이 너무 큽니다", "보낸 내용이 이 사이트가 받을 수 있는 크기보다 큽니다."}},
	http.StatusRequestHeaderFieldsTooLarge: {code: "headers_too_large",
		en: [2]string{"Request headers too large", "Your browser sent more header data than this site accepts, usually because of too many or too large cookies. Clearing this site's cookies normally fixes it."},
		ko: [2]string{"요청 헤더가 너무 큽니다", "브라우저가 보낸 헤더가 허용된 크기보다 큽니다. 대개 쿠키가 많거나 클 때 생기며, 이 사이트의 쿠키를 삭제하면 해결됩니다."}},
	http.StatusInternalServerError: {code: "internal_error", retry: true,
		en: [2]string{"Something went wrong", "Please try again in a moment."},
		ko: [2]string{"문제가 발생했습니다", "잠시 후 다시 시도해 주세요."}},
	http.StatusBadGateway: {code: "upstream_unavailable", retry: true,
		en: [2]string{"The site is not answering", "This is usually brief. Your session is kept; please try again in a moment."},
		ko: [2]string{"사이트가 응답하지 않습니다", "대개 잠시 후 해결됩니다. 입장 상태는 유지되니 잠시 후 다시 시도해 주세요."}},
	http.StatusServiceUnavailable: {code: "unavailable", retry: true,
		en: [2]string{"Temporarily unavailable", "The service cannot answer right now. Please try again in a moment."},
		ko: [2]string{"일시적으로 이용할 수 없습니다", "지금은 요청을 처리할 수 없습니다. 잠시 후 다시 시도해 주세요."}},
	http.StatusGatewayTimeout: {code: "upstream_timeout", retry: true,
		en: [2]string{"The site took too long", "The site did not answer in time. Your session is kept; please try again in a moment."},
		ko: [2]string{"사이트 응답이 너무 늦습니다", "사이트가 제시간에 응답하지 않았습니다. 입장 상태는 유지되니 잠시 후 다시 시도해 주세요."}},
}

// notForwarded words the answer to a waiting visitor's POST, PUT, PATCH or
// DELETE. It must make plain that nothing reached the site, so the visitor
// neither fears a double order nor believes one went through.
var notForwarded = problem{code: "not_forwarded",
	en: [2]string{"Your request was not sent", "You are in line for this site, so this request was not sent to it and nothing was changed. Go back to the waiting page and wait for your turn; it will take you in automatically."},
	ko: [2]string{"요청이 전송되지 않았습니다", "현재 입장 대기 중이어서 이 요청은 사이트로 전송되지 않았고, 아무것도 변경되지 않았습니다. 대기 페이지로 돌아가 차례를 기다려 주세요. 차례가 되면 자동으로 입장합니다."},
}

var linkText = map[string][2]string{ // try again, back to the waiting page
	"en": {"Try again", "Back to the waiting page"},
	"ko": {"다시 시도", "대기 페이지로 돌아가기"},
}

// errorView is error.html's data.
type errorView struct {
	Lang, Heading, Text string
	Status              int
	Link, LinkText      string
	CSS                 template.CSS
	Banner              string // a preview's banner (preview_banner); "" otherwise
}

// errorJSON is the body of an error for clients that asked for JSON.
type errorJSON struct {
	Status     int                  `json:"status"`
	Error      string               `json:"error"`
	Message    string               `json:"message"`
	Room       string               `json:"room,omitempty"`
	State      waitroom.AnswerState `json:"state,omitempty"`
	RetryAfter int64                `json:"retry_after,omitempty"`
}

// Error sends the branded page for an error status (400, 404, 413, 431, 500,
// 502, 503, 504 have their own words; other 4xx and 5xx a generic text), or
// JSON when the Accept header prefers it. A status outside 400–599 is sent as
// 500. Nothing from the request is echoed except, for a "try again" link, its
// own same-site path.
func (p *Pages) Error(w http.ResponseWriter, r *http.Request, status int) {
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	pr, ok := problems[status]
	if !ok {
		pr = problems[http.StatusInternalServerError]
		pr.code, pr.retry = "error", status >= 500
		if t := http.StatusText(status); t != "" {
			pr.en[0] = t
		}
		if status < 500 {
			pr.ko[0], pr.ko[1] = "요청을 처리할 수 없습니다", "주소를 확인한 뒤 다시 시도해 주세요."
			pr.en[1] = "Check the address and try again."
		}
	}
	link := ""
	if pr.retry && r.Method == http.MethodGet {
		link = localURL(r.URL.RequestURI())
	}
	p.problem(w, r, status, pr, link, 0, "")
}

// NotForwarded answers a waiting visitor's POST, PUT, PATCH or DELETE: 503
// with Retry-After (whole seconds, at least 1), saying the request did not
// reach the site and pointing back to the waiting page.
func (p *Pages) NotForwarded(w http.ResponseWriter, r *http.Request, room string, retryAfter time.Duration) {
	secs := retrySeconds(retryAfter)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	p.problem(w, r, http.StatusServiceUnavailable, notForwarded, backURL(r), secs, room)
}

func (p *Pages) problem(w http.ResponseWriter, r *http.Request, status int, pr problem, link string, retry int64, room string) {
	p.problemPage(w, r, status, pr, link, retry, room, false)
}

// problemPage is problem, with a preview's banner and title when preview is
// set (a preview of a refusal, Responder.Refused).
func (p *Pages) problemPage(w http.ResponseWriter, r *http.Request, status int, pr problem, link string, retry int64, room string, preview bool) {
	w.Header().Add("Vary", "Accept, Accept-Language")
	lang := Locale(r.Header.Get("Accept-Language"), "en")
	words := pr.en
	if lang == "ko" {
		words = pr.ko
	}
	if WantsJSON(r) {
		body := errorJSON{Status: status, Error: pr.code, Message: words[1], Room: room, RetryAfter: retry}
		if pr.code == notForwarded.code {
			body.State = waitroom.AnswerWaiting
		}
		p.json(w, r, status, body)
		return
	}
	v := errorView{Lang: lang, Heading: words[0], Text: words[1], Status: status, Link: link, CSS: p.css}
	if preview {
		v.Banner = text(lang, "preview_banner")
	}
	if link != "" {
		v.LinkText = linkText[lang][0]
		if pr.code == notForwarded.code {
			v.LinkText = linkText[lang][1]
		}
	}
	p.html(w, r, status, p.cspError, "error.html", v)
}

// backURL is where the waiting page most likely is: the page the form was
// on, when the Referer names this same host, else the request's own path,
// whose GET shows the waiting room too.
func backURL(r *http.Request) string {
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host != "" && ref.Host == r.Host {
		return localURL(ref.RequestURI())
	}
	return localURL(r.URL.Path)
}
