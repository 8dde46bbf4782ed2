package waitroom

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
)

func testTickets(tb testing.TB, keys ...KeyPair) *Tickets {
	tb.Helper()
	if len(keys) == 0 {
		keys = []KeyPair{fixedKeys(1)}
	}
	tk, err := NewTickets(Cookie{Name: "waitroom", SameSite: http.SameSiteLaxMode, MaxAge: time.Hour}, keys)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

func fixedKeys(seed byte) KeyPair {
	h, b := make([]byte, 32), make([]byte, 32)
	for i := range h {
		h[i], b[i] = seed+byte(i), seed*3+byte(i)
	}
	return KeyPair{Hash: h, Block: b}
}

func sampleTicket() Ticket {
	return Ticket{Visitor: NewVisitorID(), Room: "concert", Number: 1_700_000_000_000_042, Issued: time.Now().Unix(), Start: 7}
}

func TestTickets_RoundTrip(t *testing.T) {
	t.Parallel()
	codec := testTickets(t)
	in := sampleTicket()
	v, err := codec.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.Decode("concert", v)
	if err != nil {
		t.Fatal(err)
	}
	in.Version, in.Sealed = ticketVersion, out.Sealed
	if out != in || time.Now().Unix()-out.Sealed > 1 {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	if strings.Contains(v, in.Visitor) {
		t.Fatal("the encoded ticket shows the visitor id in clear text")
	}
}

func TestTickets_Refused(t *testing.T) {
	t.Parallel()
	codec := testTickets(t)
	good, err := codec.Encode(sampleTicket())
	if err != nil {
		t.Fatal(err)
	}
	other := sampleTicket()
	other.Room = "festival"
	otherRoom, _ := codec.Encode(other)
	foreign, _ := testTickets(t, fixedKeys(9)).Encode(sampleTicket())
	tampered := []byte(good)
	tampered[len(tampered)/2] ^= 0x01
	cases := map[string]string{
		"empty":        "",
		"garbage":      "not-a-ticket",
		"truncated":    good[:len(good)-5],
		"tampered":     string(tampered),
		"other room":   otherRoom,
		"foreign keys": foreign,
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tk, err := codec.Decode("concert", v); err == nil {
				t.Fatalf("decoded %+v from a %s ticket", tk, name)
			}
		})
	}
}

func TestTickets_Rotation(t *testing.T) {
	t.Parallel()
	old, cur := fixedKeys(1), fixedKeys(2)
	v, err := testTickets(t, old).Encode(sampleTicket())
	if err != nil {
		t.Fatal(err)
	}
	rotated := testTickets(t, cur, old)
	if _, err := rotated.Decode("concert", v); err != nil {
		t.Fatalf("a ticket under the second key pair must still decode: %v", err)
	}
	fresh, _ := rotated.Encode(sampleTicket())
	if _, err := testTickets(t, cur).Decode("concert", fresh); err != nil {
		t.Fatalf("the first key pair must encode: %v", err)
	}
	if _, err := testTickets(t, cur).Decode("concert", v); err == nil {
		t.Fatal("a ticket under a removed key pair decoded")
	}
}

func TestTickets_Expired(t *testing.T) {
	t.Parallel()
	k := fixedKeys(1)
	sc := securecookie.New(k.Hash, k.Block)
	sc.SetSerializer(securecookie.JSONEncoder{})
	tk := sampleTicket()
	tk.Version = ticketVersion
	// securecookie stamps the time itself; a codec with a one-second MaxAge
	// sees a two-second-old value as expired.
	v, err := sc.Encode("waitroom_concert", tk)
	if err != nil {
		t.Fatal(err)
	}
	short, err := NewTickets(Cookie{Name: "waitroom", MaxAge: time.Second}, []KeyPair{k})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := short.Decode("concert", v); err == nil {
		t.Fatal("an expired ticket decoded")
	}
}

func TestTickets_Read(t *testing.T) {
	t.Parallel()
	codec := testTickets(t)
	in := sampleTicket()
	v, _ := codec.Encode(in)

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set(TokenHeader, v)
	if p := codec.Read(r, "concert"); !p.Valid || p.Ticket.Visitor != in.Visitor || p.Raw != v || p.Cookie {
		t.Fatalf("header token: %+v", p)
	}
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: "waitroom_concert", Value: v})
	if p := codec.Read(r, "concert"); !p.Valid || p.Ticket.Visitor != in.Visitor || !p.Cookie {
		t.Fatalf("cookie ticket: %+v", p)
	}
	if p := codec.Read(r, "festival"); p.Valid || p.Cookie {
		t.Fatal("a cookie of one room was read for another")
	}
	r.Header.Set(TokenHeader, "garbage")
	if p := codec.Read(r, "concert"); !p.Valid {
		t.Fatal("a bad header must fall back to the cookie")
	}
	// A sibling domain's cookie of the same name, sent first, must not
	// hide ours.
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", "waitroom_concert=planted; waitroom_concert="+v)
	if p := codec.Read(r, "concert"); !p.Valid || p.Ticket.Visitor != in.Visitor {
		t.Fatalf("second cookie of the name not tried: %+v", p)
	}
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", "waitroom_concert=planted")
	if p := codec.Read(r, "concert"); p.Valid || !p.Refused || !p.Cookie {
		t.Fatalf("a bad cookie: %+v", p)
	}
}

func TestTickets_Cookie(t *testing.T) {
	t.Parallel()
	codec := testTickets(t)
	w := httptest.NewRecorder()
	codec.SetCookie(w, "concert", "v")
	c := w.Result().Cookies()[0]
	if c.Name != "waitroom_concert" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge != 3600 || c.Path != "/" {
		t.Fatalf("cookie attributes: %+v", c)
	}
}

func FuzzTicketDecode(f *testing.F) {
	codec := testTickets(f)
	good, _ := codec.Encode(sampleTicket())
	other := sampleTicket()
	other.Room = "festival"
	otherRoom, _ := codec.Encode(other)
	for _, s := range []string{good, otherRoom, good[:len(good)/2], good + "x", "", "a|b|c", strings.Repeat("A", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tk, err := codec.Decode("concert", v)
		if err != nil {
			return
		}
		// Decoding without a valid MAC is impossible; whatever decodes must
		// be a well-formed ticket of this room that encodes again.
		if tk.Room != "concert" || !validVisitorID(tk.Visitor) || tk.Version != ticketVersion {
			t.Fatalf("decoded a malformed ticket %+v", tk)
		}
		again, err := codec.Encode(tk)
		if err != nil {
			t.Fatal(err)
		}
		back, err := codec.Decode("concert", again)
		back.Sealed = tk.Sealed // Encode stamps the time of sealing
		if err != nil || back != tk {
			t.Fatalf("round trip: %+v, %v", back, err)
		}
	})
}

// Read says why a ticket was refused, as the metrics count it: an
// authentic ticket sealed longer than max_age ago is "expired", one of
// another room "other", anything that fails its MAC "invalid".
func TestTickets_RejectionReasons(t *testing.T) {
	t.Parallel()
	k := fixedKeys(1)
	codec := testTickets(t, k)
	sc := securecookie.New(k.Hash, k.Block)
	sc.SetSerializer(ticketCodec{})
	old := sampleTicket()
	old.Version, old.Sealed = ticketVersion, time.Now().Add(-2*time.Hour).Unix()
	expired, err := sc.Encode("waitroom_concert", old)
	if err != nil {
		t.Fatal(err)
	}
	// Authentic (signed for this room) but of a format version this build
	// does not read.
	future := sampleTicket()
	future.Version, future.Sealed = ticketVersion+1, time.Now().Unix()
	unusable, err := sc.Encode("waitroom_concert", future)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := codec.Encode(sampleTicket())
	for value, want := range map[string]string{
		expired:              RejectExpired,
		unusable:             RejectOther,
		"not-a-ticket":       RejectInvalid,
		fresh[:len(fresh)-4]: RejectInvalid,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(TokenHeader, value)
		if p := codec.Read(r, "concert"); p.Valid || !p.Refused || p.Rejection != want {
			t.Errorf("%.20s…: refused %v for %q, want %q", value, p.Refused, p.Rejection, want)
		}
	}
}

// BenchmarkTicketsEncode is the cost of sealing a waiting ticket with its
// anchor: what a gateway pays when a poll's answer moves the visitor
// (nextAnchor) or renews its seal (renewAnchor).
func BenchmarkTicketsEncode(b *testing.B) {
	tickets, err := NewTickets(Cookie{Name: "waitroom", MaxAge: time.Hour}, []KeyPair{GenerateKeyPair()})
	if err != nil {
		b.Fatal(err)
	}
	tk := Ticket{Version: ticketVersion, Visitor: NewVisitorID(), Room: "concert", Number: 123456,
		Anchor: Anchor{Position: 5000, At: 1, Progress: Progress{Epoch: 1, Admitted: 1000}}}
	for b.Loop() {
		if _, err := tickets.Encode(tk); err != nil {
			b.Fatal(err)
		}
	}
}
