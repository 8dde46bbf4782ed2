package waitroom

import (
	"context"
	"time"
)

// The webhook room.autopilot_changed, coalesced. A limit may move every
// step; the on-call gets at most one rise and one fall per
// AutopilotNoticeGap per room, a fall never held back by a rise before it.
// A move held back is not dropped: the store keeps the limit last sent
// (NoticeRecord; redisstore/lua/autonotice.lua), and once the gap has
// passed the next call sends the limit in effect then, from the limit
// last sent, so the on-call never keeps a stale final state. Every
// instance asks while the limit in effect differs from the last sent it
// knows of (at most once a tick), so a move held back goes out within a
// tick of the gap's end whichever instance closed the step. What is sent
// is the limit in effect: a start_above room turning quiet (the ceiling)
// or on (the controller's limit) is a move too. The operator's pin is
// not news to the operator: it is recorded as sent without a send.

// AutopilotNoticeGap is the least time between two sends of one direction
// (a rise, a fall) for a room.
const AutopilotNoticeGap = time.Minute

// NoticeRecord is what a store keeps of a room's webhook notices.
type NoticeRecord struct {
	Known    bool
	Sent     int       // the limit last sent (or taken as known)
	Up, Down time.Time // when a rise, a fall was last sent
}

// Note is the store's side of AutopilotNotices.AutopilotNotice: limit is
// the limit in effect at now. The first limit seen is taken as known (no
// news); quietly records limit as sent without a send (a pin). Otherwise
// a limit other than the last sent is sent unless one of its direction
// went out within gap. It reports whether to send, and the limit last
// sent before (from) and now (sent).
func (rec *NoticeRecord) Note(now time.Time, limit int, gap time.Duration, quietly bool) (send bool, from, sent int) {
	from = rec.Sent
	switch {
	case !rec.Known || quietly:
		rec.Known, rec.Sent = true, limit
		return false, from, limit
	case limit == rec.Sent:
		return false, from, limit
	}
	last := &rec.Up
	if limit < rec.Sent {
		last = &rec.Down
	}
	if !last.IsZero() && now.Sub(*last) < gap && !now.Before(*last) {
		return false, from, rec.Sent
	}
	*last, rec.Sent = now, limit
	return true, from, limit
}

// AutopilotNotices is the store side of the coalesced webhook, an optional
// ability of a Store (found with As): NoticeRecord.Note, atomically, by
// the store's clock. Errors: ErrUnavailable, ErrClosed.
type AutopilotNotices interface {
	AutopilotNotice(ctx context.Context, room string, limit int, gap time.Duration, quietly bool) (send bool, from, sent int, err error)
}

// notifyAutopilot tells the on-call of the limit in effect v, through
// the store's record of what was sent (see above): only while webhooks
// want the event, and only when v's limit differs from the last sent
// this instance knows of, or it is pinned (recorded quietly).
func (a *Admitter) notifyAutopilot(ctx context.Context, v *AutopilotView) {
	lr := a.lr
	n, ok := a.rs.notify.(AutopilotNotifier)
	if !ok || !n.AutopilotWanted() {
		return
	}
	ns, ok := As[AutopilotNotices](a.rs.store)
	if !ok {
		return
	}
	if known := lr.noticed.Load(); known != 0 && known-1 == int64(v.Limit) {
		return
	}
	send, from, sent, err := ns.AutopilotNotice(ctx, lr.name, v.Limit, AutopilotNoticeGap, v.Reason == ReasonPinned)
	if err != nil {
		return // asked again next tick
	}
	lr.noticed.Store(int64(sent) + 1)
	if send {
		n.AutopilotChanged(lr.name, from, v)
	}
}
