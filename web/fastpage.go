package web

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The built-in waiting page is what a crowd reloads and joins on, and
// html/template spent half of the gateway's time on it walking the same
// template for every request. A pagePlan is that template rendered once
// per shape (language and which optional parts show), with a marker in
// place of each value, cut at the markers into static chunks; a request
// then writes the chunks with its values between them, each escaped as
// html/template escapes that spot. Which escaping that is, the plan learns
// by rendering the template with probe values in each spot and keeping the
// escaper that reproduces every probe byte for byte; a spot no escaper
// reproduces leaves the shape to html/template. TestFastPage_MatchesTemplate
// holds the two renderings equal on random views.

// pageSlots are the waitingView strings a page plan fills per request, in
// the order slotValues gives them.
var pageSlots = [...]string{"Title", "DocTitle", "State", "Heading", "Lead", "Position", "Ahead", "Behind",
	"Total", "ETA", "PercentText", "Updated", "UpdatedISO", "MetaRefresh", "Next", "LeaveTo", "Message", "Data"}

// The slots the template tests (shapeEmpty).
const slotNext, slotLeaveTo, slotMessage = 14, 15, 16

// slotPercent is the slot of waitingView.Percent, a number: its marker is
// a number too, which no escaper changes.
const slotPercent = len(pageSlots)

func slotValues(vw *waitingView) [len(pageSlots) + 1]string {
	return [...]string{vw.Title, vw.DocTitle, vw.State, vw.Heading, vw.Lead, vw.Position, vw.Ahead, vw.Behind,
		vw.Total, vw.ETA, vw.PercentText, vw.Updated, vw.UpdatedISO, vw.MetaRefresh, vw.Next, vw.LeaveTo,
		vw.Message, string(vw.Data), strconv.Itoa(vw.Percent)}
}

// setSlots puts vals into vw's slot fields (Data as template.JS, as the
// template types it).
func setSlots(vw *waitingView, vals [len(pageSlots)]string, percent int) {
	vw.Title, vw.DocTitle, vw.State, vw.Heading, vw.Lead = vals[0], vals[1], vals[2], vals[3], vals[4]
	vw.Position, vw.Ahead, vw.Behind, vw.Total, vw.ETA = vals[5], vals[6], vals[7], vals[8], vals[9]
	vw.PercentText, vw.Updated, vw.UpdatedISO, vw.MetaRefresh = vals[10], vals[11], vals[12], vals[13]
	vw.Next, vw.LeaveTo, vw.Message, vw.Data = vals[14], vals[15], vals[16], template.JS(vals[17])
	vw.Percent = percent
}

// shapeEmpty marks the slots that the shape says are empty: the template
// tests them, so a plan must be made with them empty, and every page of
// the shape has them so.
func shapeEmpty(vw *waitingView) (empty [len(pageSlots)]bool) {
	empty[slotNext], empty[slotLeaveTo], empty[slotMessage] = vw.Next == "", vw.LeaveTo == "", vw.Message == ""
	return empty
}

// pageShape is what changes a page's chunks: the language (its words and
// lang attribute) and the parts the template shows or not.
type pageShape struct {
	lang                                   string
	showLine, message, solver, next, leave bool
}

func shapeOf(vw *waitingView) pageShape {
	return pageShape{lang: vw.Lang, showLine: vw.ShowLine, message: vw.Message != "",
		solver: vw.SolverFile.URL != "", next: vw.Next != "", leave: vw.LeaveTo != ""}
}

// escaper writes s as one spot of the page wants it.
type escaper func(b *bytes.Buffer, s string)

// pagePlan is one shape's chunks: chunks[i] goes before the value of
// slots[i], with esc[i] its escaping; the last chunk ends the page.
type pagePlan struct {
	chunks []string
	slots  []int
	esc    []escaper
}

// render writes the page for vw, which must have the plan's shape.
func (pl *pagePlan) render(b *bytes.Buffer, vw *waitingView) {
	vals := slotValues(vw)
	for i, s := range pl.slots {
		b.WriteString(pl.chunks[i])
		pl.esc[i](b, vals[s])
	}
	b.WriteString(pl.chunks[len(pl.chunks)-1])
}

// plans caches a pagePlan, or nil for a shape left to html/template, per
// shape. Shapes are few: two languages times a handful of optional parts.
type plans struct {
	mu sync.Mutex
	m  map[pageShape]*pagePlan
}

// fastWaiting renders the built-in page for vw into b from its shape's
// plan; false when there is none, and b is untouched.
func (p *Pages) fastWaiting(b *bytes.Buffer, vw *waitingView) bool {
	// A URL slot's value is a path on this site (navigation checks it); the
	// plan's URL escaping does no scheme filtering of its own.
	for _, u := range []string{vw.Next, vw.LeaveTo} {
		if u != "" && (!strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//")) {
			return false
		}
	}
	shape := shapeOf(vw)
	p.plans.mu.Lock()
	pl, ok := p.plans.m[shape]
	if !ok {
		pl = p.plan(vw)
		if p.plans.m == nil {
			p.plans.m = make(map[pageShape]*pagePlan)
		}
		p.plans.m[shape] = pl
	}
	p.plans.mu.Unlock()
	if pl == nil {
		return false
	}
	pl.render(b, vw)
	return true
}

// Markers are letters and digits only, which every escaper leaves as they
// are. A value's marker is start + slot + end; a probe is wrapped in its
// slot's start and stop markers.
const (
	markStart, markEnd, markStop = "Qz9w", "W9zQ", "Xk7v"
	percentMark                  = 731_592_604
)

var markRE = regexp.MustCompile(markStart + `(\d\d)` + markEnd)

func marker(slot int) string { return fmt.Sprintf("%s%02d%s", markStart, slot, markEnd) }

// probes exercise every character an escaper may treat apart. Each starts
// with "/", so that URL spots take them as paths on this site, as the real
// values are.
var probes = []string{
	`/a b?c=d&e='f'"g"<h>+i%20j%zz#k%4`,
	`/%`, `/%A`,
	"/é\u2028\u00a0\x00\t\n`~!@$^*()[]{}|\\;:,.",
	`/</script><!-- -->&amp;&#39;=` + "\r",
}

// candidates are the escapers a spot may use, tried in order.
var candidates = []escaper{escapeHTML, escapeURLAttr, escapeVerbatim}

// plan renders vw's shape once with markers, and each slot with probes,
// to learn the chunks and the escaping of every spot; nil when some spot
// matches no candidate or the template will not render.
func (p *Pages) plan(vw *waitingView) *pagePlan {
	var vals [len(pageSlots)]string
	empty := shapeEmpty(vw)
	for i := range vals {
		if !empty[i] {
			vals[i] = marker(i)
		}
	}
	base := *vw
	setSlots(&base, vals, percentMark)
	page, err := p.execute(&base)
	if err != nil {
		return nil
	}
	pct := strconv.Itoa(percentMark)
	// Cut at every value's marker, and at the number marker.
	cut := regexp.MustCompile(markRE.String() + `|` + pct)
	pl := &pagePlan{}
	last := 0
	for _, m := range cut.FindAllStringSubmatchIndex(page, -1) {
		pl.chunks = append(pl.chunks, page[last:m[0]])
		slot := slotPercent
		if m[2] >= 0 {
			slot, _ = strconv.Atoi(page[m[2]:m[3]])
		}
		pl.slots = append(pl.slots, slot)
		last = m[1]
	}
	pl.chunks = append(pl.chunks, page[last:])
	// Each slot's spots, in page order, with the escaping each showed.
	seen := map[int][]int{} // slot -> indexes into pl.slots
	for i, s := range pl.slots {
		seen[s] = append(seen[s], i)
	}
	pl.esc = make([]escaper, len(pl.slots))
	for _, i := range seen[slotPercent] {
		pl.esc[i] = escapeVerbatim // digits
	}
	for slot := range pageSlots {
		spots := seen[slot]
		if len(spots) == 0 || empty[slot] {
			continue
		}
		fits := make([][]bool, len(spots)) // fits[spot][candidate]
		for k := range fits {
			fits[k] = []bool{true, true, true}
		}
		for _, probe := range probes {
			got, ok := p.probe(&base, vals, slot, probe)
			if !ok || len(got) != len(spots) {
				return nil
			}
			for k, out := range got {
				for c, esc := range candidates {
					var b bytes.Buffer
					esc(&b, probe)
					if b.String() != out {
						fits[k][c] = false
					}
				}
			}
		}
		for k, i := range spots {
			c := firstTrue(fits[k])
			if c < 0 {
				return nil
			}
			pl.esc[i] = candidates[c]
		}
	}
	return pl
}

// probe renders the page with probe in slot (wrapped in markers) and
// returns what the template made of it at each spot, in page order.
func (p *Pages) probe(base *waitingView, vals [len(pageSlots)]string, slot int, probe string) ([]string, bool) {
	vw := *base
	vals[slot] = marker(slot) + probe + markStop
	setSlots(&vw, vals, percentMark)
	page, err := p.execute(&vw)
	if err != nil {
		return nil, false
	}
	re := regexp.MustCompile(regexp.QuoteMeta(marker(slot)) + `([\s\S]*?)` + markStop)
	var out []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out, true
}

func (p *Pages) execute(vw *waitingView) (string, error) {
	var b strings.Builder
	err := p.tmpl.ExecuteTemplate(&b, "waiting.html", vw)
	return b.String(), err
}

func firstTrue(bs []bool) int {
	for i, b := range bs {
		if b {
			return i
		}
	}
	return -1
}

// escapeHTML is html/template's escaping of text and quoted attribute
// values.
func escapeHTML(b *bytes.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(r)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// escapeURLAttr is html/template's for a URL attribute holding a path:
// bytes outside the characters a URL may hold are percent-encoded, and a
// '%' too unless it starts an escape already made; then the result is
// escaped as an attribute value.
func escapeURLAttr(b *bytes.Buffer, s string) {
	var u strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if urlKeeps(c) || (c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			u.WriteByte(c)
			continue
		}
		fmt.Fprintf(&u, "%%%02x", c)
	}
	escapeHTML(b, u.String())
}

func urlKeeps(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func escapeVerbatim(b *bytes.Buffer, s string) { b.WriteString(s) }
