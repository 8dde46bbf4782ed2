package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

var _ waitroom.Joiner = (*Store)(nil)

// Reserve implements waitroom.Joiner (reserve.lua), durably: the script,
// then WAIT (durable.go), so a failover does not hand the same numbers
// out again. 0 means no block: the room is in its recovery grace, or
// known says it lost its data (its newcomers ask Decide). Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) Reserve(ctx context.Context, room string, lim waitroom.Limits, n, known int64) (int64, error) {
	base := s.cache.limitArgs(lim)
	args := make([]any, len(base), len(base)+2)
	copy(args, base)
	var r [2]int64
	if err := s.runDurable(ctx, reserveScript, room, append(args, n, known), r[:]); err != nil {
		return 0, fmt.Errorf("reserving %d numbers in room %q: %w", n, room, err)
	}
	return r[0], nil
}

// placeFields and placeReply are place.lua's fields per ticket in ARGV
// and in its reply; placeTrailer the reply's batch-wide tail.
const (
	placeFields  = 7
	placeReply   = 7
	placeTrailer = 4
	flagAsk      = 128
	// placeBatch bounds one place.lua call, as touchBatch does touch.lua.
	placeBatch = 2000
)

// Place implements waitroom.Joiner (place.lua), placeBatch tickets a
// call; the spans go with the first. Errors: waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error.
func (s *Store) Place(ctx context.Context, room string, lim waitroom.Limits, ps []waitroom.Placement, release []waitroom.Span) ([]waitroom.Placed, error) {
	out := make([]waitroom.Placed, 0, len(ps))
	for first := true; first || len(ps) > 0; first = false {
		n := min(len(ps), placeBatch)
		var spans []waitroom.Span
		if first {
			spans = release
		}
		got, err := s.place(ctx, room, lim, ps[:n], spans)
		if err != nil {
			return out, fmt.Errorf("placing %d tickets in room %q: %w", n, room, err)
		}
		out = append(out, got...)
		ps = ps[n:]
	}
	return out, nil
}

// place is one place.lua call.
func (s *Store) place(ctx context.Context, room string, lim waitroom.Limits, ps []waitroom.Placement, release []waitroom.Span) ([]waitroom.Placed, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	keys := s.cache.keys(s.prefix, room)
	quota, other := keys[0], keys[0]
	if !lim.JoinLimit.IsUnlimited() {
		tag := keys[0][:len(keys[0])-len(keyNames[0])]
		quota, other = tag+quotaHashes[0], tag+quotaHashes[1]
	}
	keys = append(keys[:len(keys):len(keys)], quota, keys[0], other)
	base := s.cache.limitArgs(lim)
	args := make([]any, len(base), len(base)+2+2*len(release)+placeFields*len(ps))
	copy(args, base)
	args = append(args, int64(waitroom.BlockFactor), len(release))
	for _, sp := range release {
		args = append(args, sp.First, sp.Last)
	}
	for _, p := range ps {
		v := p.Visitor
		args = append(args, v.ID, v.Ticket, unixMicros(v.Issued), flag(v.Loose), v.Network, v.Block, v.Client)
	}
	dst := make([]int64, placeReply*len(ps)+placeTrailer)
	reply, err := placeScript.Run(ctx, s.client, keys, args...).Result()
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", placeScript.name, s.failure(ctx, err))
	}
	if err := replyInts(placeScript.name, reply, dst); err != nil {
		return nil, unavailable(err)
	}
	tail := dst[placeReply*len(ps):]
	progress := waitroom.Progress{Epoch: tail[1], Admitted: tail[2], Departed: tail[3]}
	out := make([]waitroom.Placed, len(ps))
	for i, p := range ps {
		r := dst[i*placeReply : (i+1)*placeReply]
		out[i] = waitroom.Placed{ID: p.Visitor.ID}
		if r[4]&flagAsk != 0 {
			out[i].Ask = true
			continue
		}
		if r[5] < 0 || r[5] >= int64(len(refusals)) {
			return nil, unavailable(fmt.Errorf("%s: reply: refusal %d", placeScript.name, r[5]))
		}
		d := waitroom.Decision{Ticket: r[1], Joined: r[4]&flagJoined != 0, Placed: r[4]&flagPlaced != 0,
			Refusal: refusals[r[5]]}
		switch r[0] {
		case replyWaiting:
			d.State, d.Position, d.Line = waitroom.StateWaiting, r[2], max(tail[0], r[2])
			d.Progress = progress
			d.Progress.Pending = r[6]
		case replyAdmitted:
			d.State, d.Until = waitroom.StateAdmitted, time.UnixMicro(r[3])
			if d.Ticket == 0 {
				d.Ticket = p.Visitor.Ticket
			}
		default:
			d.RetryAfter = time.Duration(r[3]) * time.Microsecond
		}
		out[i].Decision = d
	}
	return out, nil
}
