package web

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// nasty are values that test every escaping the page uses.
var nasty = []string{"", "Concert", "<script>alert(1)</script>", `"quoted" & 'single'`, "a+b=c", "콘서트 예매",
	"\u2028line\u2029", "</title><b>", "javascript:alert(1)", "/x?y=<z>&w='v'", "%zz%41", "\x00nul", "tab\there", "`back`"}

func randomView(rng *rand.Rand) View {
	pick := func() string { return nasty[rng.IntN(len(nasty))] }
	states := []waitroom.AnswerState{waitroom.AnswerWaiting, waitroom.AnswerAdmitted, waitroom.AnswerPaused,
		waitroom.AnswerClosed, waitroom.AnswerPrequeue, waitroom.AnswerHold, waitroom.AnswerChallenge, "bogus"}
	v := sample()
	v.State = states[rng.IntN(len(states))]
	v.Title, v.Message, v.ClosedHeading, v.ClosedLead = pick(), pick(), pick(), pick()
	v.Locale = []string{"en", "ko", "xx"}[rng.IntN(3)]
	v.Position, v.Ahead, v.Behind, v.Line = rng.Int64N(3_000_000)-5, rng.Int64N(3_000_000), rng.Int64N(3_000_000), rng.Int64N(3_000_000)
	v.Progress = rng.Float64()*1.4 - 0.2
	v.ETAKnown = rng.IntN(3) > 0
	v.ETA, v.ETAMax = time.Duration(rng.Int64N(int64(5*time.Hour))), time.Duration(rng.Int64N(int64(6*time.Hour)))
	v.Refresh = time.Duration(rng.IntN(90)) * time.Second
	v.ReturnTo = []string{"/events/1?seat=" + pick(), "//evil.example/", "/", pick()}[rng.IntN(4)]
	v.LeaveURL = []string{"/.waitroom/leave?room=concert&return_to=" + pick(), "", "https://evil.example/", pick()}[rng.IntN(4)]
	v.StatusURL = []string{"/.waitroom/status?room=" + pick(), "", "//evil"}[rng.IntN(3)]
	if rng.IntN(4) == 0 {
		v.Challenge = &ChallengeBody{Prefix: pick(), Bits: rng.IntN(30)}
	}
	return v
}

// The pages fastWaiting writes are the template's, byte for byte, for
// views of every state, language and value that needs escaping.
func TestFastPage_MatchesTemplate(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rng := rand.New(rand.NewPCG(7, 11))
	fast := 0
	for i := range 3000 {
		v := randomView(rng)
		lang := []string{"en", "ko"}[rng.IntN(2)]
		vw := p.view(lang, v)
		var want bytes.Buffer
		if err := p.tmpl.ExecuteTemplate(&want, "waiting.html", vw); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if !p.fastWaiting(&got, &vw) {
			continue
		}
		fast++
		if got.String() != want.String() {
			t.Fatalf("view %d (%+v):\nfast page differs from the template's at byte %d:\n got %q\nwant %q", i, v,
				firstDiff(got.String(), want.String()), around(got.String(), firstDiff(got.String(), want.String())),
				around(want.String(), firstDiff(got.String(), want.String())))
		}
	}
	if fast < 2000 {
		t.Errorf("only %d of 3000 pages came from a plan", fast)
	}
}

func TestFastPage_SlotNames(t *testing.T) {
	if pageSlots[slotNext] != "Next" || pageSlots[slotLeaveTo] != "LeaveTo" || pageSlots[slotMessage] != "Message" {
		t.Errorf("slot constants name %s, %s, %s", pageSlots[slotNext], pageSlots[slotLeaveTo], pageSlots[slotMessage])
	}
}

// Every shape a waiting or admitted visitor sees has a plan, so the
// common pages never walk the template.
func TestFastPage_CommonShapesPlanned(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, lang := range []string{"en", "ko"} {
		for _, state := range []waitroom.AnswerState{waitroom.AnswerWaiting, waitroom.AnswerAdmitted, waitroom.AnswerPaused, waitroom.AnswerClosed} {
			for _, msg := range []string{"", "Back at 10:00"} {
				v := sample()
				v.State, v.Message = state, msg
				vw := p.view(lang, v)
				var b bytes.Buffer
				if !p.fastWaiting(&b, &vw) {
					t.Errorf("%s %s message %q: no plan", lang, state, msg)
				}
			}
		}
	}
	// And the answer goes out through it.
	w := get(t, p, sample(), "Accept", "text/html")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `<strong id="wr-pos">1,234</strong>`) {
		t.Errorf("page: %d %.300s", w.Code, w.Body.String())
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(s string, i int) string { return s[max(0, i-60):min(len(s), i+60)] }

// FuzzFastPage: whatever the values, the page from a plan is the
// template's, byte for byte.
func FuzzFastPage(f *testing.F) {
	for _, s := range nasty {
		f.Add(s, s, s, "/events/1?x="+s, "en")
	}
	p, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, title, message, closed, returnTo, lang string) {
		v := sample()
		v.Title, v.Message, v.ClosedHeading, v.ReturnTo = title, message, closed, returnTo
		v.LeaveURL = "/.waitroom/leave?room=concert&return_to=" + returnTo
		for _, state := range []waitroom.AnswerState{waitroom.AnswerWaiting, waitroom.AnswerAdmitted, waitroom.AnswerClosed} {
			v.State = state
			vw := p.view(map[bool]string{true: "ko", false: "en"}[lang == "ko"], v)
			var want, got bytes.Buffer
			if err := p.tmpl.ExecuteTemplate(&want, "waiting.html", vw); err != nil {
				t.Fatal(err)
			}
			if p.fastWaiting(&got, &vw) && got.String() != want.String() {
				i := firstDiff(got.String(), want.String())
				t.Fatalf("%s: fast page differs at byte %d:\n got %q\nwant %q", state, i, around(got.String(), i), around(want.String(), i))
			}
		}
	})
}
