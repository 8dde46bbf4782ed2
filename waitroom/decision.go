package waitroom

import (
	"context"
	"time"
)

// The values a store and its callers exchange: who asks (Visitor), what
// the store answers (Decision, Admitted), and what a room looks like
// (Stats). The interfaces that carry them are in store.go.

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
	// Counter is the last ticket number handed out (not the numbers a
	// repair skipped past it), and HighestAdmitted
	// the highest ticket admitted (0 for none, and in a Random room): the
	// store's high-water marks. Every instance's tick folds them into what
	// it tells the store as Visitor.Known and KnownAdmitted, so after a
	// failover each instance speaks for the whole room as of its last
	// tick, not only for the tickets it handed out or admitted itself: a
	// repair then finds every lost admission and join up to a tick before
	// the fault at the first call, whichever instance makes it, and no
	// position behind them grows when the others call. 0 from a store that
	// cannot lose its last writes (the memory store).
	Counter, HighestAdmitted int64
	// Head are the tickets of the line's first MaxHead places in order
	// (the one at index i is at position i+1), 0 past the end; all 0
	// while a ticket of this incarnation handed out below the last of
	// them is not placed yet (the placement window, a repair's skipped
	// numbers included: its place counts ahead of them, so positions are
	// not ranks then). Tickets restored from an earlier incarnation are
	// not counted: during a recovery grace a holder of a lost place who
	// returns takes it back ahead of the line (its number is below the
	// seed), so the positions Head gives grow by the returns, as the
	// store's own answers do then; a gateway never shows a larger one
	// (fromHead bounds it by the ticket's anchor). Every instance's tick
	// reads them, so a poll near the front is answered from the tick's
	// view, not the store (anchored.go, fromHead); the ticket number alone
	// names the place, numbers being unique to their holders
	// (docs/reliability.md). An array, so Stats stays comparable.
	Head [MaxHead]int64
	// Low is the lowest ticket that may stand ahead of a ticket above
	// it: the line's first place's or the lowest number that may still
	// be placed (above the placement window's floor), whichever is
	// lower; 0 when the store cannot tell. Every place and pending
	// number ahead of ticket t lies in Low..t-1, so t-Low+1 bounds t's
	// position from above, and Low only rises (a batched join's answer
	// before its place is written, joinbatch.go).
	Low int64
	// Floor is the lowest number that may still take its place (the
	// first above the placement window's floor); 0 when the store cannot
	// tell. The places ahead of ticket t number at most Waiting, and the
	// pending ones at most t-Floor: a second bound where Low is an old
	// place far ahead of t.
	Floor int64
}

// MaxLeftTickets bounds Stats.LeftTickets.
const MaxLeftTickets = 64

// MaxHead bounds Stats.Head: past exactFront (100), so every place a
// poll must be told exactly is in it.
const MaxHead = 128

// Progress is the part of s a gate compares with a Decision's Progress.
func (s Stats) Progress() Progress {
	return Progress{Epoch: s.Epoch, Admitted: s.AdmittedTotal, Departed: s.Abandoned + s.Left}
}
