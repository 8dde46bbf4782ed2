package waitroom

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The room cookie takes the __Host- prefix exactly when browsers would
// accept it: secure, no domain, path /.
func TestTickets_HostPrefixWhenSecureWithoutDomain(t *testing.T) {
	t.Parallel()
	k := testTickets(t).cfg
	for _, c := range []struct {
		secure bool
		domain string
		want   string
	}{
		{true, "", "__Host-waitroom_concert"},
		{true, "example.com", "waitroom_concert"},
		{false, "", "waitroom_concert"},
	} {
		cfg := k
		cfg.Secure, cfg.Domain = c.secure, c.domain
		tk := &Tickets{cfg: cfg}
		if got := tk.CookieName("concert"); got != c.want {
			t.Errorf("secure %v domain %q: %q, want %q", c.secure, c.domain, got, c.want)
		}
		w := httptest.NewRecorder()
		tk.SetCookie(w, "concert", "v")
		set := w.Result().Cookies()[0]
		if set.Name != c.want || set.Path != "/" || set.Domain != c.domain || set.Secure != c.secure {
			t.Errorf("Set-Cookie %q", w.Header().Get("Set-Cookie"))
		}
	}
}

// A ticket in the old unprefixed name is read (and marked for moving) only
// when no __Host- cookie came and it was sealed before the settings were
// built; a fresher copy can only have been tossed in by a sibling.
func TestTickets_OldNameReadOnce(t *testing.T) {
	t.Parallel()
	tk := testTickets(t)
	tk.cfg.Secure = true
	tk.built = time.Now().Unix()
	value, err := tk.Encode(Ticket{Visitor: NewVisitorID(), Room: "concert", Issued: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	read := func(cookie string) Presented {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Cookie", cookie)
		return tk.Read(r, "concert")
	}
	if p := read("waitroom_concert=" + value); !p.Valid || !p.Legacy || !p.Cookie {
		t.Fatalf("the old name: valid %v, legacy %v, cookie %v", p.Valid, p.Legacy, p.Cookie)
	}
	if p := read("__Host-waitroom_concert=" + value + "; waitroom_concert=x"); !p.Valid || p.Legacy {
		t.Fatalf("both names: valid %v, legacy %v", p.Valid, p.Legacy)
	}
	tk.built -= 10
	if p := read("waitroom_concert=" + value); p.Valid || !p.Refused || p.Rejection != RejectOther {
		t.Fatalf("a ticket sealed since, in the old name: valid %v, refused %v (%s)", p.Valid, p.Refused, p.Rejection)
	}
	w := httptest.NewRecorder()
	tk.migrate(w, "concert", value)
	got := strings.Join(w.Header()["Set-Cookie"], "\n")
	if !strings.Contains(got, "__Host-waitroom_concert="+value) || !strings.Contains(got, "waitroom_concert=; Path=/; Max-Age=0") {
		t.Fatalf("migrate wrote %d Set-Cookie lines without the moved and the dropped cookie", len(w.Header()["Set-Cookie"]))
	}
	if names := tk.CookieNames("concert"); len(names) != 2 || names[1] != "waitroom_concert" {
		t.Fatalf("CookieNames: %v", names)
	}
}
