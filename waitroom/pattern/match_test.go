package pattern_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/pattern"
)

func TestTemplate_Match(t *testing.T) {
	t.Parallel()
	long, other := strings.Repeat("y", 40), strings.Repeat("z", 40)
	for _, tt := range []struct {
		tmpl, name, want string // want "" for no match
	}{
		{"event-{id}", "event-123", "[{id 123}]"},
		{"event-{id}", "event-abc-x_9", "[{id abc-x_9}]"},
		{"event-{id}", "event-", ""},
		{"event-{id}", "event-ABC", ""}, // the router lowers every value
		{"event-{id}", "event-1.json", ""},
		{"event-{id}", "event-" + strings.Repeat("a", 64), "[{id " + strings.Repeat("a", 64) + "}]"},
		{"event-{id}", "event-" + strings.Repeat("a", 65), ""},
		{"event-{id}", "lobby-1", ""},
		{"plain", "plain", "[]"},
		{"plain", "plainer", ""},
		{"{venue}-{show}", "hall-42", "[{venue hall} {show 42}]"},
		{"{venue}-{show}", "a-b-c", "[{venue a} {show b-c}]"}, // shortest first
		// The router fills venue "x-yyy…" and show "zzz…": a first value
		// taken shortest without trying longer ones leaves 81 bytes for
		// the second, and the status poll lost the room.
		{"{venue}-{show}", "x-" + long + "-" + other, "[{venue x-" + long + "} {show " + other + "}]"},
		{"{venue}{show}", "ab", "[{venue a} {show b}]"},
		{"{venue}{show}", "a", ""},
		{"{id}-{id}", "7-7", "[{id 7}]"},
		{"{id}-{id}", "7-8", ""}, // the router never fills a repeat with two values
		{"{a}-{b}-{a}", "x-y-z-x-y", "[{a x-y} {b z}]"},
		{"waitroom_event-{id}", "waitroom_event-{id}", ""},
	} {
		t.Run(tt.tmpl+"/"+tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := pattern.ParseTemplate(tt.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.Match(tt.name)
			if s := fmt.Sprint(got); ok != (tt.want != "") || ok && s != tt.want {
				t.Fatalf("Match(%q) = %s %t, want %q", tt.name, s, ok, tt.want)
			}
			if ok && p.Fill(got) != tt.name {
				t.Fatalf("Fill(Match(%q)) = %q", tt.name, p.Fill(got))
			}
			if p.Matches(tt.name) != ok {
				t.Fatalf("Matches(%q) = %t, Match %t", tt.name, !ok, ok)
			}
		})
	}
}

// A name made to make a many-parameter template try every split answers
// at once: failures at a (parameter, position) are remembered.
func TestTemplate_MatchIsNotExponential(t *testing.T) {
	t.Parallel()
	p, err := pattern.ParseTemplate("{a}-{b}-{c}-{d}-{e}-{f}-{g}-{h}!")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(strings.Repeat("x-", 200), "-") + "?"
	if _, ok := p.Match(name); ok {
		t.Fatalf("Match(%q) matched", name)
	}
	q, _ := pattern.ParseTemplate("{a}{b}{c}{d}{a}!")
	if q.Matches(strings.Repeat("x", 300) + "?") {
		t.Fatal("a repeat matched a name it cannot fill")
	}
}

func TestFillText(t *testing.T) {
	t.Parallel()
	ps := params("id", "42", "venue", "hall")
	for _, tt := range []struct{ text, want string }{
		{"Concert {id}", "Concert 42"},
		{"{venue}: {id}, {id}", "hall: 42, 42"},
		{"{{id}}", "{42}"},
		{"Sale {50% off}", "Sale {50% off}"},
		{"{other} {id", "{other} {id"},
		{"}{id}{", "}42{"},
		{"", ""},
	} {
		if got := pattern.FillText(tt.text, ps); got != tt.want {
			t.Errorf("FillText(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	if got := pattern.FillText("Concert {id}", nil); got != "Concert {id}" {
		t.Errorf("FillText without params = %q", got)
	}
}

func TestSet_Has(t *testing.T) {
	t.Parallel()
	s := pattern.NewSet("waitroom_lobby", "waitroom_event-{id}", "waitroom_{venue}-{show}", "site_bad-{id")
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"waitroom_lobby", true},
		{"waitroom_event-123", true},
		{"waitroom_event-", false},
		{"waitroom_event-ABC", false},
		{"waitroom_event-" + strings.Repeat("a", 65), false},
		{"waitroom_event-{id}", false},
		{"waitroom_hall-42", true},
		{"site_bad-{id", true}, // not a template: held as written
		{"site_bad-1", false},
		{"waitroom_prefs", false}, // the site's own cookie
		{"other_event-1", false},
	} {
		if got := s.Has(tt.name); got != tt.want {
			t.Errorf("Has(%q) = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestValidValue(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"123": true, "abc-x_9": true, strings.Repeat("a", pattern.MaxValueLen): true,
		"": false, "ABC": false, "1.json": false, "caf\u00e9": false, "a/b": false,
		strings.Repeat("a", pattern.MaxValueLen+1): false,
	} {
		if pattern.ValidValue(v) != want {
			t.Errorf("ValidValue(%q) = %t", v, !want)
		}
	}
}
