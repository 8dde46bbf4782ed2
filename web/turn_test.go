package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// The built-in page carries the notification opt-in hidden (the script
// shows it where the browser has notifications), worded in the visitor's
// language, and its script carries turn.js.
func TestWaiting_TurnOptIn(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for lang, label := range map[string]string{"en": "Notify me when it&#39;s my turn", "ko": "내 차례가 되면 알림 받기"} {
		body := get(t, p, sample(), "Accept-Language", lang).Body.String()
		for _, want := range []string{`<p class="notify" id="wr-notify" hidden>`, `aria-pressed="false">` + label + `</button>`, `id="wr-notify-state" role="status"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s page lacks %q", lang, want)
			}
		}
	}
	turn, err := os.ReadFile("static/turn.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(p.js), string(turn)) || !strings.Contains(string(p.js), "window.waitroomTurn") {
		t.Error("the page's script does not start with turn.js")
	}
	if !strings.Contains(string(p.client.body), string(turn)) {
		t.Error("client.js is served without turn.js")
	}
}

// page.sound: false reaches the page's data as "quiet", which turn.js
// reads to play no tone; the default page says nothing of it.
func TestResponder_QuietRoom(t *testing.T) {
	t.Parallel()
	loud, quiet := DefaultPage(), DefaultPage()
	quiet.Sound = false
	pl, err := loud.Build()
	if err != nil {
		t.Fatal(err)
	}
	pq, err := quiet.Build()
	if err != nil {
		t.Fatal(err)
	}
	rs := NewResponder(newPages(t), map[string]Page{"loud": pl, "quiet": pq})
	for room, want := range map[string]bool{"loud": false, "quiet": true} {
		w := httptest.NewRecorder()
		rs.Waiting(w, httptest.NewRequest(http.MethodGet, "/events/1", nil), waitroom.Answer{Room: room, State: "waiting",
			Decision: waitroom.Decision{State: waitroom.StateWaiting, Position: 7, Line: 9}})
		if got := strings.Contains(w.Body.String(), `"quiet":true`); got != want {
			t.Errorf("room %s: quiet in the page's data %v, want %v", room, got, want)
		}
	}
}
