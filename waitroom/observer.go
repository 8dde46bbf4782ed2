package waitroom

import "time"

// Observer hears what the gate and its admitters do, for metrics. Every
// method must be cheap and safe for concurrent use; the waitroom/metrics
// package implements it.
type Observer interface {
	// Request counts a request by its Outcome (Record).
	Request(room string, o Outcome)
	// TicketRejected counts a ticket that came but did not decode.
	TicketRejected(reason string)
	// Admitted counts a visitor this instance let in at once on joining.
	Admitted(room string)
	// Released counts a session ended by "upstream", "leave" or "admin".
	Released(room, how string)
	// Tick counts what one admission tick of this instance did.
	Tick(room string, a Admitted)
	// Room publishes the room's stats snapshot, taken every tick.
	Room(room string, st Stats)
	// Forget drops what was published of a room no longer in service,
	// once its admitter has stopped.
	Forget(room string)
	// Outage counts the start of a store outage; StoreUp says whether the
	// store answers.
	Outage()
	StoreUp(up bool)
	// JoinRefused counts a newcomer turned away without a ticket, by
	// reason: quota, full, challenge, identity.
	JoinRefused(room, reason string)
	// SessionRefused counts a request an admitted session refused, by
	// reason: shared (past session_clients), session_max, sockets (past
	// max_sockets).
	SessionRefused(room, reason string)
	// Challenge counts proofs of work: issued, ok, or why one was refused.
	Challenge(room, result string)
	// Restored counts a place or session put back after a data loss, by
	// kind: waiting, inside, and release (a release the store had lost,
	// applied again).
	Restored(room, kind string)
	// Failover counts a failover this instance noticed: a repair of the
	// store's data (Stats.Repairs) in one room or several at once.
	Failover()
	// TemplateRooms publishes how many rooms filled from the template are
	// in service on this instance.
	TemplateRooms(template string, n int)
	// Waited observes the wait of a visitor who just went inside, from its
	// ticket's issue; SessionEnded the time inside of a session a release
	// ended (by the site or the visitor).
	Waited(room string, d time.Duration)
	SessionEnded(room string, d time.Duration)
}

// Declarer is an Observer that exports a room's series before their first
// event (metrics.Metrics): Apply declares every room and template it puts
// in service, template true for a template (its name labels the rooms it
// fills). An Observer without it hears nothing of this.
type Declarer interface {
	Declare(room string, template bool)
}

type nopObserver struct{}

func (nopObserver) Request(string, Outcome)            {}
func (nopObserver) TicketRejected(string)              {}
func (nopObserver) Admitted(string)                    {}
func (nopObserver) Released(string, string)            {}
func (nopObserver) Tick(string, Admitted)              {}
func (nopObserver) Room(string, Stats)                 {}
func (nopObserver) Forget(string)                      {}
func (nopObserver) Outage()                            {}
func (nopObserver) StoreUp(bool)                       {}
func (nopObserver) JoinRefused(string, string)         {}
func (nopObserver) SessionRefused(string, string)      {}
func (nopObserver) Challenge(string, string)           {}
func (nopObserver) Restored(string, string)            {}
func (nopObserver) Failover()                          {}
func (nopObserver) TemplateRooms(string, int)          {}
func (nopObserver) Waited(string, time.Duration)       {}
func (nopObserver) SessionEnded(string, time.Duration) {}
