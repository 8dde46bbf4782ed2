package web

import (
	"strings"
	"testing"
	"time"
)

func TestPageConfig_Problems(t *testing.T) {
	t.Parallel()
	with := func(edit func(*PageConfig)) PageConfig {
		c := DefaultPage()
		edit(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  PageConfig
		want []string // substrings of the error; none means valid
	}{
		{"default", DefaultPage(), nil},
		{"korean", with(func(c *PageConfig) { c.Locale, c.Title = "ko", "콘서트 예매 대기실" }), nil},
		{"bounds", with(func(c *PageConfig) { c.Refresh = "1s" }), nil},
		{"upper bound", with(func(c *PageConfig) { c.Refresh, c.RefreshMax = "5m", "5m" }), nil},
		{"refresh_max below refresh", with(func(c *PageConfig) { c.Refresh, c.RefreshMax = "10s", "5s" }), []string{`refresh_max: must be from refresh (10s) to 5m0s, got "5s"`}},
		{"refresh_max too slow", with(func(c *PageConfig) { c.RefreshMax = "1h" }), []string{`refresh_max: must be from refresh (5s) to 5m0s, got "1h"`}},
		{"message", with(func(c *PageConfig) { c.Message = "Doors open at 10:00.\n문은 10시에 열립니다." }), nil},
		{"long message", with(func(c *PageConfig) { c.Message = strings.Repeat("x", 501) }), []string{"message: must be at most 500 characters, got 501"}},
		{"control in message", with(func(c *PageConfig) { c.Message = "a\x07b" }), []string{"message: must be printable UTF-8 text"}},
		{"refresh_max bare", with(func(c *PageConfig) { c.RefreshMax = "30" }), []string{`refresh_max: want a duration with a unit`}},
		{"locale", with(func(c *PageConfig) { c.Locale = "fr" }), []string{`locale: must be "ko" or "en", got "fr"`}},
		{"locale case", with(func(c *PageConfig) { c.Locale = "KO" }), []string{`locale: must be "ko" or "en", got "KO"`}},
		{"bare number", with(func(c *PageConfig) { c.Refresh = "10" }), []string{`refresh: want a duration with a unit such as "10s", got "10"`}},
		{"empty refresh", with(func(c *PageConfig) { c.Refresh = "" }), []string{`refresh: want a duration`}},
		{"garbage refresh", with(func(c *PageConfig) { c.Refresh = "soon" }), []string{`refresh: want a duration such as "90s" or "2m", got "soon"`}},
		{"too fast", with(func(c *PageConfig) { c.Refresh = "500ms" }), []string{`refresh: must be from 1s to 5m0s, got "500ms"`}},
		{"too slow", with(func(c *PageConfig) { c.Refresh = "10m" }), []string{`refresh: must be from 1s to 5m0s, got "10m"`}},
		{"negative", with(func(c *PageConfig) { c.Refresh = "-5s" }), []string{`refresh: must not be negative, got "-5s"`}},
		{"empty title", with(func(c *PageConfig) { c.Title = "  " }), []string{`title: must not be empty, got "  "`}},
		{"long title", with(func(c *PageConfig) { c.Title = strings.Repeat("가", 121) }), []string{"title: must be at most 120 characters, got 121"}},
		{"control in title", with(func(c *PageConfig) { c.Title = "a\x00b" }), []string{`title: must be printable UTF-8 text, got "a\x00b"`}},
		{"every problem at once", PageConfig{Locale: "de", Refresh: "3", RefreshMax: "30s"}, []string{"title:", "locale:", "refresh:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.cfg.Build()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Build() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Build() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Build() = %q, want it to contain %q", err, w)
				}
			}
			if n := len(strings.Split(err.Error(), "\n")); n != len(tt.want) {
				t.Errorf("Build() listed %d problems, want %d: %q", n, len(tt.want), err)
			}
		})
	}
}

func TestPageConfig_Build(t *testing.T) {
	t.Parallel()
	p, err := PageConfig{Title: "Concert", Locale: "ko", Refresh: "10s", RefreshMax: "1m", Sound: true}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p != (Page{Title: "Concert", Locale: "ko", Refresh: 10 * time.Second, RefreshMax: time.Minute}) {
		t.Errorf("Build() = %+v", p)
	}
	// page.sound: false makes the page quiet; the default plays the tone.
	c := DefaultPage()
	if p, err := c.Build(); err != nil || p.Quiet {
		t.Errorf("the default page: Quiet %v, %v", p.Quiet, err)
	}
	c.Sound = false
	if p, err := c.Build(); err != nil || !p.Quiet {
		t.Errorf("page.sound false: Quiet %v, %v", p.Quiet, err)
	}
}
