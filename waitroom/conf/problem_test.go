package conf_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// Kinds and keys survive Nest and errors.Join, and the text is the one a
// file's problems always had.
func TestProblems_KindSurvivesNestAndJoin(t *testing.T) {
	t.Parallel()
	var route conf.Problems
	route.Add("upstream", "unknown upstream %q", "shop")
	var file conf.Problems
	file.Nest("routes[3].", route.Err())
	file.Conflict("routes[4]", "same host and path as routes[%d]", 0)
	file.Nest("rooms.x.", errors.New("challenge_bits: must be 0..24, got 30"))
	joined := errors.Join(errors.New("listen: bad"), file.Err())
	got := conf.Split(joined)
	want := []struct{ key, text string }{
		{"", "listen: bad"},
		{"routes[3].upstream", `routes[3].upstream: unknown upstream "shop"`},
		{"routes[4]", "routes[4]: same host and path as routes[0]"},
		{"rooms.x", "rooms.x.challenge_bits: must be 0..24, got 30"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems %q, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].Key() != w.key || got[i].Error() != w.text {
			t.Errorf("problem %d: key %q, text %q; want %q, %q", i, got[i].Key(), got[i].Error(), w.key, w.text)
		}
	}
	kinds := fmt.Sprint(got[0].Kind, got[1].Kind, got[2].Kind, got[3].Kind)
	if kinds != fmt.Sprint(conf.Invalid, conf.Invalid, conf.Conflict, conf.Invalid) {
		t.Errorf("kinds %s, want only the route collision a conflict", kinds)
	}
	if got[2].Message != "same host and path as routes[0]" {
		t.Errorf("message %q", got[2].Message)
	}
}

// errors.As finds a typed problem in a joined error, and its kind is read
// without its words.
func TestProblems_As(t *testing.T) {
	t.Parallel()
	var p conf.Problems
	p.Conflict("path", "taken")
	var outer conf.Problems
	outer.Nest("routes[1].", p.Err())
	var got conf.Problem
	if !errors.As(outer.Err(), &got) || got.Kind != conf.Conflict || got.Key() != "routes[1].path" {
		t.Fatalf("errors.As: %+v (key %q)", got, got.Key())
	}
	if conf.Conflict.String() != "conflict" || conf.Invalid.String() != "invalid" {
		t.Errorf("kind names: %s, %s", conf.Conflict, conf.Invalid)
	}
}

// Under undoes Nest: the key comes off as a prefix, never from the
// message, and an element's index cannot match a longer one.
func TestProblem_Under(t *testing.T) {
	t.Parallel()
	var p conf.Problems
	p.Conflict("routes[7]", "same host and path as routes[0]")
	p.Add("routes[70].path", "bad")
	p.Nest("rooms.x.", errors.New("tick: short"))
	all := conf.Split(p.Err())
	var moved conf.Problems
	for _, pr := range all {
		if rel, ok := pr.Under("routes[7]"); ok {
			moved.Nest("routes[2]", rel)
		}
		if rel, ok := pr.Under("rooms.x."); ok {
			moved.Nest("", rel)
		}
	}
	got := conf.Split(moved.Err())
	if fmt.Sprint(conf.Lines("", moved.Err())) != "[routes[2]: same host and path as routes[0] tick: short]" {
		t.Fatalf("got %q", conf.Lines("", moved.Err()))
	}
	if got[0].Kind != conf.Conflict || got[0].Key() != "routes[2]" || got[1].Key() != "" {
		t.Fatalf("got %+v", got)
	}
}
