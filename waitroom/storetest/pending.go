package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// askAs is e.ask from client inside network.
func (e *env) askAs(lim waitroom.Limits, network, client, block string, join waitroom.Join) waitroom.Decision {
	e.t.Helper()
	v := waitroom.Visitor{ID: newVisitorID(), Network: network, Client: client, Block: block, Issued: time.Now(), Seen: time.Now()}
	d, err := e.store().Decide(context.Background(), e.room, lim, v, join)
	if err != nil {
		e.t.Fatalf("Decide(%s, %s, %s): %v", network, client, block, err)
	}
	return d
}

// testPendingBounds: the pending allowance has a block level and a client
// level. A flood spread over 256 networks of one block, each sending
// PendingPerNetwork never-returning requests, is counted in the places
// behind no more than twice the block's allowance (BlockFactor times
// PendingPerNetwork), so a newcomer of another block is shown no more
// than that ahead of it; one client asking for challenges as fast as it
// can takes no more than its PendingPerClient of its network's, so a
// neighbour's challenge still carries a number.
func testPendingBounds(t *testing.T, e *env) {
	lim := limits(0)
	lim.JoinLimit = waitroom.Rate{N: 3, Per: time.Hour}
	const networks = 256
	counted := 0
	for n := range networks {
		for range waitroom.PendingPerNetwork {
			d := e.askAs(lim, fmt.Sprintf("blk-%d", n), "", "blk", waitroom.JoinTicket)
			if d.Refusal != "" || d.State != waitroom.StateWaiting {
				t.Fatalf("flood request of network %d: %+v, want a ticket", n, d)
			}
			if d.Ticket != 0 {
				counted++
			}
		}
	}
	bound := 2 * waitroom.PendingPerNetwork * waitroom.BlockFactor
	t.Logf("%d never-returning requests from %d networks of one block: %d counted in the places behind (bound %d)",
		networks*waitroom.PendingPerNetwork, networks, counted, bound)
	if counted > bound {
		t.Fatalf("%d of %d flood tickets of one block are counted, want at most %d", counted, networks*waitroom.PendingPerNetwork, bound)
	}
	if d := e.askAs(lim, "outside", "", "other-block", waitroom.JoinTicket); d.Position < 1 || d.Position > int64(counted)+1 {
		t.Fatalf("a newcomer of another block: %+v, want position 1 to %d", d, counted+1)
	}

	for i := range 50 {
		if d := e.askAs(lim, "nat", "flooder", "", waitroom.JoinNumber); d.Refusal != "" {
			t.Fatalf("challenge %d of the flooder: %+v", i+1, d)
		}
	}
	if d := e.askAs(lim, "nat", "neighbour", "", waitroom.JoinNumber); d.Refusal != "" || d.Ticket == 0 {
		t.Fatalf("the flooder's neighbour's challenge: %+v, want a number", d)
	}
	// A network that is its own client (server.shared_networks) meets only
	// its network's allowance.
	got := 0
	for range waitroom.PendingPerNetwork {
		if d := e.askAs(lim, "one", "one", "", waitroom.JoinNumber); d.Ticket != 0 {
			got++
		}
	}
	if got != waitroom.PendingPerNetwork {
		t.Fatalf("a network that is one client: %d of %d challenges carry a number, want all", got, waitroom.PendingPerNetwork)
	}
}
