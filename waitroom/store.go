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

// State is where a visitor stands in a room.
type State int

const (
	// StateNone: the store holds nothing for the visitor (when Decide was
	// asked not to join, took a number only, or turned the visitor away).
	StateNone State = iota
	// StateWaiting: the visitor holds a ticket in line; Decision.Placed
	// says whether its place is written yet.
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

// Join says what Decide may do for a visitor the store does not know.
type Join int

const (
	// JoinNone gives such a visitor nothing (a status poll). A ticket
	// handed out earlier and brought back is still placed: that is its
	// holder coming back, not a new visitor.
	JoinNone Join = iota
	// JoinTicket hands a newcomer a ticket: the next number, which fixes
	// its place in arrival order, and a session at once when nobody waits
	// and both limits allow. The place itself is written only when the
	// ticket comes back (Visitor.Placed false), so a client that never
	// returns costs the store a counter and its network's quota, nothing in
	// the line.
	JoinTicket
	// JoinNumber takes the next number for a challenge (the number the
	// challenge carries), refused like JoinTicket past the network's
	// ceiling, which lets it run ChallengeJoinFactor times JoinLimit.N
	// ahead of its JoinLimit pace instead of JoinLimit.N (Decision.Recent,
	// which prices the work, says how far ahead it is); nobody goes in at
	// once.
	JoinNumber
)

// Refusal says why Decide turned a visitor away (State is StateNone).
type Refusal string

const (
	// RefusedQuota: the client network, or its block, used up its share
	// of Limits.JoinLimit; Decision.RetryAfter says when the next ticket
	// is allowed. Nothing was counted and no number taken.
	RefusedQuota Refusal = "quota"
	// RefusedFull: Limits.MaxWaiting are in line.
	RefusedFull Refusal = "full"
	// RefusedChallenge: the challenge the request spends was spent before.
	RefusedChallenge Refusal = "challenge"
	// RefusedShared: Limits.SessionClients clients use this admitted
	// session already; the request is not one of theirs. RetryAfter says
	// when the quietest of them may have gone.
	RefusedShared Refusal = "shared"
	// RefusedSessionMax: the session reached Limits.SessionMax and ended.
	RefusedSessionMax Refusal = "session_max"
)

// Restore says what Decide put back after the store lost its data.
type Restore int

const (
	RestoreNone    Restore = iota
	RestoreWaiting         // a place in line, at its old ticket
	RestoreInside          // a session that was running, while a slot was free
)

// Visitor is what a request tells the store about who is asking: the id and,
// when the visitor holds a ticket, what its seal says.
type Visitor struct {
	// ID is 128 random bits, base64url without padding (see NewVisitorID),
	// or one derived from a signed account (a site's identity).
	ID string
	// Ticket is the ticket number the visitor's cookie carries; 0 for none.
	Ticket int64
	// Until is when the admission the cookie carries runs out; zero while
	// waiting. A store that lost its data puts such a visitor back inside,
	// not in line (see Decide).
	Until time.Time
	// Entered is when the admission the cookie carries began (its
	// ticket's Entered); zero while waiting or when the cookie does not
	// say. After a repair, a session the store does not hold is put back
	// only if it began within LossWindow before the repair (and the
	// cookie was sealed before it): an older one was on a replica, so its
	// end (a release, a leave, a revocation) was not lost.
	Entered time.Time
	// Placed is true when the ticket's place was written (its cookie says
	// so); false for a ticket handed out and not brought back before.
	Placed bool
	// Issued is when the ticket was handed out: an unplaced ticket issued
	// longer than AbandonAfter ago is stale and buys no place.
	Issued time.Time
	// Seen is when the ticket was last sealed (gates re-seal as visitors
	// poll): after a data loss, only a ticket seen within AbandonAfter of
	// the loss gets its place back.
	Seen time.Time
	// Network is a short key of the client's network, for the join quota;
	// "" when unknown.
	Network string
	// Client is a short key of the client's own address (an IPv4 address,
	// an IPv6 /64), for SessionClients: a copy of an admitted ticket used
	// from another address inside the same network is another client.
	// "" when unknown.
	Client string
	// Block is a short key of the wider network around Network (its /16
	// or /48, see BlockFactor), whose networks share one join ceiling; ""
	// when unknown or when Network is as wide.
	Block string
	// Challenge is the id of a solved challenge the request spends, once;
	// ChallengeUntil is when that challenge expires. "" for none.
	Challenge      string
	ChallengeUntil time.Time
	// Known is the highest ticket number the asking instance saw in the
	// room lately (cookies brought and tickets handed out; 0 for none). A
	// store whose counter is behind it lost writes (a failover to a
	// replica that lagged): it moves the counter past it and repairs the
	// room (Decision.Repaired). A store whose data for the room is newer
	// than Known (no data, or a new incarnation) lost it all: the recovery
	// grace starts at once, so no newcomer takes a slot ahead of the
	// sessions that held it.
	Known int64
	// KnownAdmitted is the highest ticket number the asking instance saw
	// admitted in the room lately (its ticks' Admitted.Highest, admitted
	// tickets it served; 0 for none, and always 0 in a Random room). In a
	// room that admits from the head of its line, every ticket up to it
	// was admitted or dropped: a store that still has visitors in line
	// there lost those admissions (a failover) and puts them back inside
	// at once (Decision.Repaired), so no position behind them grows.
	KnownAdmitted int64
	// Loose is true for a ticket handed out with no number (Ticket 0, not
	// Placed): its network had used its PendingPerNetwork, so nobody's
	// place counted it; brought back within the placement window it takes
	// a place at the back. Never set in a room with a challenge.
	Loose bool
}

// LossWindow is the most of its last writes a failover may lose: the
// stores WAIT for a replica after each batch of admissions, so an
// admission or place written longer than this before a repair reached a
// replica, and a repair puts back (as a "lost session" or place) only a
// ticket whose admission or place may be younger than that (see
// Visitor.Entered). A cookie kept from before a release, a leave or a
// revocation therefore gets nothing back after a later failover.
const LossWindow = 30 * time.Second

// SealSkew is how far a gateway's clock (a cookie's seal, Visitor.Seen)
// may run ahead of the store's (the repair's time) and the cookie still
// count as sealed before the repair (see LossWindow).
const SealSkew = 5 * time.Second

// Decision is the store's answer for one visitor.
type Decision struct {
	State State
	// Ticket is the visitor's ticket number. Every join takes one, an
	// immediate admission included. It is 0 with StateNone (but for
	// JoinNumber), and may be 0 for a session found already active (stores
	// need not keep the number of admitted visitors; the caller's ticket
	// has it).
	Ticket int64
	// Position is 1 for the next visitor to go in; 0 unless waiting. An
	// unplaced ticket is told the place it will take: behind everyone
	// placed now.
	Position int64
	// Line is the length of the line, this visitor included.
	Line int64
	// Until is when the session expires; zero unless admitted.
	Until time.Time
	// Joined is true when this call gave the visitor a new ticket, place
	// or session.
	Joined bool
	// Placed is true when the visitor's place in line is written; false
	// for a ticket just handed out.
	Placed bool
	// Renewed is true when this call moved the session's expiry forward
	// (at most once per renew interval), so the caller may refresh its cookie.
	Renewed bool
	// Refusal says why the visitor was turned away; "" when it was not.
	Refusal Refusal
	// RetryAfter is when a RefusedQuota network may have a ticket again.
	RetryAfter time.Duration
	// Recent is how many tickets the visitor's network took within its
	// JoinLimit window, this one included (0 without a limit or network).
	Recent int64
	// Restored says what this call put back after a data loss;
	// GraceStarted is true when it was the first of this incarnation.
	Restored     Restore
	GraceStarted bool
	// Repaired is true when this call found the store had lost its last
	// writes while keeping the room (its counter behind a ticket or
	// Visitor.Known, or a new master under a ticket it should hold) and
	// repaired the room first: see Stats.Repairs.
	Repaired bool
	// Progress is the room's running counts as of this answer, with
	// Pending the pending tickets Position counts ahead; set for a placed
	// ticket waiting, zero otherwise. A gate that keeps it can tell how far
	// the line moved since from Stats alone (see Progress).
	Progress Progress
}

// Progress lets a gate answer a waiting visitor's poll without the store.
// In a room that admits from the head of its line (not Limits.Random),
// every admission while a placed ticket waits is of someone ahead of it,
// so its position is at most Position - (Admitted now - Admitted then);
// it is lower by at most the departures since (Departed now - Departed
// then, some of whom may have been ahead) plus the pending tickets it
// counted ahead (which may never come). Epoch changes when the store lost
// the room's data, when restored tickets may come back ahead of anyone;
// then nothing carries over.
type Progress struct {
	Epoch    int64 // the room's incarnation; 0 when the store has none yet
	Admitted int64 // admissions ever, as Stats.AdmittedTotal
	Departed int64 // places given up without admission: abandoned or released
	Pending  int64 // pending tickets counted in the Position (Decision only)
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
	// Repaired is true when the tick found the room on a new master
	// (a failover), or admissions lost (see Visitor.KnownAdmitted), and
	// repaired it before admitting anyone.
	Repaired bool
	// Highest is the highest ticket this call admitted; 0 for none, and
	// always 0 in a Random room. The caller keeps it as its KnownAdmitted.
	Highest int64
	// Readmitted counts the lost admissions this call put back inside.
	Readmitted int
}

// knownAdmittedKey carries Visitor.KnownAdmitted to Admit and AdmitN.
type knownAdmittedKey struct{}

// WithKnownAdmitted returns ctx carrying the highest ticket the caller
// saw admitted in the room (Visitor.KnownAdmitted) to Admit and AdmitN. It
// is a hint a replicated store uses to find admissions it lost, not a
// parameter: a store that never loses writes ignores it, so it rides on
// the context rather than widening every Store's Admit.
func WithKnownAdmitted(ctx context.Context, ticket int64) context.Context {
	if ticket <= 0 {
		return ctx
	}
	return context.WithValue(ctx, knownAdmittedKey{}, ticket)
}

// KnownAdmittedFrom is what WithKnownAdmitted put in ctx; 0 for none.
func KnownAdmittedFrom(ctx context.Context) int64 {
	n, _ := ctx.Value(knownAdmittedKey{}).(int64)
	return n
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
	Joined        int64 // visitors who took a place or went straight in
	AdmittedTotal int64
	Released      int64
	Expired       int64
	Abandoned     int64
	// Issued counts tickets handed out, placed or not; Limited and Full
	// the newcomers turned away by the join quota and by MaxWaiting.
	Issued  int64
	Limited int64
	Full    int64
	// Left counts waiting visitors who gave up their place (Release);
	// Released counts them too, with the sessions released.
	Left int64
	// LeftTickets are the ticket numbers of the last MaxLeftTickets of
	// them, oldest first, 0 past the end (no ticket is 0), so every
	// instance's next tick learns whose place is gone and answers no copy
	// of those tickets from its anchor (anchored.go). An array, so Stats
	// stays comparable.
	LeftTickets [MaxLeftTickets]int64
	// Epoch is the room's incarnation (see Progress).
	Epoch int64
	// Repairs counts the times the store found, within this incarnation,
	// that it had lost its last writes (a failover) and repaired the room:
	// the counter moved past every ticket known, the places and sessions of
	// tickets up to it put back as they return, admissions held a moment.
	// Every instance's tick reads it, so each notices every repair.
	Repairs int64
}

// MaxLeftTickets bounds Stats.LeftTickets.
const MaxLeftTickets = 64

// Progress is the part of s a gate compares with a Decision's Progress.
func (s Stats) Progress() Progress {
	return Progress{Epoch: s.Epoch, Admitted: s.AdmittedTotal, Departed: s.Abandoned + s.Left}
}

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

	// Release ends the visitor's session or gives up its place in line.
	// Errors: ErrNotFound, ErrUnavailable, ErrClosed.
	Release(ctx context.Context, room, visitor string) error

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
