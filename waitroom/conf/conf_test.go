package conf_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/conf"
)

func TestProblems_NestKeepsEveryLine(t *testing.T) {
	t.Parallel()
	var inner conf.Problems
	inner.Add("max_active", "must be >= 0, got %d", -5)
	inner.Add("tick", "want %q", "1s")
	var outer conf.Problems
	outer.Nest("rooms.concert.", inner.Err())
	outer.Nest("cookie.", errors.Join(errors.New("name: bad"), errors.Join(errors.New("max_age: short"))))
	outer.Nest("nothing.", nil)
	got := conf.Lines("", outer.Err())
	want := []string{
		"rooms.concert.max_active: must be >= 0, got -5",
		`rooms.concert.tick: want "1s"`,
		"cookie.name: bad",
		"cookie.max_age: short",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || outer.Len() != 4 {
		t.Fatalf("got %q, want %q", got, want)
	}
	sentinel := errors.New("inner")
	var chained conf.Problems
	chained.Nest("a.", errors.Join(sentinel, errors.New("other")))
	if !errors.Is(chained.Err(), sentinel) {
		t.Error("Nest dropped the error chain")
	}
	var none conf.Problems
	if none.Err() != nil || conf.Lines("x.", nil) != nil {
		t.Fatal("no problems must be a nil error and no lines")
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    time.Duration
		problem string
	}{
		{"90s", 90 * time.Second, ""},
		{" 2m ", 2 * time.Minute, ""},
		{"90", 0, `with a unit such as "90s"`},
		{"1.5", 0, "with a unit"},
		{"", 0, `got ""`},
		{"soon", 0, `got "soon"`},
		{"-1s", 0, "must not be negative"},
	} {
		got, err := conf.ParseDuration(c.in)
		if c.problem == "" && (err != nil || got != c.want) {
			t.Errorf("%q: got %v, %v; want %v", c.in, got, err, c.want)
		}
		if c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)) {
			t.Errorf("%q: got error %v, want one saying %q", c.in, err, c.problem)
		}
	}
}

func TestProblems_Duration(t *testing.T) {
	t.Parallel()
	var p conf.Problems
	if d := p.Duration("tick", "250ms", time.Millisecond); d != 250*time.Millisecond || p.Len() != 0 {
		t.Fatalf("got %v with %d problems", d, p.Len())
	}
	p.Duration("tick", "0s", time.Millisecond)
	p.Duration("timeout", "0s", time.Nanosecond)
	p.Duration("ttl", "ten", 0)
	got := conf.Lines("", p.Err())
	want := []string{`tick: must be at least 1ms, got "0s"`, `timeout: must be more than 0, got "0s"`, `ttl: want a duration such as "90s" or "2m", got "ten"`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", time.Hour: "1h", 90 * time.Minute: "1h30m", 250 * time.Millisecond: "250ms",
		90 * time.Second: "1m30s", 0: "0s", 2*time.Hour + time.Second: "2h0m1s",
	} {
		if got := conf.Short(d); got != want {
			t.Errorf("Short(%v) = %q, want %q", d, got, want)
		}
	}
}
