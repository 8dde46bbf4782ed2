package pattern_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom/pattern"
)

// router is templateRouter of the proxy's tests, plus a route whose room is
// the template room when the router takes it.
func router(t testing.TB, room string) *proxy.Router {
	t.Helper()
	routes := []proxy.RouteConfig{
		{Path: "/", Upstream: "shop"},
		{Path: "/events/", Upstream: "shop", Room: "lobby"},
		{Path: "/events/{id}/", Upstream: "shop", Room: "event-{id}"},
		{Path: "/events/vip/", Upstream: "shop", Room: "vip"},
		{Path: "/v/{venue}/s/{show}", Upstream: "shop", Room: "{venue}-{show}"},
	}
	if rt, err := proxy.NewRouter(append(routes, proxy.RouteConfig{Path: "/f/{venue}/{show}/", Upstream: "shop", Room: room})); err == nil {
		return rt
	}
	rt, err := proxy.NewRouter(routes)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// unambiguous reports a template whose every parameter is followed by a
// byte no value holds, or ends it: only one set of values fills it.
func unambiguous(tmpl string) bool {
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '}' && i+1 < len(tmpl) && (pattern.ValueByte(tmpl[i+1]) || tmpl[i+1] == '{') {
			return false
		}
	}
	return true
}

// agree checks that what the router made of a path, the rooms (a status
// poll's unfill) and the cookie claim read alike: the filled room matches
// its template again, to the router's values where only one set fits, and
// its cookie is the gateway's.
func agree(t *testing.T, r proxy.Route) {
	t.Helper()
	pt, err := pattern.ParseTemplate(r.Template)
	if err != nil {
		t.Fatalf("the router took template %q: %v", r.Template, err)
	}
	got, ok := pt.Match(r.Room)
	if !ok || pt.Fill(got) != r.Room {
		t.Fatalf("the router filled %q as %q (%v); the rooms read %v %t", r.Template, r.Room, r.Params, got, ok)
	}
	if unambiguous(r.Template) {
		for _, p := range got {
			if !slices.Contains(r.Params, p) {
				t.Fatalf("%q from %q: the rooms read %v, the router %v", r.Room, r.Template, got, r.Params)
			}
		}
	}
	if !pattern.NewSet("waitroom_" + r.Template).Has("waitroom_" + r.Room) {
		t.Fatalf("the cookie of %q (from %q) is not claimed", r.Room, r.Template)
	}
}

// TestPattern_RouterRoomsAndCookiesAgree: rooms the router fills are read
// back by the rooms and claimed as cookies, including where the four
// readings of the grammar used to part.
func TestPattern_RouterRoomsAndCookiesAgree(t *testing.T) {
	t.Parallel()
	long, other := strings.Repeat("y", 40), strings.Repeat("z", 40)
	for _, tt := range []struct{ room, path, want string }{
		{"event-{id}", "/events/ABC/", "event-abc"},
		{"{venue}-{show}", "/v/x-" + long + "/s/" + other, "x-" + long + "-" + other},
		{"{venue}{show}", "/f/a/bc/", "abc"},
		{"{show}-{show}", "/f/a/b-c/", "b-c-b-c"},
		{"at-{venue}.{show}", "/f/hall/42/", "at-hall.42"},
	} {
		r, ok := router(t, tt.room).Match("x", tt.path)
		if !ok || r.Room != tt.want {
			t.Fatalf("Match(%q) = %q %t, want %q", tt.path, r.Room, ok, tt.want)
		}
		agree(t, r)
	}
	// The cookie claim took "{id}-{id}" filled with two values, which the
	// router never makes and the rooms never read.
	pt, _ := pattern.ParseTemplate("{show}-{show}")
	if pt.Matches("a-b") || pattern.NewSet("waitroom_{show}-{show}").Has("waitroom_a-b") {
		t.Fatal("a repeated parameter matched two values")
	}
}

// FuzzPattern: a template filled with valid values matches them again
// (Match(Fill(p, v)) == v where only one set of values fits, the same name
// where several do); whatever matches fills back to itself; and a path the
// router fills a room from is read back alike by the rooms and the cookie
// claim. It also holds the router's own promises: a refused match names no
// room, and each value is one lower-case segment of the path.
func FuzzPattern(f *testing.F) {
	for _, s := range [][4]string{
		{"event-{id}", "123", "x", "/events/1/"},
		{"{venue}-{show}", "x-y", "z", "/v/a/s/b"},
		{"{venue}{show}", "a", "b", "/f/a/b/"},
		{"{show}-{show}", "a", "b", "/f/a/b/"},
		{"at-{venue}.{show}", "hall", "42", "/f/HALL/42/"},
		{"{a}-{b}-{c}-{a}", "x-y", strings.Repeat("z", 64), "/events/../1/"},
		{"waitroom_{venue}", "a", "b", "/events/a%2Fb/"},
		{"plain", "a", "b", "/events/\u00e9/"},
		{"{venue", "a", "b", "/events/x;y/z"},
		{"e-{venue}-{show}", "1", "2", "/events/" + strings.Repeat("9", 65)},
		{"{venue}", "a", "b", "/events//"},
		{"{show}", "a", "b", "/EVENTS/AbC/"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, tmpl, v1, v2, raw string) {
		if pt, err := pattern.ParseTemplate(tmpl); err == nil {
			roundTrip(t, tmpl, pt, v1, v2)
			if got, ok := pt.Match(raw); ok && pt.Fill(got) != raw {
				t.Fatalf("%q matched %q as %v, which fills as %q", raw, tmpl, got, pt.Fill(got))
			}
			if pattern.IsTemplate(tmpl) && pattern.NewSet(tmpl).Has(raw) != pt.Matches(raw) {
				t.Fatalf("the set of %q and the template disagree on %q", tmpl, raw)
			}
		}
		clean, err := proxy.CleanPath(raw)
		if err != nil {
			return
		}
		r, ok := router(t, tmpl).Match("x", clean)
		if !ok || r.Template == "" {
			return
		}
		routerPromises(t, clean, r)
		if !r.Refused {
			agree(t, r)
		}
	})
}

// roundTrip fills pt with v1 and v2 in turn, when both are values.
func roundTrip(t *testing.T, tmpl string, pt pattern.Template, v1, v2 string) {
	if !pattern.ValidValue(v1) || !pattern.ValidValue(v2) {
		return
	}
	var want []pattern.Param
	for k, name := range pt.Names() {
		want = append(want, pattern.Param{Name: name, Value: [2]string{v1, v2}[k%2]})
	}
	name := pt.Fill(want)
	got, ok := pt.Match(name)
	if !ok || pt.Fill(got) != name {
		t.Fatalf("%q filled with %v is %q, which matches as %v %t", tmpl, want, name, got, ok)
	}
	if unambiguous(tmpl) && !slices.Equal(got, want) {
		t.Fatalf("%q filled with %v is %q, which matches as %v", tmpl, want, name, got)
	}
	if pattern.IsTemplate(tmpl) && !pattern.NewSet(tmpl).Has(name) {
		t.Fatalf("the set of %q does not hold %q", tmpl, name)
	}
}

func routerPromises(t *testing.T, clean string, r proxy.Route) {
	if r.Refused {
		if r.Room != "" || r.Params != nil {
			t.Fatalf("refused %q yet room %q params %v", clean, r.Room, r.Params)
		}
		return
	}
	for _, p := range r.Params {
		if !pattern.ValidValue(p.Value) || !strings.Contains(strings.ToLower(proxy.MatchPath(clean)), "/"+p.Value) {
			t.Fatalf("%q: param %+v", clean, p)
		}
	}
	if r.Template != "event-{id}" && r.Template != "{venue}-{show}" {
		return
	}
	for _, c := range strings.NewReplacer("event-", "", "-", "", "_", "").Replace(r.Room) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			t.Fatalf("%q: room %q holds %q", clean, r.Room, c)
		}
	}
}
