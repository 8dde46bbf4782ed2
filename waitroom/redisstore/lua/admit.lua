-- admit.lua: Store.Admit, one admission tick, and Store.AdmitN. ARGV: the
-- limits block (prelude.lua); then the most to admit ('' for a tick's
-- BATCH) and 1 to leave the token bucket alone (AdmitN), then the
-- highest ticket the gateway saw admitted in the room lately
-- (waitroom.Visitor.KnownAdmitted, 0 for none). Reply: {admitted,
-- abandoned, expired, more, repaired, highest, readmitted}, what this call
-- did; more is 1 when it stopped at its own bounds (BATCH steps, or the
-- count asked for) with eligible visitors left, rather than for want of
-- visitors, slots or tokens; repaired is 1 when it found the room on a new
-- master, or lost admissions, and repaired it first (mend and readmit in
-- common.lua); highest is the highest ticket it admitted (0 for none, and
-- in a random room), which the gateway keeps as its KnownAdmitted;
-- readmitted counts the lost admissions it put back inside.
-- The order of the steps is the contract's: sessions that ran out free their
-- slots first, the abandoned go before anyone is let in.

local L = limits()
-- A tick admits as many as the limits allow, a BATCH at most; AdmitN asks
-- for a count and admits without tokens.
local WANT = math.min(tonumber(ARGV[LIMIT_ARGS + 1]) or BATCH, BATCH)
local FREE = ARGV[LIMIT_ARGS + 2] == '1'
local KNOWN_ADMITTED = tonumber(ARGV[LIMIT_ARGS + 3]) or 0
local now = clock()
local seed, base, grace, floor, pbase, ttl, seq, _, _, adm = room()
if not seed then
  return {0, 0, 0, 0, 0, 0, 0} -- a room never joined has nothing to move
end
-- Before anything moves: a new master (a failover, or a restart that kept
-- the data) may lack the last writes. mend repairs the room and holds
-- admissions for a moment, so the sessions the store lost get their slots
-- back first; the counter moves past the line's last ticket (decide.lua
-- moves it past the tickets the gateways bring).
local repaired = 0
if masterChanged() then
  local tail = redis.call('ZRANGE', K_QUEUE, -1, -1, 'WITHSCORES')
  mend(tonumber(tail[2]) or 0, seq, pbase, grace, now, L)
  seed, base, grace, floor, pbase, ttl, seq = room()
  repaired = 1
end
-- The admissions the new master lost put back inside before anyone else
-- goes in, so the line's head is who really waits and the slots they hold
-- count (readmit).
local readmitted = 0
if lostAdmissions(KNOWN_ADMITTED, adm, seed, seq, L) then
  readmitted, adm = readmit(KNOWN_ADMITTED, adm, base, now, L)
  repaired = 1
end

-- lastPoll is a waiting visitor's last poll; 0 when none is recorded.
local function lastPoll(id, t)
  if indexed(t, base) then
    return seenAt(t - base)
  end
  return tonumber(redis.call('ZSCORE', K_RSEEN, id)) or 0
end

-- expire removes up to BATCH sessions that ran out, oldest first, with
-- the networks they served; those left over are not counted as live
-- meanwhile (live in common.lua).
local function expire()
  local ids = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', now, 'LIMIT', 0, BATCH)
  if #ids > 0 then
    redis.call('ZREMRANGEBYRANK', K_ACTIVE, 0, #ids - 1)
    if L.clients > 0 or L.sessionMax > 0 or redis.call('EXISTS', K_CLIENTS) == 1 then
      redis.call('HDEL', K_CLIENTS, unpack(ids))
    end
    redis.call('HDEL', K_BEGAN, unpack(ids))
  end
  return #ids
end

-- moveFloor moves the placement window on (common.lua): it remembers the
-- last ticket handed out every eighth of a window, in K_META's marks, and
-- raises floor to the last one handed out a window ago. K_PLACED then
-- drops the whole bytes in front of floor, so it spans about one window's
-- tickets however many were never brought back.
local function moveFloor()
  local m = redis.call('HMGET', K_META, 'marks', 'seq')
  local seq, marks = tonumber(m[2]), {}
  for at, n in string.gmatch(m[1] or '', '(%d+):(%d+)') do
    marks[#marks + 1] = {tonumber(at), tonumber(n)}
  end
  local within = math.max(L.placeWithin, 1000)
  local newest = marks[#marks]
  if newest == nil or now - newest[1] >= within / 8 then
    marks[#marks + 1] = {now, seq}
  end
  local kept, out = {}, {}
  for _, mk in ipairs(marks) do
    if now - mk[1] >= within then
      if floor == nil or mk[2] > floor then
        floor = mk[2]
      end
    else
      kept[#kept + 1] = mk
    end
  end
  for i = math.max(1, #kept - 8), #kept do
    out[#out + 1] = string.format('%d:%d', kept[i][1], kept[i][2])
  end
  if floor == nil or pbase == nil then
    return
  end
  local drop = math.floor((floor + 1 - pbase) / 8)
  if drop > 0 then
    local size = redis.call('STRLEN', K_PLACED)
    if drop >= size then
      redis.call('DEL', K_PLACED)
    else
      redis.call('SET', K_PLACED, redis.call('GETRANGE', K_PLACED, drop, -1), 'PX', L.dataTTL)
    end
    pbase = pbase + drop * 8
  end
  redis.call('HSET', K_META, 'floor', floor, 'pbase', pbase, 'marks', table.concat(out, ','))
end

-- sweep looks at the next SWEEP entries of K_SEEN, from where the last tick
-- stopped, and drops the visitors last seen before cutoff. One GETRANGE,
-- decoded here, rather than a command per entry.
local function sweep(cutoff)
  local size = math.floor(redis.call('STRLEN', K_SEEN) / SEEN_BYTES)
  if size == 0 then
    return 0
  end
  local from = tonumber(redis.call('HGET', K_META, 'sweep')) or 0
  if from >= size then
    from = 0
  end
  -- A bigger line is swept faster, so every entry is looked at within a
  -- few ticks however fast a flood grows it: an eighth a tick, from SWEEP
  -- up to SWEEP_MAX.
  local to = math.min(size, from + math.min(math.max(SWEEP, math.ceil(size / 8)), SWEEP_MAX))
  local s = redis.call('GETRANGE', K_SEEN, from * SEEN_BYTES, to * SEEN_BYTES - 1)
  local n = 0
  for i = from, to - 1 do
    local p = (i - from) * SEEN_BYTES + 1
    local b1, b2, b3, b4, b5, b6, b7 = string.byte(s, p, p + SEEN_BYTES - 1)
    local seen = (((((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + b5) * 256 + b6) * 256 + b7
    if seen > 0 and seen < cutoff then
      local ids = redis.call('ZRANGEBYSCORE', K_QUEUE, base + i, base + i, 'LIMIT', 0, 1)
      if ids[1] then
        redis.call('ZREM', K_QUEUE, ids[1])
        n = n + 1
      end
      redis.call('SETRANGE', K_SEEN, i * SEEN_BYTES, UNSEEN)
    end
  end
  if to >= size then
    to = 0
  end
  redis.call('HSET', K_META, 'sweep', to)
  return n
end

-- prune drops visitors unseen for longer than abandon_after: restored ones
-- straight from their sorted set, the others by sweeping K_SEEN. A large
-- line is swept over several ticks; the head is checked again before anyone
-- is admitted, so nobody stale ever goes in.
local function prune(cutoff)
  local ids = redis.call('ZRANGEBYSCORE', K_RSEEN, '-inf', excl(cutoff), 'LIMIT', 0, BATCH)
  local n = 0
  if #ids > 0 then
    n = redis.call('ZREM', K_QUEUE, unpack(ids))
    redis.call('ZREM', K_RSEEN, unpack(ids))
  end
  return n + sweep(cutoff)
end

-- rebase trims the dead front of K_SEEN once the line's head (its oldest
-- ticket with an entry there) has moved far enough, so K_SEEN spans about
-- the line and not every ticket ever issued.
local function rebase()
  local head = redis.call('ZRANGEBYSCORE', K_QUEUE, base, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #head == 0 then
    local next = tonumber(redis.call('HGET', K_META, 'seq')) + 1
    if base ~= next then
      redis.call('DEL', K_SEEN)
      redis.call('HSET', K_META, 'base', next, 'sweep', 0)
    end
    return
  end
  local shift = tonumber(head[2]) - base
  local size = math.floor(redis.call('STRLEN', K_SEEN) / SEEN_BYTES)
  -- The dead tail too: past the line's last ticket nothing is recorded,
  -- and a flood that was pruned (the line's head never moving, in a paused
  -- room) must not leave its entries behind.
  local tail = redis.call('ZRANGE', K_QUEUE, -1, -1, 'WITHSCORES')
  local keep = size
  if #tail > 0 then
    keep = math.min(size, math.max(0, tonumber(tail[2]) - base + 1))
  end
  if (shift < REBASE or shift * 2 < size) and (size - keep < REBASE or (size - keep) * 2 < size) then
    return
  end
  if shift < REBASE or shift * 2 < size then
    shift = 0
  end
  local rest = redis.call('GETRANGE', K_SEEN, shift * SEEN_BYTES, keep * SEEN_BYTES - 1)
  if keep > shift then
    redis.call('SET', K_SEEN, rest, 'KEEPTTL')
  else
    redis.call('DEL', K_SEEN)
  end
  local from = tonumber(redis.call('HGET', K_META, 'sweep')) or 0
  redis.call('HSET', K_META, 'base', base + shift, 'sweep', math.max(0, math.min(from - shift, keep - shift)))
end

-- shrink rebuilds the line once it holds a sixteenth of what it held at
-- its largest: Redis never gives back a sorted set's hash table as it
-- empties, so a flood pruned from a paused room would keep its memory.
-- The rebuild copies what is left, which is small by then.
local function shrink()
  local n = redis.call('ZCARD', K_QUEUE)
  local most = tonumber(redis.call('HGET', K_META, 'qmax')) or 0
  if n > most then
    redis.call('HSET', K_META, 'qmax', n)
    return
  end
  if most < 8192 or n * 16 >= most then
    return
  end
  local all = redis.call('ZRANGE', K_QUEUE, 0, -1, 'WITHSCORES')
  redis.call('DEL', K_QUEUE)
  for i = 1, #all, 2000 do
    local args = {}
    for j = i, math.min(i + 1999, #all), 2 do
      args[#args + 1] = all[j + 1]
      args[#args + 1] = all[j]
    end
    redis.call('ZADD', K_QUEUE, unpack(args))
  end
  if #all > 0 then
    redis.call('PEXPIRE', K_QUEUE, L.dataTTL)
  end
  redis.call('HSET', K_META, 'qmax', n)
end

-- A tick's session is short until used (Store.Admit): a visitor who never
-- comes to use it frees the slot as soon as an abandoned place would.
local first = firstSession(L)

moveFloor()
local expired = expire()
local abandoned, admitted = 0, 0
local cutoff = nil
if L.abandon > 0 then
  cutoff = now - L.abandon
  abandoned = prune(cutoff)
end
-- eligible counts the visitors a tick may let in: all who wait, or during
-- the recovery grace only the restored tickets. Those are all older than
-- this incarnation's first ticket, so they are the line's first entries.
local function eligible()
  if grace ~= nil and now < grace then
    return redis.call('ZCOUNT', K_QUEUE, '-inf', excl(seed))
  end
  return redis.call('ZCARD', K_QUEUE)
end

local inside = live(now)
local more = 0
local highest = 0
local left = 0
if inside < L.max and WANT > 0 then
  left = eligible()
end
if left > 0 then
  if L.random then
    -- Redis seeds the generator the same way every time it starts (before
    -- 7.0, before every script), so each tick reseeds it from the clock:
    -- the picks must be fair and not repeat, they need not be secret.
    math.randomseed(now)
  end
  local b = nil
  if not FREE then
    b = refill(now, L)
  end
  local steps = 0
  -- id, now for each admission: when their sessions began (K_BEGAN), in
  -- one HSET after the loop.
  local began = {}
  while left > 0 do
    if admitted >= WANT or steps == BATCH then
      more = 1 -- its own bounds stopped it, with eligible visitors left
      break
    end
    steps = steps + 1
    -- The head, or anyone eligible at random (mode: random): an index into
    -- the line, O(log n) either way.
    local at = 0
    if L.random then
      at = math.random(left) - 1
    end
    local pick = redis.call('ZRANGE', K_QUEUE, at, at, 'WITHSCORES')
    local id, t = pick[1], tonumber(pick[2])
    if cutoff ~= nil and lastPoll(id, t) < cutoff then
      drop(id, t, base)
      abandoned = abandoned + 1
    elseif inside >= L.max or not take(b) then
      break
    else
      drop(id, t, base)
      admit(id, now, first)
      began[#began + 1] = id
      began[#began + 1] = now
      inside = inside + 1
      admitted = admitted + 1
      if not L.random and t > highest then
        highest = t
      end
    end
    left = left - 1
  end
  save(b, L)
  if #began > 0 then
    redis.call('HSET', K_BEGAN, unpack(began)) -- its lifetime: keep, below
  end
end
if highest > 0 and (adm == nil or highest > adm) then
  redis.call('HSET', K_META, 'adm', highest) -- the high-water mark readmit compares with
end
rebase()
shrink()

bump('expired', expired, L.dataTTL)
bump('abandoned', abandoned, L.dataTTL)
bump('admitted', admitted, L.dataTTL)
counted(now, admitted, L.dataTTL)
if ttl ~= L.dataTTL then
  redis.call('HSET', K_META, 'ttl', L.dataTTL) -- for release.lua, which has no limits
end
-- While gateways tick a room, none of its keys expire, even if nothing
-- else happens (a paused room whose line just waits). The override keeps
-- its own lifetime: with an Idle the meta keys' is short, and a "closed"
-- must outlive them.
keep(L.metaTTL, K_META, K_RESTORED)
keep(L.overrideTTL, K_OVERRIDE)
keep(L.dataTTL, K_QUEUE, K_SEEN, K_RSEEN, K_ACTIVE, K_BUCKET, K_STATS, K_MINUTE, K_PLACED, K_CLIENTS, K_BEGAN)
return {admitted, abandoned, expired, more, repaired, highest, readmitted}
