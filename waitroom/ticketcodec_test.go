package waitroom

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
)

func TestTicketCodec_RoundTrip(t *testing.T) {
	want := sampleTicket()
	want.Version, want.Until, want.Sealed, want.Start = ticketVersion, 1_800_000_600, 1_800_000_000, 1234
	b, err := ticketCodec{}.Serialize(want)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(want)
	if len(b) >= len(js)/2 {
		t.Errorf("binary ticket of %d bytes, JSON %d: want less than half", len(b), len(js))
	}
	var got Ticket
	if err := (ticketCodec{}).Deserialize(b, &got); err != nil || got != want {
		t.Fatalf("round trip: %+v, %v\nwant %+v", got, err, want)
	}
	anchor := Anchor{Position: 12_345, At: 1_800_000_050, Progress: Progress{Epoch: 1_795_000_000_000_000, Admitted: 9_000, Departed: 41, Pending: 3}}
	for _, tk := range []Ticket{{Entered: 1_800_000_100}, {Entered: 1_800_000_100, Pending: true}, {Anchor: anchor}, {Pending: true, Anchor: anchor}} {
		w := want
		w.Entered, w.Pending, w.Anchor = tk.Entered, tk.Pending, tk.Anchor
		b, err := ticketCodec{}.Serialize(w)
		var got Ticket
		if err == nil {
			err = ticketCodec{}.Deserialize(b, &got)
		}
		if err != nil || got != w {
			t.Fatalf("round trip with Entered or Anchor: %+v, %v\nwant %+v", got, err, w)
		}
	}
}

// Tickets sealed as JSON before the binary form keep their place: an
// upgrade of the gateway loses nobody.
func TestTicketCodec_ReadsJSONTickets(t *testing.T) {
	keys := fixedKeys(7)
	old := securecookie.New(keys.Hash, keys.Block)
	old.SetSerializer(securecookie.JSONEncoder{})
	want := sampleTicket()
	want.Version, want.Sealed = ticketVersion, time.Now().Unix()
	value, err := old.Encode("waitroom_concert", want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testTickets(t, keys).Decode("concert", value)
	if err != nil || got != want {
		t.Fatalf("a JSON ticket: %+v, %v\nwant %+v", got, err, want)
	}
}

func TestTicketCodec_Refuses(t *testing.T) {
	good, _ := ticketCodec{}.Serialize(sampleTicket())
	long := sampleTicket()
	long.Room = string(bytes.Repeat([]byte("r"), 256))
	if _, err := (ticketCodec{}).Serialize(long); err == nil {
		t.Error("a room name of 256 bytes serialized")
	}
	badID := sampleTicket()
	badID.Visitor = "not-a-visitor-id"
	if _, err := (ticketCodec{}).Serialize(badID); err == nil {
		t.Error("a malformed visitor id serialized")
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"unknown form":  append([]byte{0x02}, good[1:]...),
		"cut":           good[:len(good)-1],
		"trailing":      append(append([]byte{}, good...), 0),
		"room too long": {binaryTicket, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x03},
		"entered zero":  append(append([]byte{}, good...), flagEntered, 0),
		"entered cut":   append(append([]byte{}, good...), flagEntered),
		"unknown flag":  append(append([]byte{}, good...), 0x08),
		"anchor zero":   append(append([]byte{}, good...), flagAnchor, 0, 2, 2, 2, 2, 2),
		"anchor cut":    append(append([]byte{}, good...), flagAnchor, 2, 2, 2),
	} {
		var tk Ticket
		if err := (ticketCodec{}).Deserialize(b, &tk); err == nil {
			t.Errorf("%s: decoded %+v", name, tk)
		}
	}
}

func FuzzTicketDeserialize(f *testing.F) {
	good, _ := ticketCodec{}.Serialize(sampleTicket())
	f.Add(good)
	inside := sampleTicket()
	inside.Until, inside.Entered = 1_800_000_600, 1_800_000_000
	entered, _ := ticketCodec{}.Serialize(inside)
	f.Add(entered)
	anchored := sampleTicket()
	anchored.Anchor = Anchor{Position: 500, At: 1_800_000_000, Progress: Progress{Epoch: 1_795_000_000_000_000, Admitted: 70, Departed: 2, Pending: 1}}
	withAnchor, _ := ticketCodec{}.Serialize(anchored)
	f.Add(withAnchor)
	f.Add([]byte(`{"v":1,"id":"AAAAAAAAAAAAAAAAAAAAAA","r":"concert","n":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tk Ticket
		if err := (ticketCodec{}).Deserialize(b, &tk); err != nil || b[0] == '{' {
			return
		}
		// Whatever the binary form reads, it writes and reads back the
		// same (varints need not be minimal: only bytes that passed the
		// HMAC ever get here).
		again, err := ticketCodec{}.Serialize(tk)
		var back Ticket
		if err == nil {
			err = ticketCodec{}.Deserialize(again, &back)
		}
		if err != nil || back != tk {
			t.Fatalf("%x read as %+v, then %+v (%v)", b, tk, back, err)
		}
	})
}
