// Package redisstore is the waitroom.Store that many gateway instances
// share through one Redis (a single server, a Sentinel group or a Redis
// Cluster, through go-redis's UniversalClient). They behave as one waiting
// room: one line, one count of sessions, one admission rate, whatever their
// number and however their clocks drift.
//
// Every change is one Lua script (lua/decide.lua, admit.lua, release.lua,
// override.lua, shuffle.lua, useroom.lua, definition.lua, touch.lua,
// autopilot.lua, autostart.lua, autonotice.lua; stats.lua reads), so
// Redis runs it atomically, and every script reads the time with TIME:
// Redis is the only clock. The
// scripts share lua/prelude.lua (key names, units, the clock) and
// lua/common.lua (helpers) as text, put in front of them when they are
// loaded. Each instance runs its own admission ticker and no leader is
// needed, since a tick is one atomic script bounded by max_active and the
// shared token bucket; three instances ticking admit exactly what one
// would, only sooner.
//
// # Data model
//
// Room R lives in keys that share the hash tag {wr:R} (the prefix is
// configurable), so a room sits in one Cluster slot:
//
//	{wr:R}:meta      hash        seq (last ticket), seed, base and sweep (see seen), grace (end of the
//	                             recovery grace), ttl (the data keys' lifetime, for release.lua),
//	                             replid (the master that served the room), adm (the highest ticket
//	                             admitted, FIFO rooms), and the last repair's mend, lost, skip and
//	                             the count repairs (see Repairs)
//	{wr:R}:queue     sorted set  visitor id by ticket number: the line; ZRANK is the position
//	{wr:R}:seen      string      last poll of each waiting visitor of this incarnation, 7 bytes at
//	                             offset 7 × (ticket - base): microseconds, big-endian, 0 = none
//	{wr:R}:rseen     sorted set  visitor id by last poll, for restored tickets only
//	{wr:R}:active    sorted set  visitor id by session end (microseconds)
//	{wr:R}:bucket    hash        tokens, last refill: the admission token bucket
//	{wr:R}:stats     hash        joined, admitted, released, expired, abandoned, left (waiting
//	                             visitors who released their place; with abandoned, the line's
//	                             departures that waitroom.Progress counts)
//	{wr:R}:minute    hash        admissions per second, one field per second of the last minute
//	{wr:R}:restored  set         ids restored this incarnation, so each is restored once
//	{wr:R}:override  hash        the runtime override (admin API): max_active, admit_rate as
//	                             written in YAML ("300/m", "unlimited"), mode, message, and
//	                             changed (microseconds); a field absent keeps the configuration
//	{wr:R}:placed    string      a bit per ticket from pbase on, set once the ticket is used (the
//	                             placement window, common.lua)
//	{wr:R}:clients   hash        visitor id to "started|client@seen,…": a session's first use and
//	                             its clients (session_max, session_clients)
//	{wr:R}:began     hash        visitor id to when its session began (microseconds, TIME): for
//	                             ReleaseAt (see Replayed releases); written with the admission
//	                             (a tick's all in one HSET), removed wherever a session leaves
//	                             active, the lifetime of the data keys; no field reads as 0
//	{wr:R}:autostart hash        autopilot.start_above (autostart.lua): on, calm (since when the
//	                             conditions for quiet hold), known, and samples of the join count
//	                             (s<i>, j<i>); a day after its last use
//	{wr:R}:qa, :qb   hash        the join quotas (join_limit): "n:<network>" and "b:<block>" to
//	                             their GCRA times, "_g" the generation each holds (common.lua,
//	                             quotaRead); they take turns, each expiring once its latest time
//	                             has passed
//
// Two more keys serve every room, each under a hash tag of its own; they
// never meet a room's keys, which carry a suffix after the tag, and room
// names hold no colon:
//
//	{wr:tpl:T}       sorted set  room by last use (microseconds): template T's rooms in use
//	                             (UseRoom), at most its max_rooms; expires twice idle after the last use
//	{wr:defs}        hash        the rooms created at run time, each body under its name, and
//	                             #version, which every put and delete moves on; never expires
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
// by MEMORY USAGE, 137 by the growth of used_memory; with 1,000,000
// (BenchmarkRedisStore_MillionWaiting) 125 and 133. Abandonment is then
// found by sweeping that string (4096 entries a tick, so a huge line is
// swept over several ticks) rather than by a range query; the visitor at
// the head is always checked before it goes in, so nobody stale is
// admitted, and until the sweep reaches them abandoned visitors still count
// as waiting, as the contract allows. Polls a gate answered from the
// ticket's anchor (waitroom.Progress) reach the string through touch.lua,
// a tick's marks in one call before the tick: each mark is written where
// decide.lua would put it, blindly (a mark for a ticket gone from the line
// is found by the sweep with nobody behind it and cleared), and never past
// the string's end, a thousand marks a BITFIELD ("SET u56 #i" lays out
// stamp's seven bytes), so a poll costs Redis a thousandth of a command
// for its mark. (Merging a stretch's marks with GETRANGE and SETRANGE
// costs fewer commands but more CPU, about 20 ns a byte copied in Lua,
// unless one ticket in five is marked.) Polls near the front are answered
// from the line's first 128 tickets Stats returns (stats.lua: one ZRANGE,
// one BITCOUNT; none while a pending ticket counts ahead of the last of
// them), and marked the same way. Admit trims the string's dead front
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
// A room whose data is gone while a gateway knows it had tickets
// (waitroom.Visitor.Known: the highest ticket the gateway saw lately,
// its ticks' Stats.Epoch among them, below the new seed) lost it:
// decide.lua starts the recovery grace on that call, before anyone is let
// in at once. Otherwise a newcomer could take the slot of an admitted visitor
// that a gateway still serves on its ticket's word (store.on_error) or
// from its session cache, which the store, empty, cannot know: with
// max_active 1 both were inside, in either order of arrival.
//
// # Repairs
//
// A failover loses writes while the room stays: Redis replicates
// asynchronously, so the replica promoted lacks the last writes of its
// master (joins, placements, admissions, releases), while the seed and
// everything older are there. The store finds it three ways, each in the
// script that then repairs, atomically:
//
//   - the counter is behind a ticket: a waiting visitor's poll finds its
//     ticket above seq (the hot path reads seq already), a ticket brought
//     back is above it, or the gateway's Visitor.Known is (an argument:
//     no command);
//   - the master changed: K_META's replid is not the server's
//     master_replid (INFO replication, about 2.5µs of Redis, measured with
//     INFO commandstats: 2.44µs a call against TIME's 0.20). admit.lua
//     asks once a tick, before anything moves; decide.lua asks only where
//     it matters and is rare: a ticket whose place or session the store
//     should hold and does not, and a newcomer about to be let in at once
//     (a free slot may be a lost session). The hot paths ask nothing;
//   - admissions lost: in a room that admits from the head (not Random),
//     every ticket up to the highest admitted went in or was dropped, and
//     each admission writes that high-water mark (adm) in the same script.
//     A gateway's Visitor.KnownAdmitted above adm (the highest ticket its
//     ticks admitted, Admitted.Highest, or an admitted ticket it served;
//     an argument, read with the hot path's HMGET) means the admissions
//     above adm were lost: their visitors are still in line, at its head,
//     and every position behind would grow by their number;
//   - (outside the store) a gateway that notices a repair in Stats.Repairs
//     drops its session cache for the room and applies again the releases
//     it passed on in the last 30 seconds (waitroom/repair.go).
//
// mend (common.lua) then treats the gap like the full loss: the counter
// moves 1024 past the highest ticket known (hi), so no number is handed
// out twice again; the tickets from the old counter to hi were handed out
// and stay pending, so the places behind count them and no position grows
// when their holders come back; the 1024 after hi are marked used in
// K_PLACED (128 bytes, one SETRANGE), since only gateways that have not
// spoken yet could hold one, and one brought back is placed by number,
// once. A jump as large as the time since the seed (re-seeding from the
// clock, as a full loss does) would make K_SEEN, 7 bytes a ticket from the
// line's head, and K_PLACED, a bit a ticket, span millions of dead
// entries, megabytes, until the line moved past them; 1024 costs 7KB and
// 128 bytes at most. A number more than MEND_MAX (2^20) past the counter
// moves nothing, nor one more than MEND_MAX past the counter the first
// repair under the same master found (mbase, kept with the replid): the
// repairs of one replication id move the counter at most 2^20 plus a jump
// each, 7MB of K_SEEN and 128KB of K_PLACED per failover (a holder of the
// cookie keys minting tickets cannot grow them further). mend records the counter (mend), the time (lost) and
// the server's replid, counts the repair (repairs, read by Stats), and
// holds admissions for a second (at most the recovery grace): the grace's
// rule (nobody in at once, ticks let in only tickets older than the seed)
// runs that long, so the admitted visitors whose sessions were lost find
// their slots. Then, once per visitor (K_RESTORED), a ticket up to mend
// that the store does not hold is put back as after a full loss: inside
// while a slot is free if its admission still runs, else at its number
// in line; a place only within abandon_after of the repair, and only for
// a ticket seen within abandon_after before it. A failover loses only the
// last waitroom.LossWindow (30 s) of writes, so the cookie must be sealed
// before the repair (waitroom.SealSkew for the gateway's clock) and its
// admission must have begun (Visitor.Entered), or its ticket been issued
// within the placement window, at most LossWindow before it: any older
// session or place was on a replica, and its end (a release, a leave, a
// revocation) was not lost, so a copy of its cookie gets nothing.
// release.lua adds a session it ends after a repair to K_RESTORED (for
// the room's data lifetime), so a copy sealed before the repair gets
// nothing either.
//
// readmit (common.lua) puts lost admissions back at once, on the first
// tick or poll that carries a KnownAdmitted above adm: the visitors in
// line above adm and at or below it go into the active set with a tick's
// first session (short until used), and adm moves to it. They were
// inside, so counting them is what keeps max_active true: left out, each
// would let the new master admit one more while they are on the site. If
// slots were reused inside the lost window (a release or expiry lost too;
// the gateways' replay of releases fixes the first) they may exceed
// max_active for a moment; they go in all the same, since they really are
// inside, and nobody new goes in until the count drops below. The one
// kind in that range that was not inside is a pending ticket placed late
// by number within the lost window: it stood at the head, next in, so it
// goes in a tick early and nobody is overtaken. A call moves at most
// max_active + BATCH visitors: the lost admissions still inside hold at
// most max_active slots and one tick admits at most BATCH, so more can
// only be admissions whose sessions ended within the window; any left
// past the cap are moved by the next call (adm stops at the last moved).
// A room with no adm (none admitted yet on this master, or data from
// before adm) repairs nothing this way. A gateway that finds a repair in
// a tick's Stats also stops answering polls from anchors minted before it
// (waitroom/anchored.go): those were minted against progress the new
// master lost, and would show positions grown by the lost admissions.
//
// The window between the promotion and the detection: until the new
// master's first tick (a tick of any gateway), or the first request that
// meets a ticket above the counter, a lost place or session, or a free
// slot, nothing is repaired. Inside it, a number may be handed out twice
// (to a newcomer through a gateway that saw none of the lost ones), and
// the visitor holding the other copy then shares its place; both are in
// line, and once the repair runs every later number is past both. The
// hot paths of visitors whose data survived answer as before. Ticks
// admit nobody on a new master before mend: the check is the tick's first
// step. So max_active holds through a failover, with no allowance: a lost
// admission's holder finds its slot taken only by someone who entered
// before the switch, and goes to the front of the line at its number.
// A release lost stays lost to the store until a gateway applies it
// again (the 30 seconds it keeps them cover the lag and the switch; see
// Replayed releases), or its session runs out. Another replid is not always a failover: a master
// whose first replica attaches, one that kept no backlog, or a restart
// from its files takes a new one too; each then costs a repair (a jump
// of 1024 numbers and a second's hold), which is cheap.
//
// # Replayed releases
//
// A gateway applies again, after a repair, the releases it passed on in
// the last 30 seconds (waitroom/repair.go), and a visitor keeps its ID
// across sessions: released at checkout, back in line and admitted again,
// it must not lose the new session to the replay of the old release. So
// every admission records when the session began in began (atOnce in
// decide.lua; a tick's admissions in one HSET after admit.lua's loop), by
// TIME; release.lua answers with TIME too, which the gateway keeps with
// the release, and given it back (ReleaseAt's began, ARGV[2]) ends the
// session only if its began is at or before it, answering "not found"
// otherwise; a place in line is given up whatever ARGV[2] says. Sessions
// a repair puts back began before the loss: readmit records its holder's
// last poll in line (K_SEEN, K_RSEEN: a release after it was for that
// place or its session, and one of an earlier session is older than the
// place, which this master holds, as replication keeps order), decide.lua's
// restore from a cookie its ENTERED, and either with nothing to go by no
// field, which reads as 0: any replay ends it. Every path that takes a
// session out of active (release.lua, admit.lua's expiry, decide.lua's
// session_max and expired session) takes its field out of began, and
// ticks keep the key's lifetime with the others.
//
// Clock skew: began and the release's time come from the server that ran
// each script. A session that began on the old master, before or after
// the release, carries that server's clock and compares exactly. One that
// began on the new master after the failover is misjudged (ended by the
// replay) only if the new master's clock runs behind the old one's by
// more than the time between the release and that session; the release
// was taken by the old master before it died or froze, and the promotion
// comes down-after-milliseconds (Sentinel) or cluster-node-timeout
// (Cluster) later at least, so the skew would have to exceed that:
// seconds, against the milliseconds of hosts kept by NTP. The exception
// is split brain: a frozen master thawed after the promotion may take a
// release before it learns it was demoted (the window min-replicas-to-write
// bounds), and a session that began on the new master within that window
// plus the skew before the release may be ended. A session restored from
// its cookie is compared in whole seconds of the gateway's clock
// (ENTERED; waitroom.SealSkew bounds that clock's skew), so one that began
// within a second plus that skew after the release may be ended.
//
// Cost: the hot paths (a poll, an admitted visitor's request) touch
// nothing new; an admission at once adds an HSET and a PEXPIRE NX, a tick
// that admits or expires one HSET and one HDEL for all of them, and every
// tick one PTTL more (keep); measured with this package's benchmarks in
// docs/reliability.md.
//
// Keys expire when a room is no longer used: the counter and the restored
// set a month after the last tick (they must outlive any ticket that may
// come back; every gateway ticks every room it serves, once a second by
// default), the override a month after its last write or tick (an
// operator's pause must hold however quiet the room), the rest after four
// times the longest a session or a place lasts untouched, at least an
// hour. Every tick keeps every key of the room alive (a PTTL read each,
// and a write once half a key's time is gone), so the hot paths need not:
// a poll or an admitted visitor's request refreshes no lifetime, and a
// write that may create a key gives it its lifetime then (PEXPIRE NX),
// knowing from the write's own answer whether it might have (a new line, a
// new field, a last-poll string that the write itself ends), so the common
// case costs nothing. A room with an Idle (one filled in from a template)
// has Idle for both lifetimes instead, so it is gone Idle after its last
// tick; but its override keeps its month, since it may hold a "closed" the
// site asked for (admit.lua is told the override's lifetime apart from the
// meta keys'). Redis must not evict keys (maxmemory-policy noeviction):
// every room key has a TTL, so a volatile-* policy could take a line away,
// and the definitions have none, so an allkeys-* policy could take them.
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
// Redis runs scripts on its one thread, so their time bounds what a server
// serves, and most of it goes to the machinery around each command a script
// calls rather than to the command itself. Decide is one EVALSHA whose
// commonest answers come first and call few commands, before common.lua's
// helpers are even defined (Redis runs a script's whole chunk on every
// call). The cookie says which set to look in first. An admitted visitor's
// request costs TIME and one ZSCORE, and a write at most once per renew
// interval; a waiting visitor's poll TIME, ZSCORE, the line's base (HGET),
// a SETRANGE of its last poll, ZRANK and ZCARD, O(log n); a newcomer at the
// back of a line both ZSCOREs, HMGET, ZCARD, two HINCRBYs, ZADD and
// SETRANGE, its position being the line's length. TestDecide_HotPathCommands
// holds them to that. With a million waiting, a poll takes Redis about 10µs,
// a third of it ZRANK's walk down the skip list.
//
// Admit expires, prunes and admits at most a thousand visitors a tick and
// sweeps 4096 last polls; AdmitN calls the script again for each further
// thousand. With a million waiting, a tick of a full room takes about
// 0.5ms and one that admits a thousand about 6ms; the tick that trims the
// last-poll string, once the head has passed half of it, copies the rest
// (3.5MB at a million, about 6ms more), so that work is bounded per
// admitted visitor, not per tick. Override is one HGETALL of a few fields.
// Stats is a read-only script, and works when Redis refuses writes.
//
// # Failover
//
// The client NewClient makes carries two hooks. A Cluster client reloads
// its slot map when a node stops answering (topology.go): go-redis alone
// reloads it only on MOVED, READONLY or once a minute, so it kept dialling
// a dead master for up to 60 s although its replica served the slot; with
// the hook the store serves again within moments of the promotion
// (TestClusterFailover_KillSlotMaster). And a script is never sent twice
// for one call (retry.go): go-redis resends a command or a pipeline after a
// read timeout, when the first may have run; the hook resends only what
// provably did not run (no connection, or a refusal such as READONLY).
// Through Sentinel, go-redis's failover client follows +switch-master and
// drops its connections to the old master, so it writes to a thawed old
// master only what it had sent it while frozen
// (TestSentinelFailover_KillMaster, TestSentinelFailover_SplitBrain).
// A client that reaches a thawed old master otherwise has its writes taken
// until the sentinels demote it (up to their 10 s INFO period), unless
// the master runs with min-replicas-to-write 1: then it refuses them.
//
// Redis replicates asynchronously, so a promoted replica may lack the last
// writes of its master. After the writes tickets cannot rebuild (admit.lua,
// release.lua, override.lua, the room definitions) the store sends WAIT in
// the script's pipeline, on its connection (durable.go; WithWait, set by
// Open from store.redis.wait_replicas). Failed calls are sorted into a
// closed set of ErrorKinds (errkind.go) for the metrics, and State says
// whether one means a failover under way.
//
// The store needs Redis 7.0 or later (script flags, PEXPIRE NX).
package redisstore
