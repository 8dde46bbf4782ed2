package web

import (
	"strconv"
	"strings"
	"time"
)

// messages holds every visitor-facing string of the waiting page. The page's
// script gets the same table for its language, so a number the script fills in
// reads exactly as the server would have written it. "{n}", "{h}" and "{m}" are
// placeholders; a key ending in "0" or "1" is the form for that count and
// falls back to the "N" key when missing (Korean needs no plural forms).
var messages = map[string]map[string]string{
	"en": {
		"default_title":      "Waiting room",
		"doc_title":          "#{n} in line",
		"waiting_heading":    "You are in line",
		"waiting_lead":       "The site is busy right now, so visitors enter in the order they arrived. We will take you in as soon as it is your turn.",
		"hold_heading":       "Please hold",
		"hold_lead":          "We are reconnecting to the line. Your place is safe, and this page keeps trying by itself.",
		"paused_heading":     "The line is paused",
		"paused_lead":        "Entry has stopped for a moment. Your place is kept, and the line will move again soon.",
		"closed_heading":     "The waiting room is closed",
		"closed_lead":        "Entry is not open right now. Please come back later.",
		"prequeue_heading":   "The line opens soon",
		"prequeue_lead":      "You are early. Keep this page open; it will move you along when the line opens.",
		"admitted_heading":   "It is your turn",
		"admitted_lead":      "Taking you to the site…",
		"challenge_heading":  "Checking your browser",
		"challenge_lead":     "Before you get your place, your browser does a short calculation that keeps bots out of the line. Your place in arrival order is already kept.",
		"challenge_progress": "Checking your browser… {n}%",
		"challenge_noscript": "This waiting room needs a browser with JavaScript turned on.",
		"continue":           "Continue to the site",
		"position_label":     "Your place in line",
		"ahead0":             "You are next",
		"ahead1":             "1 person ahead",
		"aheadN":             "{n} people ahead",
		"behind1":            "1 person behind",
		"behindN":            "{n} people behind",
		"waitingN":           "{n} waiting in total",
		"progress_label":     "Progress through the line",
		"progress_text":      "{n}% of the way",
		"eta_label":          "Estimated wait",
		"eta_unknown":        "Calculating…",
		"eta_paused":         "None while entry is paused",
		"eta_less":           "Less than a minute",
		"eta_m1":             "About 1 minute",
		"eta_mN":             "About {n} minutes",
		"eta_h":              "About {h} h",
		"eta_hm":             "About {h} h {m} min",
		"eta_range":          "{a} to {b} minutes",
		"auto":               "This page updates itself and takes you in when it is your turn; no need to refresh.",
		"keep":               "Refreshing this page does not lose your place.",
		"updated":            "Last updated",
		"announce":           "Your place in line is now {n}.",
		"leave":              "Leave the line",
		"leave_note":         "Leaving gives up your place.",
		"zone":               " UTC",
		"preview_title":      "Preview",
		"preview_banner":     "Staff preview: this is the page a visitor sees. It holds no place in line and lets nobody in.",
		"turn_title":         "Your turn — {n}",
		"turn_body":          "It is your turn at {n}. Come back to this tab to go in.",
		"turn_lead":          "Come back to this tab: the site opens as soon as you do.",
		"notify_button":      "Notify me when it's my turn",
		"notify_on":          "You will get a notification when it is your turn.",
		"notify_off":         "Notifications are off.",
		"notify_denied":      "The browser did not allow notifications; the tab's title will still tell you.",
	},
	"ko": {
		"default_title":      "대기실",
		"doc_title":          "대기 {n}번",
		"waiting_heading":    "입장을 기다리고 있습니다",
		"waiting_lead":       "지금 접속자가 많아 도착한 순서대로 입장하고 있습니다. 차례가 되면 자동으로 입장하니 잠시만 기다려 주세요.",
		"hold_heading":       "잠시만 기다려 주세요",
		"hold_lead":          "대기열에 다시 연결하고 있습니다. 대기 순번은 그대로 유지되며, 이 페이지가 자동으로 다시 시도합니다.",
		"paused_heading":     "입장이 잠시 멈췄습니다",
		"paused_lead":        "잠시 입장을 멈추었습니다. 대기 순번은 유지되며 곧 다시 진행됩니다.",
		"closed_heading":     "대기실이 닫혀 있습니다",
		"closed_lead":        "지금은 입장할 수 없습니다. 나중에 다시 방문해 주세요.",
		"prequeue_heading":   "곧 대기가 시작됩니다",
		"prequeue_lead":      "아직 대기 시작 전입니다. 이 페이지를 열어 두시면 시작될 때 자동으로 안내해 드립니다.",
		"admitted_heading":   "입장 차례입니다",
		"admitted_lead":      "사이트로 이동하고 있습니다…",
		"challenge_heading":  "브라우저를 확인하고 있습니다",
		"challenge_lead":     "순번을 받기 전에 매크로를 막기 위한 짧은 계산을 브라우저가 합니다. 도착 순서에 따른 순번은 이미 확보되어 있습니다.",
		"challenge_progress": "브라우저 확인 중… {n}%",
		"challenge_noscript": "이 대기실은 자바스크립트를 켠 브라우저가 필요합니다.",
		"continue":           "사이트로 이동",
		"position_label":     "대기 순번",
		"ahead0":             "다음 차례입니다",
		"aheadN":             "앞에 {n}명",
		"behindN":            "뒤에 {n}명",
		"waitingN":           "전체 대기 {n}명",
		"progress_label":     "대기 진행률",
		"progress_text":      "{n}% 진행",
		"eta_label":          "예상 대기 시간",
		"eta_unknown":        "계산 중…",
		"eta_paused":         "입장이 멈춘 동안은 알 수 없습니다",
		"eta_less":           "1분 미만",
		"eta_mN":             "약 {n}분",
		"eta_h":              "약 {h}시간",
		"eta_hm":             "약 {h}시간 {m}분",
		"eta_range":          "약 {a}~{b}분",
		"auto":               "새로고침하지 않아도 자동으로 이동합니다.",
		"keep":               "새로고침해도 대기 순번은 유지됩니다.",
		"updated":            "마지막 업데이트",
		"announce":           "현재 대기 순번은 {n}번입니다.",
		"leave":              "대기 취소하기",
		"leave_note":         "취소하면 대기 순번이 사라집니다.",
		"zone":               " KST",
		"preview_title":      "미리보기",
		"preview_banner":     "직원용 미리보기: 방문자에게 보이는 화면입니다. 대기 순번을 차지하지 않으며 아무도 입장시키지 않습니다.",
		"turn_title":         "입장 차례 — {n}",
		"turn_body":          "{n} 입장 차례입니다. 이 탭으로 돌아오시면 입장합니다.",
		"turn_lead":          "이 탭으로 돌아오시면 바로 사이트로 이동합니다.",
		"notify_button":      "내 차례가 되면 알림 받기",
		"notify_on":          "차례가 되면 알림을 보내 드립니다.",
		"notify_off":         "알림을 껐습니다.",
		"notify_denied":      "브라우저가 알림을 허용하지 않았습니다. 차례가 되면 탭 제목으로 알려 드립니다.",
	},
}

// kst is Korea Standard Time, which has had no daylight saving since 1988; a
// fixed zone spares the binary a tzdata lookup that distroless images lack.
var kst = time.FixedZone("KST", 9*60*60)

// text returns one message in the page's language.
func text(lang, key string) string {
	if s, ok := messages[lang][key]; ok {
		return s
	}
	return messages["en"][key]
}

// count fills a counted message ("aheadN" and its "ahead0"/"ahead1" forms).
func count(lang, key string, n int64) string {
	if n < 0 {
		n = 0
	}
	if n <= 1 {
		if s, ok := messages[lang][key+strconv.FormatInt(n, 10)]; ok {
			return s
		}
	}
	return strings.ReplaceAll(text(lang, key+"N"), "{n}", group(n))
}

// group writes n with thousands separators, which Korean writes the same way.
func group(n int64) string {
	s := strconv.FormatInt(max(n, 0), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// etaText words an estimate the way waiting.js does: minutes rounded up, and
// past an hour to five minutes, since more precision than that is not real.
func etaText(lang string, eta time.Duration, known bool) string {
	if !known {
		return text(lang, "eta_unknown")
	}
	secs := etaSeconds(eta)
	if secs < 60 {
		return text(lang, "eta_less")
	}
	m := (secs + 59) / 60
	if m < 60 {
		return count(lang, "eta_m", m)
	}
	m = (m + 4) / 5 * 5
	h, m := m/60, m%60
	key := "eta_hm"
	if m == 0 {
		key = "eta_h"
	}
	r := strings.NewReplacer("{h}", strconv.FormatInt(h, 10), "{m}", strconv.FormatInt(m, 10))
	return r.Replace(text(lang, key))
}

// etaRangeText words a range when the line moves unevenly ("5 to 8
// minutes"), and one figure otherwise; a range past an hour is worded by
// its upper end, the honest side.
func etaRangeText(lang string, eta, most time.Duration, known bool) string {
	if !known || most <= eta {
		return etaText(lang, eta, known)
	}
	a, b := (etaSeconds(eta)+59)/60, (etaSeconds(most)+59)/60
	switch {
	case b >= 60:
		return etaText(lang, most, true)
	case a == b:
		return etaText(lang, eta, true)
	}
	return strings.NewReplacer("{a}", strconv.FormatInt(max(a, 1), 10), "{b}", strconv.FormatInt(b, 10)).Replace(text(lang, "eta_range"))
}

// clock writes the time of an answer in the zone a visitor of that language
// most likely lives in; waiting.js rewrites it in the browser's own zone.
func clock(lang string, t time.Time) string {
	if lang == "ko" {
		t = t.In(kst)
	} else {
		t = t.UTC()
	}
	return t.Format("15:04:05") + text(lang, "zone")
}
