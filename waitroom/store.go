package waitroom

import (
	"context"
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
	// ErrTooManySockets: the session holds Limits.MaxSockets sockets already.
	ErrTooManySockets = errors.New("too many sockets for one session")
	// ErrTooManyRooms: a room template has its max_rooms rooms in use.
	ErrTooManyRooms = errors.New("too many rooms of the template in use")
	// ErrExists: a room definition of that name exists already.
	ErrExists = errors.New("exists already")
	// ErrChanged: a room definition is no longer the body the caller read
	// (DeleteDefinition with only).
	ErrChanged = errors.New("changed since it was read")
)

// Definitions are the rooms created at run time (the admin API), as the
// store keeps them for every instance: each room's name and its body, an
// opaque document (JSON settings and routes) that the caller writes and
// validates. Version changes with every write, so an instance polls it
// cheaply and reads the bodies only when it moved.
type Definitions struct {
	Version int64
	Bodies  map[string][]byte
}

// PutMode says whether PutDefinition creates or replaces.
type PutMode int

const (
	// PutCreate adds a definition; ErrExists if one has the name.
	PutCreate PutMode = iota + 1
	// PutReplace replaces one; ErrNotFound if none has the name.
	PutReplace
)

// SocketOp is what Store.Socket does with one of a session's sockets.
type SocketOp int

const (
	// SocketOpen counts a new socket against the session's MaxSockets.
	SocketOpen SocketOp = iota + 1
	// SocketHold says the socket is still open, and asks whether its
	// session still runs.
	SocketHold
	// SocketClose says the socket closed.
	SocketClose
)

// Store keeps every room's line, its active sessions and its runtime
// override. Implementations are safe for concurrent use and every method is
// atomic: N gateway instances sharing one store never break a room's
// limits. Time comes from the store, never from the caller. Store, the
// embedding of the interfaces below, is the whole contract that memstore,
// redisstore and the metrics wrapper implement; storetest.Run holds both
// stores to it. The concerns are apart so that a new consumer can ask for
// the one it needs. What only some stores offer (a webhook claimer, a certificate cache) is
// found with As.
type Store interface {
	Line
	Overrides
	Guards
	DefinitionStore

	// Ping reports whether the store answers. Errors: ErrUnavailable, ErrClosed.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// As returns the first store in s's chain that is a T, as errors.As does
// for errors: a wrapper (metrics.Store) offers Unwrap() Store, so an
// optional ability of the store underneath is found through it, and a
// caller never asserts a concrete store type. ok is false when no store in
// the chain is a T.
func As[T any](s Store) (t T, ok bool) {
	for s != nil {
		if t, ok = s.(T); ok {
			return t, true
		}
		u, wraps := s.(interface{ Unwrap() Store })
		if !wraps {
			break
		}
		s = u.Unwrap()
	}
	return t, false
}

// Line is the rooms' lines and active sessions: what the gate asks on a
// visitor's request, what the admitter runs every tick, and the operator's
// admit, shuffle and release.
type Line interface {
	// Decide finds where the visitor stands and records that it was seen.
	// It is the one call on a visitor's every request; joining is
	// idempotent. Errors: ErrUnavailable, ErrClosed.
	//
	// Normally: an admitted visitor's session slides forward, written only
	// when its remaining time falls below SessionTTL minus the renew
	// interval (Decision.Renewed), up to SessionMax from its first use; a
	// session in use by SessionClients clients (each until it is quiet for
	// Limits.ClientQuiet) is refused to another (RefusedShared), never to
	// those already on it. A waiting
	// visitor's poll is recorded and its position returned.
	//
	// A ticket brought back: an unplaced ticket of this incarnation (v.Placed
	// false) takes its place at its number, ahead of later numbers already
	// placed, once per ticket and only while it is younger than
	// AbandonAfter (v.Issued); if nobody placed waits and both limits allow,
	// its holder goes in at once instead. A solved challenge (v.Challenge)
	// is spent on the way, once (RefusedChallenge after that), while it
	// lives (v.ChallengeUntil, not the placement window): at its number
	// while that is placeable, else at the back, so no position grows.
	//
	// Joining, for anyone else: JoinNone answers StateNone. JoinTicket hands
	// out the next number (see Join), refused past the network's or its
	// block's share of JoinLimit (RefusedQuota) or MaxWaiting
	// (RefusedFull); when nobody placed waits and both limits allow, the
	// newcomer goes in at once with the first session a tick gives (see
	// Admit). JoinNumber takes a number only, refused the same way past
	// its wider ceiling.
	//
	// After a data loss: a ticket older than the store's data (see the
	// package comment) gets its place back if it was seen within
	// AbandonAfter of the loss (v.Seen), at most once per visitor and
	// incarnation, so a hoard of old tickets cannot be farmed; older ones
	// join at the back. One whose admission still runs (v.Until) goes back
	// inside while a slot is free, else to the front of the line. The
	// first restore starts the RecoveryGrace: until it ends nobody goes in
	// at once and ticks let in only restored tickets, so no newcomer takes
	// a slot from the people who held them. A call whose v.Known is older
	// than the store's data (the caller saw tickets the store lost) starts
	// the grace at once, whoever comes first.
	//
	// After a partial loss (a failover; stores that replicate): a counter
	// behind a ticket or v.Known moves past it (Decision.Repaired), and
	// for a while the tickets up to the new counter whose place or session
	// is gone are put back as above, once per visitor: a place at its
	// number, a session while a slot is free.
	Decide(ctx context.Context, room string, lim Limits, v Visitor, join Join) (Decision, error)

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

	// Shuffle reorders, once per key, the pre-queue waiting in the room now
	// (the placed tickets handed out under Limits.Prequeue) by
	// ShuffleOrder(seed, id), reusing their ticket numbers among them: a
	// fair draw among visitors who were all equally early, which anyone can
	// check from the recorded seed. Nobody who came after the pre-queue is
	// moved, and a room without one is left as it is. A key already used
	// changes nothing and returns the seed recorded then. Errors:
	// ErrUnavailable, ErrClosed.
	Shuffle(ctx context.Context, room, key, seed string) (used string, shuffled int, err error)

	// Touch records that these waiting visitors were seen now, as their
	// own Decide would: a gate that answered their polls from Progress
	// sends the marks of a tick in one call, before the tick's Admit, so
	// abandonment stays as exact as with a Decide per poll (late by at
	// most a tick). Each Visitor is an ID and the placed Ticket its cookie
	// holds; one no longer in line is skipped, and nobody is placed or
	// moved. Errors: ErrUnavailable, ErrClosed.
	Touch(ctx context.Context, room string, lim Limits, vs []Visitor) error

	// Release ends the visitor's session or gives up its place in line:
	// ReleaseAt with a zero began. Errors: ErrNotFound, ErrUnavailable,
	// ErrClosed.
	Release(ctx context.Context, room, visitor string) error

	// ReleaseAt is Release, conditional and timed: with began not zero it
	// ends the visitor's session only if that session began at or before
	// began by the store's clock; a later one is left alone and answers
	// ErrNotFound. A session the store put back after a loss began before
	// it: at its cookie's Visitor.Entered, or (redisstore's lost
	// admissions) at its holder's last poll in line, else at 0. A place in
	// line is given up whatever began says. at is the store's clock when
	// it released (or found nothing to release): what a gateway keeps to
	// apply the release again after a failover, as began, so that replay
	// never ends a later session of the same visitor (repair.go). The
	// store's clock is its own: on Redis, the server's TIME, which another
	// server after a failover may read a little differently (redisstore's
	// doc, "Replayed releases"). Errors: ErrNotFound, ErrUnavailable,
	// ErrClosed.
	ReleaseAt(ctx context.Context, room, visitor string, began time.Time) (at time.Time, err error)

	// Stats returns a snapshot of the room. Errors: ErrUnavailable, ErrClosed.
	Stats(ctx context.Context, room string) (Stats, error)
}

// Overrides are the rooms' runtime overrides, set by the operator and read
// by the admitter every tick.
type Overrides interface {
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
}

// Guards are the bounds every instance shares beyond the line: a session's
// sockets, a client network's allowances, a template's rooms in use.
type Guards interface {
	// Socket keeps account of an admitted session's long-lived connections
	// (WebSockets), so one session holds at most lim.MaxSockets across all
	// instances and each socket learns when its session ended. SocketOpen
	// counts a new socket (ErrTooManySockets past MaxSockets live ones);
	// SocketHold renews it, which its holder does at least every `every`;
	// both answer ErrNotFound once the session is not running (released,
	// expired, ended by SessionMax), and the holder then closes the socket.
	// SocketClose forgets it. A socket not held for three times `every` no
	// longer counts (its instance died). Errors: ErrNotFound,
	// ErrTooManySockets, ErrUnavailable, ErrClosed.
	Socket(ctx context.Context, room string, lim Limits, visitor, socket string, op SocketOp, every time.Duration) error

	// Allow spends one unit of a client network's allowance of kind in the
	// room ("preflight"), a GCRA over limit shared by every instance:
	// limit.N at once, then one per limit.Per/limit.N. It returns 0 when
	// allowed, else how long until the next unit. An unlimited limit or an
	// empty network always allows. Errors: ErrUnavailable, ErrClosed.
	Allow(ctx context.Context, room, kind, network string, limit Rate) (time.Duration, error)

	// UseRoom records that room, one of template's rooms (a room filled in
	// from a route's path parameter), is in use now, and refuses it
	// (ErrTooManyRooms) when max of the template's rooms are in use already,
	// across all instances. A room not used for idle is not in use any
	// more. A room already in use is never refused. Errors:
	// ErrTooManyRooms, ErrUnavailable, ErrClosed.
	UseRoom(ctx context.Context, template, room string, max int, idle time.Duration) error
}

// DefinitionStore keeps the API rooms' definitions for every instance (the
// value they read is Definitions).
type DefinitionStore interface {
	// DefinitionsVersion returns Definitions.Version without the bodies: 0
	// before the first write. Errors: ErrUnavailable, ErrClosed.
	DefinitionsVersion(ctx context.Context) (int64, error)
	// LoadDefinitions returns every definition. Errors: ErrUnavailable,
	// ErrClosed.
	LoadDefinitions(ctx context.Context) (Definitions, error)
	// PutDefinition creates or replaces the definition of name (see
	// PutMode) and returns the new version. Errors: ErrExists, ErrNotFound,
	// ErrUnavailable, ErrClosed.
	PutDefinition(ctx context.Context, name string, body []byte, mode PutMode) (int64, error)
	// DeleteDefinition removes the definition of name and returns the new
	// version. With only not nil it removes it only while its body is
	// only, in the same step: a room another instance wrote again since
	// the caller read it stays (ErrChanged). The room's line and sessions
	// are left to expire. Errors: ErrNotFound, ErrChanged, ErrUnavailable,
	// ErrClosed.
	DeleteDefinition(ctx context.Context, name string, only []byte) (int64, error)
}
