package waitroom

import "context"

// Joiner is what a store offers for batched joins (issue 24): a newcomer's
// number taken from a block its gateway reserved, with no store call on
// the first request, and its place written when the ticket comes back, in
// one call per gateway per tick for all of that tick's places. Found with
// As; memstore and redisstore implement it, and the metrics wrapper
// passes it through.
type Joiner interface {
	// Reserve takes n numbers from the room's counter and returns the
	// first: the numbers first to first+n-1 are the caller's to hand out
	// (as JoinTicket hands one out, counted as pending by the places
	// behind until placed or released). The room is made as Decide makes
	// it when it has no counter; a known (Visitor.Known) above the
	// counter moves it first, as Decide's repair does. On a replicated
	// store the write is durable (WAIT), so a failover does not hand the
	// same numbers out twice. Errors: ErrUnavailable, ErrClosed.
	Reserve(ctx context.Context, room string, lim Limits, n, known int64) (int64, error)

	// Place writes the places of pending tickets brought back (each
	// Placement's Visitor: ID, Ticket, Issued, Network, Block, Loose), in
	// ticket order, and releases the numbers of spans handed out by
	// nobody (a reserved block's unused tail): they stop counting as
	// pending. Per visitor, as Decide's placement of an unplaced ticket:
	// one in line or inside is answered its standing (placing twice is
	// placing once); a placeable ticket younger than the placement window
	// takes its place at its number against its network's join_limit,
	// or goes in at once when nobody waits ahead and both limits allow; a
	// loose one takes a new number at the back; a place past the quota
	// or MaxWaiting is refused. Anything else (a ticket too old, one a
	// lost write left above the counter, a room in its recovery grace)
	// is answered Ask: its holder's next request asks Decide. The
	// results are in the order of ps. Errors: ErrUnavailable, ErrClosed.
	Place(ctx context.Context, room string, lim Limits, ps []Placement, release []Span) ([]Placed, error)
}

// Placement is one pending ticket brought back, for Joiner.Place.
type Placement struct {
	Visitor Visitor
}

// Span is the numbers First to Last, both included.
type Span struct {
	First, Last int64
}

// Placed is Joiner.Place's answer for one Placement: the visitor's
// Decision, or Ask when the store wants the visitor's own Decide.
type Placed struct {
	ID       string
	Decision Decision
	Ask      bool
}
