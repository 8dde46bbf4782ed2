-- place.lua: Joiner.Place, a gateway's tick of batched placements
-- (waitroom/joinbatch.go). ARGV: the limits block (prelude.lua), then the
-- block's multiple (waitroom.BlockFactor), the number of spans to release
-- and their first and last numbers, then the tickets brought back, FIELDS
-- each: the visitor's id, its ticket (0 for a loose one), when it was
-- issued (microseconds), loose (1/0), its network's key and its block's
-- ('' for none), its client's key ('' for none). KEYS: the room's
-- (prelude.lua), then the join quotas' two hashes at 14 and 16 (K_QA and
-- K_QB in common.lua; K_META for a room without join_limit).
-- Reply: REPLY integers per ticket in the order given: {state (S_),
-- ticket, position, session end or retry after (microseconds), flags
-- (F_, and F_ASK: the store wants the visitor's own decide.lua), refusal
-- (R_), pending ahead}, then {line length, epoch, admitted, departed}.
--
-- Per ticket, what decide.lua does with an unplaced ticket brought back:
-- one in line or inside is answered its standing (so placing twice from
-- two gateways places once); a placeable ticket younger than the placement
-- window takes its place at its number against its network's quota, or
-- goes in at once when nobody waits ahead and both limits allow; a loose
-- one takes a new number at the back; MaxWaiting and the quota refuse.
-- Anything rarer (a ticket of an earlier incarnation, above the counter,
-- up to the last repair's counter, too old, used) is left to decide.lua
-- (F_ASK), which repairs and restores. The batch costs a fixed number of
-- commands, not a few per ticket: one ZMSCORE per lookup, one BITFIELD for
-- the K_PLACED bits read and one for those written, one ZADD for the
-- places, one BITFIELD for their marks, one MGET for the quotas and a SET
-- per network charged, and the positions from a ZCOUNT, a ZRANGEBYSCORE
-- and a GETRANGE per cluster of the batch's numbers (and a BITCOUNT per
-- gap between clusters). Releasing a span sets its bits, as
-- markUsed does, so its numbers stop counting as pending.

local V = LIMIT_ARGS
local BLOCK, NSPANS = tonumber(ARGV[V + 1]), tonumber(ARGV[V + 2])
local FIELDS, REPLY, CHUNK, GAP = 7, 7, 1000, 4096
local F_ASK = 128
local at = V + 3 + 2 * NSPANS
local n = math.floor((#ARGV - at + 1) / FIELDS)
local now = clock()
local L = limits()
local seed, base, grace, floor, pbase, _, seq, mended, _, adm = room()

local reply = {}
for i = 1, n * REPLY + 4 do
  reply[i] = 0
end
local function answer(i, state, ticket, position, u, flags, refusal, pending)
  local o = (i - 1) * REPLY
  reply[o + 1], reply[o + 2], reply[o + 3], reply[o + 4] = state, ticket or 0, position or 0, u or 0
  reply[o + 5], reply[o + 6], reply[o + 7] = flags or 0, refusal or R_NONE, pending or 0
end
if not seed or floor == nil or pbase == nil then
  for i = 1, n do
    answer(i, S_NONE, 0, 0, 0, F_ASK)
  end
  return reply
end

-- The K_PLACED bits to set, as BITFIELD operations, flushed in slices.
local pops = {}
local function flushBits()
  for c = 1, #pops, 4 * CHUNK do
    redis.call('BITFIELD', K_PLACED, unpack(pops, c, math.min(#pops, c + 4 * CHUNK - 1)))
  end
  if #pops > 0 then
    expiring(L.dataTTL, K_PLACED)
  end
  pops = {}
end
local function setBit(t)
  if t >= pbase then
    pops[#pops + 1] = 'SET'
    pops[#pops + 1] = 'u1'
    pops[#pops + 1] = string.format('#%d', t - pbase)
    pops[#pops + 1] = 1
  end
end
-- release sets the bits of lo to hi: whole bytes with one SETRANGE, the
-- ragged ends with the batch's BITFIELD.
local function release(lo, hi)
  lo = math.max(lo, floor + 1, pbase)
  hi = math.min(hi, seq)
  local i, last = lo - pbase, hi - pbase
  while i <= last and i % 8 ~= 0 do
    setBit(pbase + i)
    i = i + 1
  end
  local bytes = math.floor((last + 1 - i) / 8)
  if bytes > 0 then
    redis.call('SETRANGE', K_PLACED, i / 8, string.rep('\255', bytes))
    i = i + bytes * 8
  end
  while i <= last do
    setBit(pbase + i)
    i = i + 1
  end
end
for s = 1, NSPANS do
  release(tonumber(ARGV[V + 1 + 2 * s]), tonumber(ARGV[V + 2 + 2 * s]))
end

local items = {}
for i = 1, n do
  local o = at + (i - 1) * FIELDS
  items[i] = {i = i, id = ARGV[o], t = tonumber(ARGV[o + 1]), issued = tonumber(ARGV[o + 2]),
    loose = ARGV[o + 3] == '1', net = ARGV[o + 4], block = ARGV[o + 5], client = ARGV[o + 6]}
end
table.sort(items, function(a, b)
  if a.loose ~= b.loose then
    return b.loose
  end
  if a.t ~= b.t then
    return a.t < b.t
  end
  return a.i < b.i
end)

-- mscore is ZMSCORE over the items' ids, in slices.
local function mscore(key)
  local out = {}
  for c = 1, #items, CHUNK do
    local ids = {}
    for j = c, math.min(#items, c + CHUNK - 1) do
      ids[#ids + 1] = items[j].id
    end
    local r = redis.call('ZMSCORE', key, unpack(ids))
    for j = 1, #r do
      out[c + j - 1] = tonumber(r[j])
    end
  end
  return out
end
local inside, waiting = {}, {}
if n > 0 then
  inside, waiting = mscore(K_ACTIVE), mscore(K_QUEUE)
end

-- Sort out the standing, the placeable and what decide.lua must see.
local standing, numbered, loose, ids = {}, {}, {}, {}
local young = now - L.placeWithin
for j, it in ipairs(items) do
  if ids[it.id] then
    answer(it.i, S_NONE, 0, 0, 0, F_ASK) -- the same visitor twice: its next request asks
  elseif inside[j] then
    ids[it.id] = true
    if inside[j] > now then
      answer(it.i, S_ADMITTED, 0, 0, inside[j], F_PLACED)
    else
      answer(it.i, S_NONE, 0, 0, 0, F_ASK) -- a session over, not yet removed: decide.lua counts it
    end
  elseif waiting[j] then
    ids[it.id] = true
    it.t = waiting[j]
    standing[#standing + 1] = it
  elseif it.loose then
    ids[it.id] = true
    if it.issued >= young then
      loose[#loose + 1] = it
    else
      answer(it.i, S_NONE, 0, 0, 0, F_ASK)
    end
  else
    ids[it.id] = true
    if it.t < seed or it.t > seq or (mended ~= nil and it.t <= mended) or it.issued < young or
        it.t <= floor or it.t < pbase then
      answer(it.i, S_NONE, 0, 0, 0, F_ASK)
    else
      numbered[#numbered + 1] = it
    end
  end
end
-- The numbered tickets' bits, read in one BITFIELD_RO a slice.
for c = 1, #numbered, CHUNK do
  local ops = {}
  for j = c, math.min(#numbered, c + CHUNK - 1) do
    ops[#ops + 1] = 'GET'
    ops[#ops + 1] = 'u1'
    ops[#ops + 1] = string.format('#%d', numbered[j].t - pbase)
  end
  local r = redis.call('BITFIELD_RO', K_PLACED, unpack(ops))
  for j = 1, #r do
    numbered[c + j - 1].used = r[j] == 1
  end
end

-- The quotas of the batch's networks and blocks, read at once (quotaRead
-- in common.lua), charged on a copy, written at once.
local tats, dirty = {}, {}
if L.joinN > 0 and K_QA ~= K_META then
  local fields, seen = {}, {}
  for _, list in ipairs({numbered, loose}) do
    for _, it in ipairs(list) do
      it.kq, it.kb = nil, nil
      if it.net ~= '' then
        it.kq = 'n:' .. it.net
        if it.block ~= '' then
          it.kb = 'b:' .. it.block
        end
      end
      for _, f in ipairs({it.kq or '', it.kb or ''}) do
        if f ~= '' and not seen[f] then
          seen[f] = true
          fields[#fields + 1] = f
        end
      end
    end
  end
  for c = 1, #fields, CHUNK do
    local part = {unpack(fields, c, math.min(#fields, c + CHUNK - 1))}
    local t = quotaRead(part, now, L)
    for j = 1, #part do
      tats[part[j]] = t[j]
    end
  end
end
-- charge is common.lua's charge with commit, on the batch's copy of the
-- quota times: the network may run N-1 intervals of Per/N ahead of now,
-- its block BLOCK times as many of a BLOCK-th of that.
local function charge(it)
  if L.joinN <= 0 or not it.kq or not tats[it.kq] then
    return true, 0
  end
  local every = L.joinPer / L.joinN
  local tat = tats[it.kq]
  local wait = tat - now - every * (L.joinN - 1)
  local bevery
  if it.kb then
    bevery = every / BLOCK
    wait = math.max(wait, tats[it.kb] - now - bevery * (L.joinN * BLOCK - 1))
  end
  if wait > 0 then
    return false, math.ceil(wait)
  end
  tats[it.kq], dirty[it.kq] = tat + every, true
  if it.kb then
    tats[it.kb], dirty[it.kb] = tats[it.kb] + bevery, true
  end
  return true, 0
end

local zcard = redis.call('ZCARD', K_QUEUE)
local wasEmpty = zcard == 0
local zadds, marks, rmarks = {}, {}, {}
local mark = string.format('%d', now)
local function markSeen(it)
  if indexed(it.t, base) then
    marks[#marks + 1] = 'SET'
    marks[#marks + 1] = 'u56'
    marks[#marks + 1] = string.format('#%d', it.t - base)
    marks[#marks + 1] = mark
  else
    rmarks[#rmarks + 1] = now
    rmarks[#rmarks + 1] = it.id
  end
end
for _, it in ipairs(standing) do
  markSeen(it)
end

-- atOnce is decide.lua's, for a ticket placed while nobody waits: the
-- batch's bits go first, so pendingBelow sees them.
local joined, admitted, limited, full = 0, 0, 0, 0
local held = grace ~= nil and now < grace
local function atOnce(it)
  if held or zcard > 0 then
    return false
  end
  flushBits()
  if live(now) >= L.max or pendingBelow(it.t, floor, pbase) > 0 then
    return false
  end
  if masterChanged() then
    -- A new master: its free slots may be sessions it lost. decide.lua
    -- repairs; the tickets wait in line meanwhile.
    held = true
    return false
  end
  local b = refill(now, L)
  local ok = take(b)
  save(b, L)
  if not ok then
    return false
  end
  local u = admit(it.id, now, firstSession(L))
  expiring(L.dataTTL, K_ACTIVE)
  redis.call('HSET', K_BEGAN, it.id, now)
  expiring(L.dataTTL, K_BEGAN)
  if not L.random and (adm == nil or it.t > adm) then
    adm = it.t
    redis.call('HSET', K_META, 'adm', adm)
  end
  if L.clients > 0 or L.sessionMax > 0 then
    local client = ''
    if it.client ~= '' then
      client = string.format('%s@%d', it.client, math.floor(now / 1000000))
    end
    if redis.call('HSET', K_CLIENTS, it.id, string.format('%d|%s', now, client)) == 1 then
      expiring(L.dataTTL, K_CLIENTS)
    end
  end
  admitted = admitted + 1
  answer(it.i, S_ADMITTED, it.t, 0, u, F_JOINED + F_PLACED)
  return true
end

-- The loose tickets' numbers, taken at once: those refused are released.
local nextLoose = 0
if #loose > 0 then
  seq = redis.call('HINCRBY', K_META, 'seq', #loose)
  nextLoose = seq - #loose + 1
  bump('issued', #loose, L.dataTTL)
  if L.prequeue then
    redis.call('HSETNX', K_META, 'preq_min', nextLoose)
    redis.call('HSET', K_META, 'preq_max', seq)
  end
end
local placed, taken = {}, {}
for _, list in ipairs({numbered, loose}) do
  for _, it in ipairs(list) do
    if it.loose then
      it.t, nextLoose = nextLoose, nextLoose + 1
    end
    if it.used or taken[it.t] then
      answer(it.i, S_NONE, 0, 0, 0, F_ASK)
    elseif L.maxWaiting > 0 and zcard >= L.maxWaiting then
      full = full + 1
      answer(it.i, S_NONE, 0, 0, 0, 0, R_FULL)
      if it.loose then
        setBit(it.t)
      end
    else
      local ok, retry = charge(it)
      if not ok then
        limited = limited + 1
        answer(it.i, S_NONE, 0, 0, retry, 0, R_QUOTA)
        if it.loose then
          setBit(it.t)
        end
      else
        setBit(it.t)
        taken[it.t] = true
        joined = joined + 1
        if not atOnce(it) then
          if zcard == 0 and own(it.t, seed) then
            -- A new line: its K_SEEN entries start at its first ticket.
            redis.call('DEL', K_SEEN)
            base = it.t
            redis.call('HSET', K_META, 'base', base, 'sweep', 0)
          end
          zcard = zcard + 1
          zadds[#zadds + 1] = it.t
          zadds[#zadds + 1] = it.id
          markSeen(it)
          placed[#placed + 1] = it
        end
      end
    end
  end
end

-- Write the batch: places, marks, bits, quotas, totals.
for c = 1, #zadds, 2 * CHUNK do
  redis.call('ZADD', K_QUEUE, unpack(zadds, c, math.min(#zadds, c + 2 * CHUNK - 1)))
end
if #zadds > 0 and wasEmpty then
  redis.call('PEXPIRE', K_QUEUE, L.dataTTL) -- a new line is a new key
end
for c = 1, #marks, 4 * CHUNK do
  redis.call('BITFIELD', K_SEEN, unpack(marks, c, math.min(#marks, c + 4 * CHUNK - 1)))
end
if #marks > 0 then
  expiring(L.dataTTL, K_SEEN)
end
for c = 1, #rmarks, 2 * CHUNK do
  redis.call('ZADD', K_RSEEN, unpack(rmarks, c, math.min(#rmarks, c + 2 * CHUNK - 1)))
end
if #rmarks > 0 then
  expiring(L.dataTTL, K_RSEEN)
end
flushBits()
local list = {}
for f in pairs(dirty) do
  list[#list + 1] = f
  list[#list + 1] = math.ceil(tats[f])
  if #list >= 2 * CHUNK then
    quotaWrite(list, now, L)
    list = {}
  end
end
if #list > 0 then
  quotaWrite(list, now, L)
end
bump('joined', joined, L.dataTTL)
bump('admitted', admitted, L.dataTTL)
counted(now, admitted, L.dataTTL)
bump('limited', limited, L.dataTTL)
bump('full', full, L.dataTTL)

-- Positions: each place in line counts the places and the pending numbers
-- below its ticket (decide.lua's ZRANK + 1 + pendingBelow). The batch's
-- sorted tickets fall into clusters, split wherever two neighbours lie
-- more than GAP apart, so the cost follows the batch, not the line: one
-- old ticket replayed far below the rest adds a cluster, not a walk over
-- everything between. Per cluster one ZCOUNT below its first ticket, one
-- ZRANGEBYSCORE and one GETRANGE over its span; the pending numbers
-- between clusters take one BITCOUNT each, accumulated from
-- pendingBelow of the first ticket, and the line's length reuses them.
local lo = math.max(floor + 1, pbase)
-- pendingIn counts the pending numbers in a..b-1, as pendingBelow does.
local function pendingIn(a, b)
  a = math.max(a, lo)
  if b <= a then
    return 0
  end
  return (b - a) - redis.call('BITCOUNT', K_PLACED, a - pbase, b - 1 - pbase, 'BIT')
end
-- POP[b] is the set bits of byte b; HIGH[k] the byte's bit k from the top.
local POP, HIGH = {[0] = 0}, {}
for b = 1, 255 do
  POP[b] = POP[math.floor(b / 2)] + b % 2
end
for k = 0, 7 do
  HIGH[k] = 2 ^ (7 - k)
end
-- setIn counts the set bits of numbers a..b-1 in bits, K_PLACED's bytes
-- from b0: bytes whole by POP, the ragged ends bit by bit.
local function bitAt(bits, b0, off)
  local byte = string.byte(bits, math.floor(off / 8) - b0 + 1) or 0
  return math.floor(byte / HIGH[off % 8]) % 2
end
local function setIn(bits, b0, a, b)
  local n, x, last = 0, a - pbase, b - pbase
  while x < last and x % 8 ~= 0 do
    n, x = n + bitAt(bits, b0, x), x + 1
  end
  while x + 8 <= last do
    n, x = n + POP[string.byte(bits, x / 8 - b0 + 1) or 0], x + 8
  end
  while x < last do
    n, x = n + bitAt(bits, b0, x), x + 1
  end
  return n
end
local inLine = {}
for _, list in ipairs({standing, placed}) do
  for _, it in ipairs(list) do
    inLine[#inLine + 1] = it
  end
end
table.sort(inLine, function(a, b) return a.t < b.t end)
local pendingAll
if #inLine > 0 then
  local pending, x = pendingIn(lo, inLine[1].t), inLine[1].t
  local c = 1
  while c <= #inLine do
    local d = c
    while d < #inLine and inLine[d + 1].t - inLine[d].t <= GAP do
      d = d + 1
    end
    local t1, tk = inLine[c].t, inLine[d].t
    pending, x = pending + pendingIn(x, t1), t1
    local below = redis.call('ZCOUNT', K_QUEUE, '-inf', excl(t1))
    local scores, bits, b0 = {}, '', 0
    if tk > t1 then
      scores = redis.call('ZRANGEBYSCORE', K_QUEUE, t1, excl(tk), 'WITHSCORES')
      local from = math.max(t1, lo)
      if tk > from then
        b0 = math.floor((from - pbase) / 8)
        bits = redis.call('GETRANGE', K_PLACED, b0, math.floor((tk - 1 - pbase) / 8))
      end
    end
    local si = 2
    for e = c, d do
      local it = inLine[e]
      while si <= #scores and tonumber(scores[si]) < it.t do
        below, si = below + 1, si + 2
      end
      local from = math.max(x, lo)
      if it.t > from then
        pending = pending + (it.t - from) - setIn(bits, b0, from, it.t)
      end
      x = math.max(x, it.t)
      it.position, it.pending = below + 1 + pending, pending
    end
    c = d + 1
  end
  pendingAll = pending + pendingIn(x, seq + 1)
  for _, it in ipairs(standing) do
    answer(it.i, S_WAITING, it.t, it.position, 0, F_PLACED, R_NONE, it.pending)
  end
  for _, it in ipairs(placed) do
    answer(it.i, S_WAITING, it.t, it.position, 0, F_JOINED + F_PLACED, R_NONE, it.pending)
  end
else
  pendingAll = pendingBelow(seq + 1, floor, pbase)
end
local p = redis.call('HMGET', K_STATS, 'admitted', 'abandoned', 'left')
local o = n * REPLY
reply[o + 1] = zcard + pendingAll
reply[o + 2] = seed
reply[o + 3] = tonumber(p[1]) or 0
reply[o + 4] = (tonumber(p[2]) or 0) + (tonumber(p[3]) or 0)
return reply
