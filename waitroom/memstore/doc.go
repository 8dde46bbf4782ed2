// Package memstore is the embedded waitroom.Store: every room lives in the
// process's memory, for a single gateway instance. Several instances need
// the Redis store instead, since each memstore keeps its own line.
//
// Each room sits behind its own mutex and keeps:
//
//   - the line as a skip list with spans in ticket order, so a visitor's
//     position is found in O(log n) however long the line, and a ticket
//     restored from an earlier incarnation can go in ahead of later ones;
//   - the same visitors in a list by last poll, so pruning the abandoned
//     looks only at the stale ones, from the front;
//   - the active sessions in a min-heap by expiry;
//   - a token bucket for the admission rate and a ring of per-second
//     counters for the admissions of the last minute;
//   - the runtime override (SetOverride), copied in and out, so callers
//     never share it with the room.
//
// Rooms filled in from templates come and go: a room whose limits carry an
// Idle is dropped from the store when another room is created and nobody
// used it for longer (reads do not count), unless it holds an override,
// which may be a "closed" the site asked for. UseRoom keeps, per template,
// each room's last use; the definitions are a map with a version counter.
//
// Ticks and AdmitN take the line's head, or with Limits.Random a uniformly
// random place among those eligible: the skip list's spans find the k-th
// visitor in O(log n), so a random pick costs what a head pick does. AdmitN
// runs the tick's loop with a count of its own and without the token
// bucket; immediate admissions and ticks still spend tokens.
//
// Time comes from one clock (WithClock; time.Now by default), read once per
// call under the room's lock. A clock that steps backwards is taken to stand
// still, so nothing in a room ever sees time run backwards.
//
// Ticket numbers start at the clock in microseconds when the room is first
// used. After a restart with the same cookie keys, a returning visitor whose
// ticket is older than that seed goes back to the place its ticket gives,
// ahead of everyone who arrived since; this happens once per visitor, so a
// session or place lost later in this incarnation is lost as anyone's is.
// The first such return starts the recovery grace (Limits.RecoveryGrace),
// once per incarnation: until it ends nobody goes in at once and ticks let
// in only restored tickets, so the returning holders retake their places
// before the newcomers who found the line empty.
package memstore
