package web

import (
	"net/http"
	"strconv"
	"strings"
)

// Locale picks "ko" or "en" from an Accept-Language header by q-value; the
// first of equal weight wins. def answers when the header names neither
// language, is empty or cannot be read, or when only "*" matches; a def other
// than "ko" or "en" counts as "en".
func Locale(acceptLanguage, def string) string {
	if def != "ko" {
		def = "en"
	}
	best, bestQ := "", 0.0
	refused := map[string]bool{}
	for _, r := range parseList(acceptLanguage) {
		tag, _, _ := strings.Cut(r.value, "-")
		tag = strings.ToLower(tag)
		if tag != "ko" && tag != "en" && tag != "*" {
			continue
		}
		if r.q == 0 {
			refused[tag] = true
			continue
		}
		if r.q > bestQ {
			best, bestQ = tag, r.q
		}
	}
	switch {
	case best == "ko" || best == "en":
		return best
	case best == "*" && refused[def]:
		// "*" admits anything but what the header turned down by name.
		if def == "ko" {
			return "en"
		}
		return "ko"
	}
	return def
}

// WantsJSON reports whether the request's Accept header prefers JSON to HTML.
// JSON means application/json or any "+json" type (application/problem+json,
// application/*+json, */*+json). A wildcard alone ("*/*", or none at all)
// gets HTML, since that is what a browser on the address bar sends; when JSON
// and HTML weigh the same, JSON wins only if it was named and HTML was not,
// as in axios's "application/json, text/plain, */*".
func WantsJSON(r *http.Request) bool {
	var jq, hq float64
	var js, hs int // specificity of the range that set jq and hq
	for _, m := range parseList(strings.Join(r.Header.Values("Accept"), ",")) {
		typ, sub, ok := strings.Cut(strings.ToLower(m.value), "/")
		if !ok {
			continue
		}
		if s := jsonSpecificity(typ, sub); s > js || (s == js && s > 0 && m.q > jq) {
			jq, js = m.q, s
		}
		if s := htmlSpecificity(typ, sub); s > hs || (s == hs && s > 0 && m.q > hq) {
			hq, hs = m.q, s
		}
	}
	return jq > hq || (jq > 0 && jq == hq && js == 3 && hs < 3)
}

// jsonSpecificity ranks how closely a media range names JSON: 3 named, 2
// "application/*", 1 "*/*", 0 no match.
func jsonSpecificity(typ, sub string) int {
	switch {
	case (typ == "application" || typ == "*") && (sub == "json" || strings.HasSuffix(sub, "+json")):
		return 3
	case typ == "application" && sub == "*":
		return 2
	case typ == "*" && sub == "*":
		return 1
	}
	return 0
}

// htmlSpecificity is jsonSpecificity for text/html and application/xhtml+xml.
func htmlSpecificity(typ, sub string) int {
	switch {
	case typ == "text" && sub == "html", typ == "application" && sub == "xhtml+xml":
		return 3
	case typ == "text" && sub == "*":
		return 2
	case typ == "*" && sub == "*":
		return 1
	}
	return 0
}

// weighted is one element of a comma-separated header with its q-value.
type weighted struct {
	value string
	q     float64
}

// parseList reads "a;q=0.5, b" lists as Accept and Accept-Language write
// them. Elements with an unreadable q are dropped rather than guessed at, and
// the list is cut at 32 elements so a hostile header costs little.
func parseList(h string) []weighted {
	var out []weighted
	for part := range strings.SplitSeq(h, ",") {
		if len(out) == 32 {
			break
		}
		value, params, _ := strings.Cut(part, ";")
		value = strings.TrimSpace(value)
		if value == "" {
			continue
		}
		q, ok := 1.0, true
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, ok = parseQ(strings.TrimSpace(v))
			}
		}
		if ok {
			out = append(out, weighted{value, q})
		}
	}
	return out
}

// parseQ accepts the RFC 9110 qvalue range, 0 to 1 with up to three decimals.
func parseQ(s string) (float64, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || q < 0 || q > 1 {
		return 0, false
	}
	return q, true
}
