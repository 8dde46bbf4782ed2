package pattern_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom/pattern"
)

func TestParsePath(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path, names, err string
		spec             int
	}{
		{"/events/", "[]", "", 8},
		{"/events/{id}/", "[id]", "", 10},
		{"/v/{venue}/s/{show}", "[venue show]", "", 8},
		{"/Events/{id}", "[id]", "", 9},
		{"/events/{id", "", `"{" without its "}"`, 0},
		{"/events/id}/", "", `"}" without its "{"`, 0},
		{"/events/x{id}/", "", "whole segment", 0},
		{"/events/{id}x/", "", "whole segment", 0},
		{"{id}/", "", "whole segment", 0},
		{"/events/{Id}/", "", "parameter name", 0},
		{"/events/{}/", "", "parameter name", 0},
		{"/events/{1d}/", "", "parameter name", 0},
		{"/a/{id}/b/{id}/", "", "names {id} twice", 0},
	} {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			p, err := pattern.ParsePath(tt.path)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("ParsePath(%q): %v", tt.path, err)
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.path)) {
					t.Fatalf("ParsePath(%q) = %v, want %q and the path", tt.path, err, tt.err)
				}
				return
			}
			if got := fmt.Sprint(p.Names()); got != tt.names || p.Specificity() != tt.spec || p.Literal() != (tt.names == "[]") {
				t.Fatalf("ParsePath(%q): names %s specificity %d, want %s %d", tt.path, got, p.Specificity(), tt.names, tt.spec)
			}
		})
	}
}

func TestPath_Match(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pat, path, values string
		ok, refused       bool
	}{
		{"/events/{id}/", "/events/123/seats", "[123]", true, false},
		{"/events/{id}/", "/events/123", "[123]", true, false},
		{"/events/{id}/", "/EVENTS/AbC-x_9/", "[abc-x_9]", true, false},
		{"/events/{id}/", "/events/", "[]", false, false},
		{"/events/{id}/", "/events//", "[]", false, false},
		{"/events/{id}/", "/other/1/", "[]", false, false},
		{"/events/{id}/", "/events/123.json", "[]", true, true},
		{"/events/{id}/", "/events/" + strings.Repeat("a", 64), "[" + strings.Repeat("a", 64) + "]", true, false},
		{"/events/{id}/", "/events/" + strings.Repeat("a", 65), "[]", true, true},
		{"/events/{id}/", "/events/caf\u00e9/", "[]", true, true},
		{"/v/{venue}/s/{show}", "/v/Hall/s/42/x", "[hall 42]", true, false},
		{"/v/{venue}/s/{show}", "/v/hall/t/42", "[]", false, false},
		{"/events/", "/Events", "[]", true, false},
		{"/events/", "/event", "[]", false, false},
	} {
		t.Run(tt.pat+tt.path, func(t *testing.T) {
			t.Parallel()
			p, err := pattern.ParsePath(tt.pat)
			if err != nil {
				t.Fatal(err)
			}
			values, ok, refused := p.Match(tt.path)
			if fmt.Sprint(values) != tt.values || ok != tt.ok || refused != tt.refused {
				t.Fatalf("Match(%q) = %v %t %t, want %s %t %t", tt.path, values, ok, refused, tt.values, tt.ok, tt.refused)
			}
		})
	}
}

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tmpl, names, err string
	}{
		{"", "[]", ""},
		{"plain", "[]", ""},
		{"event-{id}", "[id]", ""},
		{"{venue}-{show}", "[venue show]", ""},
		{"{venue}{show}", "[venue show]", ""},
		{"{id}-{id}", "[id]", ""},
		{"Waitroom_Event-{id}", "[id]", ""}, // a cookie name's prefix is literal text
		{"event-{id", "", `"{" without its "}"`},
		{"event-id}", "", `"}" without its "{"`},
		{"a}b{id}", "", `"}" without its "{"`},
		{"event-{Id}", "", "parameter name"},
		{"event-{}", "", "parameter name"},
		{"event-{a{b}", "", "parameter name"},
	} {
		t.Run(tt.tmpl, func(t *testing.T) {
			t.Parallel()
			p, err := pattern.ParseTemplate(tt.tmpl)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("ParseTemplate(%q): %v", tt.tmpl, err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("ParseTemplate(%q) = %v, want %q", tt.tmpl, err, tt.err)
			case tt.err == "" && fmt.Sprint(p.Names()) != tt.names:
				t.Fatalf("ParseTemplate(%q).Names() = %v, want %s", tt.tmpl, p.Names(), tt.names)
			}
		})
	}
}

func params(kv ...string) []pattern.Param {
	var ps []pattern.Param
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, pattern.Param{Name: kv[i], Value: kv[i+1]})
	}
	return ps
}

func TestTemplate_Fill(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tmpl   string
		params []pattern.Param
		want   string
	}{
		{"{venue}-{show}", params("show", "42", "venue", "hall"), "hall-42"},
		{"plain", nil, "plain"},
		{"event-{id}", params("id", "7", "id", "8"), "event-7"},
		{"{id}-{id}", params("id", "7"), "7-7"},
		{"event-{id}", nil, "event-{id}"}, // no value: left as written
	} {
		p, err := pattern.ParseTemplate(tt.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Fill(tt.params); got != tt.want {
			t.Errorf("%q.Fill(%v) = %q, want %q", tt.tmpl, tt.params, got, tt.want)
		}
	}
	if got := (pattern.Template{}).Fill(nil); got != "" {
		t.Errorf("the zero Template fills as %q", got)
	}
}
