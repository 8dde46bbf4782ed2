// Package redisstore is the waitroom.Store that many gateway instances
// share through one Redis (a single server, a Sentinel group or a Redis
// Cluster, through go-redis's UniversalClient). They behave as one waiting
// room: one line, one count of sessions, one admission rate, whatever their
// number and however their clocks drift.
//
// Every change is one Lua script (lua/decide.lua, admit.lua, release.lua,
// override.lua; stats.lua reads), so Redis runs it atomically, and every script reads the
// time with TIME: Redis is the only clock. Each instance runs its own
// admission ticker and no leader is needed, since a tick is one atomic
// script bounded by max_active and the shared token bucket; three instances
// ticking admit exactly what one would, only sooner.
//
// # Data model
//
// Room R lives in keys that share the hash tag {wr:R} (the prefix is
// configurable), so a room sits in one Cluster slot:
//
//	{wr:R}:meta      hash        seq (last ticket), seed, base and sweep (see seen), grace (end of the
//	                             recovery grace), ttl (the data keys' lifetime, for release.lua)
//	{wr:R}:queue     sorted set  visitor id by ticket number: the line; ZRANK is the position
//	{wr:R}:seen      string      last poll of each waiting visitor of this incarnation, 7 bytes at
//	                             offset (ticket - base): BITFIELD u56 microseconds, 0 = none
//	{wr:R}:rseen     sorted set  visitor id by last poll, for restored tickets only
//	{wr:R}:active    sorted set  visitor id by session end (microseconds)
//	{wr:R}:bucket    hash        tokens, last refill: the admission token bucket
//	{wr:R}:stats     hash        joined, admitted, released, expired, abandoned
//	{wr:R}:minute    hash        admissions per second, one field per second of the last minute
//	{wr:R}:restored  set         ids restored this incarnation, so each is restored once
//	{wr:R}:override  hash        the runtime override (admin API): max_active, admit_rate as
//	                             written in YAML ("300/m", "unlimited"), mode, message, and
//	                             changed (microseconds); a field absent keeps the configuration
//
// The counter, its seed and the grace share one hash (rather than a :seq
// string beside a :meta hash) because they must live and die together: a
// seed without its counter, or the reverse, would misjudge which tickets
// predate the data.
//
// The line is what grows: 100,000 visitors may wait in one room. A sorted
// set entry with a 22-byte id costs about 120 bytes (skip list node, dict
// entry, the id), so a second sorted set for the last poll, as DESIGN.md
// sketches, would double that. Instead the last poll sits in a flat string
// indexed by ticket: tickets of one incarnation are consecutive, so it
// costs 7 bytes per ticket between the line's head and its tail. Measured
// with 100,000 waiting (TestMemory_PerWaitingVisitor): 128 bytes a visitor
// by MEMORY USAGE, 137 by the growth of used_memory. Abandonment is then
// found by sweeping that string (4096 entries a tick, so a huge line is
// swept over several ticks) rather than by a range query; the visitor at
// the head is always checked before it goes in, so nobody stale is
// admitted, and until the sweep reaches them abandoned visitors still count
// as waiting, as the contract allows. Admit trims the string's dead front
// as the head moves on. Restored tickets are scattered below the seed, so
// their holders, few and only after a data loss, keep a sorted set.
//
// Ticket numbers are Redis's clock in microseconds when the counter is
// created, plus one per join. They stay below 2^53, exact as scores. If
// Redis loses its data the new counter starts above every old ticket, and a
// visitor whose ticket is older than the seed is put back at that ticket's
// place, once (the restored set); the first such return starts the
// recovery grace (waitroom.Limits.RecoveryGrace).
//
// Keys expire when a room is no longer used: the counter and the restored
// set a month after the last join or tick (they must outlive any ticket
// that may come back), the override a month after its last write or tick
// (an operator's pause must hold however quiet the room), the rest after
// four times the longest a session or a place lasts untouched, at least an
// hour; a key is refreshed once half
// its time is gone, so refreshing costs a PTTL read, rarely a write. Redis must not evict keys
// (maxmemory-policy noeviction): every key has a TTL, so a volatile-*
// policy could take a line away.
//
// # Overrides and admission on demand
//
// override.lua merges the fields it is given into the override hash (or
// deletes it) and stamps changed with TIME, never earlier than the stamp
// before; Override reads the hash with one HGETALL, and skips fields it
// does not know, so instances of an older version read a newer one's.
// AdmitN is admit.lua with two more arguments, a count and "leave the
// bucket alone", so a tick and an admission on demand share one loop: the
// same expiry, the same stale check, the same first session, the same
// counters.
//
// With Limits.Random a tick or AdmitN picks a place uniformly among the
// visitors it may let in (everyone, or during the recovery grace only the
// restored tickets, which stand first) and reads it with ZRANGE by index,
// O(log n) like the head. Redis seeds Lua's math.random the same way every
// time it starts (before 7.0, before every script), so admit.lua reseeds it
// from TIME on each random call: the picks are fair and do not repeat from
// tick to tick, though not secret.
//
// # Cost
//
// Decide is one EVALSHA: for an admitted visitor one sorted set lookup, and
// a write at most once per renew interval; for a waiting one a lookup, a
// BITFIELD write and a ZRANK, O(log n). Admit expires, prunes and admits at
// most a thousand visitors a tick; AdmitN calls the script again for each
// further thousand. Override is one HGETALL of a few fields. Stats is a read-only script, and works
// when Redis refuses writes.
package redisstore
