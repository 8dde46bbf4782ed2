package waitroom

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"time"
)

// Sentinel errors returned by stores. Callers test them with errors.Is.
var (
	// ErrNotFound: the visitor holds no place and no session in the room.
	ErrNotFound = errors.New("visitor not found")
	// ErrUnavailable: the store cannot be reached; the gate follows store.on_error.
	ErrUnavailable = errors.New("store unavailable")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrRoomClosed: the room's mode (reject) lets nobody in.
	ErrRoomClosed = errors.New("room closed (mode reject)")
)

// State is where a visitor stands in a room.
type State int

const (
	// StateNone: the store holds nothing for the visitor (only when Decide was
	// asked not to join).
	StateNone State = iota
	// StateWaiting: the visitor holds a place in line.
	StateWaiting
	// StateAdmitted: the visitor has an active session.
	StateAdmitted
)

func (s State) String() string {
	switch s {
	case StateWaiting:
		return "waiting"
	case StateAdmitted:
		return "admitted"
	default:
		return "none"
	}
}

// Visitor is what a request tells the store about who is asking: the id and,
// when the visitor holds a ticket, its number.
type Visitor struct {
	// ID is 128 random bits, base64url without padding (see NewVisitorID).
	ID string
	// Ticket is the ticket number the visitor's cookie carries; 0 for none.
	Ticket int64
	// Until is when the admission the cookie carries runs out; zero while
	// waiting. A store that lost its data puts such a visitor back inside,
	// not in line (see Decide).
	Until time.Time
}

// Decision is the store's answer for one visitor.
type Decision struct {
	State State
	// Ticket is the visitor's ticket number. Every join takes one, an
	// immediate admission included. It is 0 with StateNone, and may be 0 for
	// a session found already active (stores need not keep the number of
	// admitted visitors; the caller's ticket has it).
	Ticket int64
	// Position is 1 for the next visitor to go in; 0 unless waiting.
	Position int64
	// Line is the length of the line, this visitor included.
	Line int64
	// Until is when the session expires; zero unless admitted.
	Until time.Time
	// Joined is true when this call gave the visitor a new place or session.
	Joined bool
	// Renewed is true when this call moved the session's expiry forward
	// (at most once per renew interval), so the caller may refresh its cookie.
	Renewed bool
}

// Ahead is the number of people in line in front of the visitor.
func (d Decision) Ahead() int64 {
	if d.Position <= 0 {
		return 0
	}
	return d.Position - 1
}

// Behind is the number of people in line after the visitor.
func (d Decision) Behind() int64 {
	if d.Position <= 0 || d.Line < d.Position {
		return 0
	}
	return d.Line - d.Position
}

// Admitted reports what one admission tick did.
type Admitted struct {
	Admitted  int // moved from the line into the active set
	Abandoned int // dropped from the line for not polling
	Expired   int // sessions removed because they ran out
}

// Stats is a snapshot of a room.
type Stats struct {
	Waiting int64 // visitors in line (abandoned ones not yet dropped included)
	Active  int64 // sessions inside
	// AdmittedLastMinute counts admissions (immediate ones included) in the
	// last 60 seconds, or since the room was created when that is later;
	// with MeasuredOver it gives the measured admission rate.
	AdmittedLastMinute int64
	// MeasuredOver is the span AdmittedLastMinute covers: a minute, or the
	// room's age in the store when younger.
	MeasuredOver  time.Duration
	Joined        int64 // visitors who took a ticket or went straight in
	AdmittedTotal int64
	Released      int64
	Expired       int64
	Abandoned     int64
}

// Store keeps every room's line, its active sessions and its runtime
// override. Implementations are safe for concurrent use and every method is
// atomic: N gateway instances sharing one store never break a room's
// limits. Time comes from the store, never from the caller. This interface
// is the whole contract; storetest.Run holds both stores to it.
type Store interface {
	// Decide finds where the visitor stands and records that it was seen.
	// It is the one call on a visitor's every request; joining is
	// idempotent. Errors: ErrUnavailable, ErrClosed.
	//
	// Normally: an admitted visitor's session slides forward, written only
	// when its remaining time falls below SessionTTL minus the renew
	// interval (Decision.Renewed); a waiting visitor's poll is recorded and
	// its position returned.
	//
	// Joining: a visitor the store does not know gets StateNone when join
	// is false. When join is true it goes in at once if nobody waits and
	// both limits allow, and otherwise takes the next ticket, at the back.
	//
	// After a data loss: a visitor whose ticket predates the store's data
	// (see the package comment) is put back at the place that ticket gives,
	// at most once per incarnation of the store, so a restored place cannot
	// be retaken again and again; the first such return starts the
	// RecoveryGrace. A restored visitor whose v.Until is still ahead was
	// inside when the data was lost: it goes back inside until then (at
	// most SessionTTL from now), taking no token and whatever the active
	// count: it held one of the room's slots all along, and throwing it out
	// mid-checkout because a tick gave its slot away after the loss would be
	// worse than a room briefly over MaxActive, by at most the number who
	// were inside.
	Decide(ctx context.Context, room string, lim Limits, v Visitor, join bool) (Decision, error)

	// Admit runs one admission tick for the room: drop expired sessions, then
	// move visitors from the head of the line into the active set while
	// MaxActive and the token bucket allow, dropping those who stopped
	// polling (during a RecoveryGrace, only restored tickets go in). A visitor
	// let in by a tick gets a first session of min(SessionTTL, AbandonAfter),
	// which its first request slides to the full SessionTTL: an admission
	// nobody comes to use frees its slot as soon as an abandoned place would.
	// The counts are what this call did. Errors: ErrUnavailable, ErrClosed.
	Admit(ctx context.Context, room string, lim Limits) (Admitted, error)

	// AdmitN lets up to n visitors in now, from the head of the line (at
	// random when lim.Random), ignoring the token bucket but never beyond
	// MaxActive; stale visitors are dropped on the way as in Admit. The
	// admissions count as ordinary ones (the admin API's "admit N").
	// Errors: ErrUnavailable, ErrClosed.
	AdmitN(ctx context.Context, room string, lim Limits, n int) (Admitted, error)

	// Shuffle reorders, once per key, everyone waiting in the room now by
	// ShuffleOrder(seed, id), reusing their ticket numbers among them: a
	// fair draw among visitors who were all equally early (a scheduled
	// sale's pre-queue), which anyone can check from the recorded seed. A
	// key already used changes nothing and returns the seed recorded then.
	// Errors: ErrUnavailable, ErrClosed.
	Shuffle(ctx context.Context, room, key, seed string) (used string, shuffled int, err error)

	// Release ends the visitor's session or gives up its place in line.
	// Errors: ErrNotFound, ErrUnavailable, ErrClosed.
	Release(ctx context.Context, room, visitor string) error

	// SetOverride merges o into the room's runtime override: its non-nil
	// fields (and a non-empty Mode) replace the stored ones; the others
	// stay. An override a store could not keep is refused (see
	// Override.Validate). Errors: ErrUnavailable, ErrClosed, the refusal.
	SetOverride(ctx context.Context, room string, o Override) error
	// ClearOverride drops the room's override, back to the configuration.
	// Errors: ErrUnavailable, ErrClosed.
	ClearOverride(ctx context.Context, room string) error
	// Override returns the room's override (the zero Override for none).
	// Errors: ErrUnavailable, ErrClosed.
	Override(ctx context.Context, room string) (Override, error)

	// Stats returns a snapshot of the room. Errors: ErrUnavailable, ErrClosed.
	Stats(ctx context.Context, room string) (Stats, error)

	// Ping reports whether the store answers. Errors: ErrUnavailable, ErrClosed.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// Limits are a room's admission limits as a store applies them.
type Limits struct {
	MaxActive    int           // sessions inside at once; 0 admits nobody
	AdmitRate    Rate          // token bucket refill
	AdmitBurst   int           // token bucket size, >= 1
	SessionTTL   time.Duration // sliding session lifetime
	AbandonAfter time.Duration // a waiting visitor unseen this long is dropped
	// RecoveryGrace: once the store has put back a ticket that predates its
	// data (proof that it lost its data, say Redis restarted empty), it lets
	// in nobody but such returning ticket holders for this long, counted from
	// the first one: no immediate admission, and ticks admit only restored
	// tickets (which stand at the head of the line, as they are older than
	// every new one). 0 disables the grace.
	RecoveryGrace time.Duration
	// Random makes Admit and AdmitN pick waiting visitors at random from the
	// whole line instead of from its head (mode: random). Immediate
	// admission is unchanged: it needs an empty line anyway.
	Random bool
}

// RenewInterval is how long a session's expiry may lag behind "now +
// SessionTTL" before a request writes a renewal: a tenth of the TTL, at most
// one minute. It bounds writes on the admitted path.
func (l Limits) RenewInterval() time.Duration {
	return min(l.SessionTTL/10, time.Minute)
}

// ShuffleOrder is the sort key of a visitor in a shuffle: the hex SHA-1 of
// the seed followed by the visitor id. Stores sort by it, ascending, so the
// order can be recomputed from the seed and the ids alone.
func ShuffleOrder(seed, visitor string) string {
	sum := sha1.Sum([]byte(seed + visitor))
	return hex.EncodeToString(sum[:])
}
