package waitroom

import (
	"strconv"
	"time"
)

// Notifier hears what webhooks tell a site (the gateway turns each call
// into an event). Every instance may notice the same fact; each call
// carries a fact string that every instance noticing it names alike, so
// the event is sent once. Calls must not block.
type Notifier interface {
	// QueueStarted: the room's line went from empty to not empty, as this
	// instance's tick saw; QueueDrained: back to empty. These have no fact
	// every instance shares; the gateway sends each at most once a minute
	// per room.
	QueueStarted(room string, waiting int64)
	QueueDrained(room string)
	// ModeChanged: the room's mode in effect changed; by is "admin",
	// "upstream" or "config". Closed rooms (reject) are also RoomClosed.
	ModeChanged(room string, from, to Mode, by, fact string)
	RoomClosed(room, by, fact string)
	// VisitorAdmitted: a visitor with the site's signed identity went
	// inside (the only ones the site can tell by name).
	VisitorAdmitted(room, visitor, account string, until time.Time, fact string)
}

type nopNotifier struct{}

func (nopNotifier) QueueStarted(string, int64)                                {}
func (nopNotifier) QueueDrained(string)                                       {}
func (nopNotifier) ModeChanged(string, Mode, Mode, string, string)            {}
func (nopNotifier) RoomClosed(string, string, string)                         {}
func (nopNotifier) VisitorAdmitted(string, string, string, time.Time, string) {}

// noticeLine tells the notifier when the line starts or drains, between
// two ticks' stats.
func (rs *Rooms) noticeLine(room string, before, now Stats, first bool) {
	switch {
	case first:
	case before.Waiting == 0 && now.Waiting > 0:
		rs.notify.QueueStarted(room, now.Waiting)
	case before.Waiting > 0 && now.Waiting == 0:
		rs.notify.QueueDrained(room)
	}
}

// noticeMode tells the notifier when the mode in effect changed with an
// override (the admin API, the site's command), named by the override's
// stamp, which every instance reads alike.
func (rs *Rooms) noticeMode(room string, before, now *Effective) {
	if before == nil || before.Mode == now.Mode {
		return
	}
	by, fact := now.Override.By, "cleared"
	if by == "" {
		by = "admin"
	}
	if !now.Override.Changed.IsZero() {
		fact = strconv.FormatInt(now.Override.Changed.UnixMicro(), 10)
	}
	rs.notify.ModeChanged(room, before.Mode, now.Mode, by, fact)
	if now.Mode == ModeReject {
		rs.notify.RoomClosed(room, by, fact)
	}
}
