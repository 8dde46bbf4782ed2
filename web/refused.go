package web

import (
	"net/http"
	"strconv"

	"github.com/waitroom/waitroom/waitroom"
)

// refusals word the answers that turn a visitor away without a ticket,
// with their status. Each says what the visitor can do, since none of
// them is the visitor's fault as far as the visitor can tell.
var refusals = map[waitroom.AnswerState]struct {
	status int
	pr     problem
}{
	waitroom.AnswerLimited: {http.StatusTooManyRequests, problem{code: "limited", retry: true,
		en: [2]string{"Many visitors from your network", "Your network (a PC-bang, an office or a school, say) took many places in line in the last minutes. Please try again in a moment."},
		ko: [2]string{"같은 네트워크의 접속이 많습니다", "같은 네트워크(PC방, 사무실, 학교 등)에서 최근 많은 대기 순번을 받았습니다. 잠시 후 다시 시도해 주세요."}}},
	waitroom.AnswerFull: {http.StatusServiceUnavailable, problem{code: "full", retry: true,
		en: [2]string{"The line is full", "So many people are waiting that no new places are given right now. Please try again later."},
		ko: [2]string{"대기열이 가득 찼습니다", "대기 인원이 너무 많아 지금은 새 순번을 드릴 수 없습니다. 잠시 후 다시 시도해 주세요."}}},
	waitroom.AnswerIdentity: {http.StatusForbidden, problem{code: "identity",
		en: [2]string{"Please sign in first", "This waiting room is for signed-in members. Sign in on the site, then come back to this page."},
		ko: [2]string{"먼저 로그인해 주세요", "이 대기실은 로그인한 회원만 이용할 수 있습니다. 사이트에 로그인한 뒤 이 페이지로 돌아오세요."}}},
	waitroom.AnswerShared: {http.StatusConflict, problem{code: "shared", retry: true,
		en: [2]string{"Your admission is in use elsewhere", "This admission is being used on other devices. Finish there, or try again in a moment: a device that moved to another network is let back in once its old address has gone quiet."},
		ko: [2]string{"다른 곳에서 입장 중입니다", "이 입장 권한을 다른 기기에서 사용하고 있습니다. 그곳에서 이용을 마치거나 잠시 후 다시 시도해 주세요. 다른 네트워크로 옮긴 기기는 이전 주소의 사용이 멈추면 다시 들어올 수 있습니다."}}},
}

// Refused turns a visitor away without a ticket: 429 (with Retry-After)
// for a network past its join_limit, 503 for a full line, 403 for a room
// that wants the site's sign-in, 409 for an admission in use by as many
// other clients as session_clients allows. JSON clients get the same body as a waiting answer, every
// field present, with the state and retry_after.
func (rs *Responder) Refused(w http.ResponseWriter, r *http.Request, a waitroom.Answer) {
	rf, ok := refusals[a.State]
	if !ok {
		rs.Pages.Error(w, r, http.StatusForbidden)
		return
	}
	retry := retrySeconds(a.RetryAfter)
	if a.RetryAfter <= 0 {
		retry = refreshSeconds(a.Refresh)
	}
	h := w.Header()
	h.Set(waitroom.StateHeader, string(a.State))
	if rf.pr.retry {
		h.Set("Retry-After", strconv.FormatInt(retry, 10))
	}
	if WantsJSON(r) {
		v := rs.waiting(a)
		v.Refresh = a.RetryAfter
		if rf.pr.retry {
			v.Refresh = max(a.RetryAfter, a.Refresh)
		}
		h.Add("Vary", "Accept, Accept-Language")
		rs.Pages.json(w, r, rf.status, v.Body())
		return
	}
	link := ""
	if rf.pr.retry {
		link = localURL(a.ReturnTo)
	}
	rs.Pages.problemPage(w, r, rf.status, rf.pr, link, retry, a.Room, a.Preview != "")
}

// previewRefusals word a preview link that is not shown: only whether it
// expired, nothing of why else it was refused.
var previewRefusals = [2]problem{
	{code: "preview_invalid",
		en: [2]string{"This preview link is not valid", "Make a new preview link from the dashboard or the admin API."},
		ko: [2]string{"유효하지 않은 미리보기 링크입니다", "대시보드나 관리 API에서 새 미리보기 링크를 만드세요."}},
	{code: "preview_expired",
		en: [2]string{"This preview link has expired", "Make a new preview link from the dashboard or the admin API."},
		ko: [2]string{"미리보기 링크가 만료되었습니다", "대시보드나 관리 API에서 새 미리보기 링크를 만드세요."}},
}

// PreviewRefused answers a preview link that is forged, tampered with, of
// another room or expired: 403, saying "expired" or "invalid" and nothing
// more (waitroom.PreviewRefuser).
func (p *Pages) PreviewRefused(w http.ResponseWriter, r *http.Request, expired bool) {
	pr := previewRefusals[0]
	if expired {
		pr = previewRefusals[1]
	}
	p.problem(w, r, http.StatusForbidden, pr, "", 0, "")
}
