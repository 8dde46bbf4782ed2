package waitroom

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// ticketCodec is the securecookie serializer of tickets: a compact binary
// form, a tenth of the cost of JSON to read, which every request with a
// ticket pays. It still reads the JSON tickets issued before it, so an
// upgrade loses nobody's place.
//
// The binary form: the byte binaryTicket, then uvarint version, the 16
// bytes of the visitor id, uvarint length and bytes of the room, then
// varints number, issued, start, until and sealed, then one byte of flags
// when any is set: flagPending, flagEntered, which a varint of Entered
// (above 0) follows, and flagAnchor, which six varints of the Anchor
// follow (its position above 0, then at, epoch, admitted, departed and
// pending). JSON always starts with '{', so the first byte tells
// the two apart; a ticket without the flags byte (older, or with none set)
// reads as placed, not inside.
type ticketCodec struct{}

const (
	binaryTicket = 0x01
	visitorBytes = 16
	maxRoomBytes = 255
	flagPending  = 0x01
	flagEntered  = 0x02
	flagAnchor   = 0x04
)

// Serialize implements securecookie.Serializer.
func (ticketCodec) Serialize(src any) ([]byte, error) {
	var tk Ticket
	switch v := src.(type) {
	case Ticket:
		tk = v
	case *Ticket:
		tk = *v
	default:
		return nil, fmt.Errorf("serializing ticket: want a Ticket, got %T", src)
	}
	if len(tk.Room) > maxRoomBytes {
		return nil, fmt.Errorf("serializing ticket: room name of %d bytes, at most %d", len(tk.Room), maxRoomBytes)
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64*7+visitorBytes+len(tk.Room))
	b = append(b, binaryTicket)
	b = binary.AppendUvarint(b, uint64(tk.Version))
	id, err := base64.RawURLEncoding.AppendDecode(b, []byte(tk.Visitor))
	if err != nil || len(id)-len(b) != visitorBytes {
		return nil, errors.New("serializing ticket: the visitor id is not 16 bytes in base64url")
	}
	b = binary.AppendUvarint(id, uint64(len(tk.Room)))
	b = append(b, tk.Room...)
	for _, n := range [...]int64{tk.Number, tk.Issued, tk.Start, tk.Until, tk.Sealed} {
		b = binary.AppendVarint(b, n)
	}
	var flags byte
	if tk.Pending {
		flags |= flagPending
	}
	if tk.Entered > 0 {
		flags |= flagEntered
	}
	a := tk.Anchor
	if a.Position > 0 {
		flags |= flagAnchor
	}
	if flags != 0 {
		b = append(b, flags)
	}
	if tk.Entered > 0 {
		b = binary.AppendVarint(b, tk.Entered)
	}
	if a.Position > 0 {
		p := a.Progress
		for _, n := range [...]int64{a.Position, a.At, p.Epoch, p.Admitted, p.Departed, p.Pending} {
			b = binary.AppendVarint(b, n)
		}
	}
	return b, nil
}

// Deserialize implements securecookie.Serializer. It only ever sees bytes
// that passed the HMAC, but still checks every bound.
func (ticketCodec) Deserialize(src []byte, dst any) error {
	tk, ok := dst.(*Ticket)
	if !ok {
		return fmt.Errorf("deserializing ticket: want a *Ticket, got %T", dst)
	}
	if len(src) > 0 && src[0] == '{' {
		return json.Unmarshal(src, tk) // issued before the binary form
	}
	r := ticketReader{b: src}
	if r.byte() != binaryTicket {
		return errors.New("deserializing ticket: unknown format")
	}
	version := r.uvarint()
	id := r.take(visitorBytes)
	// A room longer than Serialize writes is refused here too, so every
	// ticket that reads also writes back (FuzzTicketDeserialize's corpus
	// keeps the 256-byte room that once slipped through).
	roomLen := r.uvarint()
	if roomLen > maxRoomBytes {
		return errors.New("deserializing ticket: malformed")
	}
	room := r.take(int(roomLen))
	var n [5]int64
	for i := range n {
		n[i] = r.varint()
	}
	var flags byte
	if r.err == nil && len(r.b) > 0 {
		// Only a set flag is ever written, so a zero byte is malformed:
		// every ticket that reads writes back the same bytes.
		if flags = r.byte(); flags == 0 || flags&^(flagPending|flagEntered|flagAnchor) != 0 {
			return errors.New("deserializing ticket: unknown flags")
		}
	}
	var entered int64
	if flags&flagEntered != 0 {
		// Only a positive time is ever written, so anything else is malformed.
		if entered = r.varint(); entered <= 0 {
			return errors.New("deserializing ticket: malformed")
		}
	}
	var a Anchor
	if flags&flagAnchor != 0 {
		var n [6]int64
		for i := range n {
			n[i] = r.varint()
		}
		// Only an anchor at a position is ever written.
		if n[0] <= 0 {
			return errors.New("deserializing ticket: malformed")
		}
		a = Anchor{Position: n[0], At: n[1], Progress: Progress{Epoch: n[2], Admitted: n[3], Departed: n[4], Pending: n[5]}}
	}
	if r.err != nil || len(r.b) != 0 || version > 1<<16 {
		return errors.New("deserializing ticket: malformed")
	}
	*tk = Ticket{Version: int(version), Visitor: base64.RawURLEncoding.EncodeToString(id), Room: string(room),
		Number: n[0], Issued: n[1], Start: n[2], Until: n[3], Sealed: n[4], Pending: flags&flagPending != 0,
		Entered: entered, Anchor: a}
	return nil
}

// ticketReader reads the binary form; the first error sticks.
type ticketReader struct {
	b   []byte
	err error
}

var errShortTicket = errors.New("short ticket")

func (r *ticketReader) byte() byte {
	if b := r.take(1); len(b) == 1 {
		return b[0]
	}
	return 0
}

func (r *ticketReader) take(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errShortTicket
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *ticketReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortTicket
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *ticketReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShortTicket
		return 0
	}
	r.b = r.b[n:]
	return v
}
