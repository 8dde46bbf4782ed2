-- prelude.lua: what every script needs before anything else: the names of
-- its keys, the layout of ARGV, units and bounds, the clock. scripts.go
-- (assemble) puts it first in every script; in those that change a room,
-- common.lua, the helpers, follows it. Numbers here that Go also spells
-- are checked against Go's by TestScripts_ConstantsAgreeWithGo.
-- Redis runs a script's whole chunk on every call, so this part creates
-- nothing a hot path would not use (decide.lua answers a poll before
-- common.lua's functions are even defined). See doc.go for the data model.
--
-- Units: times are microseconds since the Unix epoch from Redis's TIME (the
-- only clock), ticket numbers are seeded in the same unit; both stay below
-- 2^53, so they are exact as Lua numbers and as sorted set scores. A number
-- handed to redis.call is formatted with 17 digits and stays exact; never
-- build a command argument with `..` or tostring, which keep only 14.

local K_META, K_QUEUE, K_SEEN, K_RSEEN, K_ACTIVE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_BUCKET, K_STATS, K_MINUTE, K_RESTORED = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local K_OVERRIDE, K_PLACED, K_CLIENTS, K_BEGAN = KEYS[10], KEYS[11], KEYS[12], KEYS[13]

-- The ARGV block decide.lua and admit.lua share (keys.go, limitArgs): key
-- lifetimes in milliseconds, then the room's limits with durations in
-- microseconds, then the override's lifetime, which is not the meta
-- keys' when the room has an Idle. A script's own arguments follow it,
-- from LIMIT_ARGS + 1.
local A_DATA_TTL, A_META_TTL, A_MAX, A_RATE_N, A_RATE_PER, A_BURST = 1, 2, 3, 4, 5, 6
local A_TTL, A_RENEW, A_ABANDON, A_GRACE, A_RANDOM = 7, 8, 9, 10, 11
local A_JOIN_N, A_JOIN_PER, A_MAX_WAITING, A_CLIENTS, A_SESSION_MAX, A_PREQUEUE = 12, 13, 14, 15, 16, 17
local A_PLACE_WITHIN, A_OVERRIDE_TTL, A_CLIENT_QUIET = 18, 19, 20
local LIMIT_ARGS = 20

-- Where decide.lua's reply says the visitor stands (store.go: replyNone,
-- replyWaiting, replyAdmitted), what else it did (the F_ flags, added up),
-- and why it turned the visitor away (the R_ refusals); what decide.lua is
-- asked to do for a visitor it does not know (J_, waitroom.Join).
local S_NONE, S_WAITING, S_ADMITTED = 0, 1, 2
local F_JOINED, F_RENEWED, F_PLACED, F_GRACE, F_BACK_IN_LINE, F_BACK_INSIDE, F_REPAIRED = 1, 2, 4, 8, 16, 32, 64
local R_NONE, R_QUOTA, R_FULL, R_CHALLENGE, R_SHARED, R_SESSION_MAX = 0, 1, 2, 3, 4, 5
local J_NONE, J_TICKET, J_NUMBER = 0, 1, 2

-- One K_SEEN entry per ticket: a 56-bit big-endian time of the last poll,
-- 0 for "not waiting". 56 bits hold microseconds until the year 2255.
local SEEN_BYTES = 7

-- Work bounds per call, so a huge line never blocks Redis for long: a tick
-- admits or drops at most BATCH visitors from the head, removes at most
-- BATCH expired sessions, and sweeps SWEEP entries of K_SEEN for the
-- abandoned; K_SEEN is trimmed once REBASE entries before the line's head
-- are dead.
local BATCH, SWEEP, SWEEP_MAX, REBASE = 1000, 4096, 65536, 4096

-- Repairs after lost writes (a failover; see mend in common.lua and
-- doc.go): the counter moves JUMP past the highest ticket known, the
-- numbers it skips marked used in K_PLACED (128 bytes); for HOLD
-- microseconds after a repair (at most the room's recovery grace) nobody
-- new goes in, so the admitted visitors whose sessions vanished find
-- their slots. A ticket more than MEND_MAX past the counter moves
-- nothing (see decide.lua), nor does one more than MEND_MAX past where the
-- first repair under the same master found it (mbase): so the repairs of
-- one replication id move the counter at most MEND_MAX plus a JUMP each,
-- and K_SEEN, 7 bytes a ticket from the line's head, and K_PLACED, a bit
-- a ticket, span at most about that many dead numbers per failover (7MB
-- and 128KB); before mbase, each repair could move it MEND_MAX again.
local JUMP, HOLD, MEND_MAX = 1024, 1000000, 1048576

local function clock()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]
end

-- stamp is a K_SEEN entry for time us: its seven bytes, most significant
-- first. Written with SETRANGE, which costs less than BITFIELD's bit by bit
-- SET and lays out the same bytes.
local function stamp(us)
  local b7 = us % 256
  us = (us - b7) / 256
  local b6 = us % 256
  us = (us - b6) / 256
  local b5 = us % 256
  us = (us - b5) / 256
  local b4 = us % 256
  us = (us - b4) / 256
  local b3 = us % 256
  us = (us - b3) / 256
  local b2 = us % 256
  return string.char((us - b2) / 256, b2, b3, b4, b5, b6, b7)
end
