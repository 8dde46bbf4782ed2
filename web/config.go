package web

import (
	"crypto/sha256"
	"fmt"
	"html/template"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// DefaultTitle is the room title used when none is configured. A Korean page
// shows it as "대기실" rather than in English.
const DefaultTitle = "Waiting room"

// Bounds of PageConfig.Refresh. Below a second the status endpoint would carry
// more polls than the site it protects; above five minutes a visitor who is
// admitted may wait longer for the page to notice than the admission lasts.
const (
	MinRefresh = time.Second
	MaxRefresh = 5 * time.Minute
)

// maxTitle keeps the heading of a phone-sized page to a few lines.
const maxTitle = 120

// PageConfig is the `page:` section of a room, as written in YAML. Durations
// are strings with units so that a bare 10 is refused rather than read as 10ns.
type PageConfig struct {
	// Title names the room at the top of the page and in the browser tab.
	// Default "Waiting room"; at most 120 characters.
	Title string `mapstructure:"title" yaml:"title" json:"title"`
	// Locale is the page language when the browser's Accept-Language names
	// neither Korean nor English: "en" (default) or "ko".
	Locale string `mapstructure:"locale" yaml:"locale" json:"locale"`
	// Refresh is how often the page asks for its position near the front
	// of the line: default "5s", from "1s" to "5m".
	Refresh string `mapstructure:"refresh" yaml:"refresh" json:"refresh"`
	// RefreshMax is the longest the server lets a visitor far back wait
	// between polls: default "30s", from Refresh to "5m". The room's
	// abandon_after must be at least twice it.
	RefreshMax string `mapstructure:"refresh_max" yaml:"refresh_max" json:"refresh_max"`
	// Message is a notice shown on the waiting page ("Sales open at 10:00");
	// the admin API can replace it at run time. Default "", at most 500
	// characters.
	Message string `mapstructure:"message" yaml:"message" json:"message"`
	// Template is an HTML file that replaces the built-in waiting page for
	// this room (see loadTemplate for its variables). Default "": built in.
	// It is parsed and test-rendered when the configuration loads, so a
	// mistake is a configuration error naming the file and line.
	Template string `mapstructure:"template" yaml:"template" json:"template"`
	// ClosedHeading and ClosedLead replace the built-in words of the
	// closed page ("The waiting room is closed"): "Sold out" when the site
	// closes the room by "Waitroom-Command: close". Default "": built in.
	// At most 120 and 500 characters.
	ClosedHeading string `mapstructure:"closed_heading" yaml:"closed_heading" json:"closed_heading"`
	ClosedLead    string `mapstructure:"closed_lead" yaml:"closed_lead" json:"closed_lead"`
	// Sound plays a short tone when a visitor's turn comes while the page
	// is in a background tab (the title, a vibration and an opted-in
	// notification say it either way). Default true; false for silence.
	Sound bool `mapstructure:"sound" yaml:"sound" json:"sound"`
}

// DefaultPage returns the defaults every room's page starts from.
func DefaultPage() PageConfig {
	return PageConfig{Title: DefaultTitle, Locale: "en", Refresh: "5s", RefreshMax: "30s", Sound: true}
}

// Page is a validated PageConfig, ready to fill a Waiting.
type Page struct {
	custom      *template.Template
	templateSum [sha256.Size]byte // of the custom template's source
	Message     string
	Title       string
	Locale      string
	Refresh     time.Duration
	RefreshMax  time.Duration
	// ClosedHeading and ClosedLead word the closed page; "" for built in.
	ClosedHeading, ClosedLead string
	// Quiet: no tone when the turn comes in a background tab (Sound
	// false); the zero Page plays it, as the default does.
	Quiet bool
}

// Build parses and checks the config; the error lists every problem.
func (c PageConfig) Build() (Page, error) {
	var pr conf.Problems
	p := Page{Title: c.Title, Locale: c.Locale, Quiet: !c.Sound}
	switch n := utf8.RuneCountInString(c.Title); {
	case strings.TrimSpace(c.Title) == "":
		pr.Add("title", "must not be empty, got %q", c.Title)
	case n > maxTitle:
		pr.Add("title", "must be at most %d characters, got %d", maxTitle, n)
	case !utf8.ValidString(c.Title) || strings.IndexFunc(c.Title, unicode.IsControl) >= 0:
		pr.Add("title", "must be printable UTF-8 text, got %q", c.Title)
	}
	if c.Locale != "en" && c.Locale != "ko" {
		pr.Add("locale", `must be "ko" or "en", got %q`, c.Locale)
	}
	d, err := conf.ParseDuration(c.Refresh)
	switch {
	case err != nil:
		pr.Add("refresh", "%v", err)
	case d < MinRefresh || d > MaxRefresh:
		pr.Add("refresh", "must be from %v to %v, got %q", MinRefresh, MaxRefresh, c.Refresh)
	}
	p.Refresh = d
	dm, err := conf.ParseDuration(c.RefreshMax)
	switch {
	case err != nil:
		pr.Add("refresh_max", "%v", err)
	case dm > MaxRefresh || (p.Refresh >= MinRefresh && p.Refresh <= MaxRefresh && dm < p.Refresh):
		pr.Add("refresh_max", "must be from refresh (%s) to %v, got %q", c.Refresh, MaxRefresh, c.RefreshMax)
	}
	p.RefreshMax = dm
	if err := CheckMessage(c.Message); err != nil {
		pr.Add("message", "%v", err)
	}
	p.Message = c.Message
	if n := utf8.RuneCountInString(c.ClosedHeading); n > maxTitle || !utf8.ValidString(c.ClosedHeading) || strings.IndexFunc(c.ClosedHeading, unicode.IsControl) >= 0 {
		pr.Add("closed_heading", "must be printable UTF-8 text of at most %d characters, got %q", maxTitle, c.ClosedHeading)
	}
	if err := CheckMessage(c.ClosedLead); err != nil {
		pr.Add("closed_lead", "%v", err)
	}
	p.ClosedHeading, p.ClosedLead = c.ClosedHeading, c.ClosedLead
	if c.Template != "" {
		t, sum, err := loadTemplate(c.Template)
		if err != nil {
			pr.Add("template", "%v", err)
		}
		p.custom, p.templateSum = t, sum
	}
	return p, pr.Err()
}

// TemplateSum is the SHA-256 of the room's own template as it was read;
// ok is false without one. A reload compares it to tell a changed file.
func (p Page) TemplateSum() (sum [sha256.Size]byte, ok bool) {
	return p.templateSum, p.custom != nil
}

// MaxMessage bounds an operator's notice, in characters.
const MaxMessage = 500

// CheckMessage (for the config and the admin API) accepts printable UTF-8 text (line breaks allowed) of at
// most MaxMessage characters.
func CheckMessage(m string) error {
	if n := utf8.RuneCountInString(m); n > MaxMessage {
		return fmt.Errorf("must be at most %d characters, got %d", MaxMessage, n)
	}
	if !utf8.ValidString(m) || strings.IndexFunc(m, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }) >= 0 {
		return fmt.Errorf("must be printable UTF-8 text, got %q", m)
	}
	return nil
}
