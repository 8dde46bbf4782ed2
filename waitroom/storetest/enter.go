package storetest

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// Enter brings a new visitor into room as a browser does, for the stores'
// own tests: its first request gets a ticket (or a session at once), its
// next one brings the ticket back and takes its place. It returns the
// visitor as its cookie then says, and the last decision.
func Enter(ctx context.Context, s waitroom.Store, room string, lim waitroom.Limits, id string) (waitroom.Visitor, waitroom.Decision, error) {
	v := waitroom.Visitor{ID: id, Issued: time.Now(), Seen: time.Now()}
	d, err := s.Decide(ctx, room, lim, v, waitroom.JoinTicket)
	if err != nil || d.State != waitroom.StateWaiting || d.Placed {
		v.Ticket, v.Placed = d.Ticket, d.Placed
		return v, d, err
	}
	v.Ticket = d.Ticket
	d, err = s.Decide(ctx, room, lim, v, waitroom.JoinNone)
	v.Placed = d.Placed
	return v, d, err
}
