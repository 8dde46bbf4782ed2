-- quota.lua: the GCRA allowances and the join quotas' helpers (gcra,
-- quotaAt, quotaRead, quotaWrite, charge), spliced into common.lua at its
-- quota mark (scripts.go, helpers), so their text stands where it always
-- did and every script that has the helpers has these.

-- gcra spends one unit of the allowance whose time is at key: each unit
-- moves that time on by per/n, and a unit is allowed while the time runs
-- less than n-1 intervals ahead of now (n at once, then one per
-- interval). It returns whether the unit is within the allowance, how long
-- until it would be, and the units spent recently. With refuse, a unit past
-- the allowance is refused and moves nothing; without, it is counted all
-- the same. The key lives as long as its time runs ahead.
local function gcra(key, now, n, per, refuse)
  local every = per / n
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then
    tat = now
  end
  local ahead, slack = tat - now, every * (n - 1)
  if ahead > slack and refuse then
    return false, math.ceil(ahead - slack), math.ceil(ahead / every)
  end
  tat = tat + every
  redis.call('SET', key, math.ceil(tat), 'PX', math.ceil((tat - now) / 1000) + 1)
  return ahead <= slack, 0, math.ceil((tat - now) / every)
end

-- quotaAt is a GCRA key's time, never before now.
local function quotaAt(key, now)
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then
    return now
  end
  return tat
end

-- The join quotas (waitroom.Limits.JoinLimit) of a room's networks and
-- blocks are GCRA times in two hashes, K_QA and K_QB (KEYS[14] and
-- KEYS[16] of the scripts that charge, K_META for a call that charges
-- nothing), a field a network ("n:" and its key) or block ("b:"), so a
-- batch of places (place.lua) reads every network's time with two HMGETs
-- and writes them with one HSET, not a GET and a SET per network.
-- Hashes cannot expire a field, so they take turns by generation: time
-- is cut in generations of QUOTA_SPAN times join_limit's period, the
-- longest a time may run ahead of now (ChallengeJoinFactor bursts); the
-- hash of generation g is K_QA for an even g, K_QB for an odd one, its
-- field "_g" says which generation it holds, and a time is read from the
-- hashes of this generation and the last only. Each write goes to this
-- generation's hash (emptied first when it still holds the generation
-- before the last), which expires when the latest time in it passes: a
-- room's quotas cost a field per network charged in at most two
-- generations, and none once every time has passed.
local K_QA, K_QB = KEYS[14], KEYS[16]
local QUOTA_SPAN = 2
-- quotaGens are the generations quotaRead found in K_QA and K_QB.
local quotaGens = {}

-- quotaRead returns the times of fields, never before now.
local function quotaRead(fields, now, L)
  local g = math.floor(now / (L.joinPer * QUOTA_SPAN))
  local out = {}
  for i = 1, #fields do
    out[i] = now
  end
  for _, key in ipairs({K_QA, K_QB}) do
    local r = redis.call('HMGET', key, '_g', unpack(fields))
    local kg = tonumber(r[1])
    quotaGens[key] = kg
    if kg == g or kg == g - 1 then
      for i = 1, #fields do
        local v = tonumber(r[i + 1])
        if v and v > out[i] then
          out[i] = v
        end
      end
    end
  end
  return out
end

-- quotaWrite writes field, time, ... (a flat list) into this generation's
-- hash; quotaRead came first. The hash lives as long as the latest time
-- written into it (as a GCRA key does: a room that goes idle leaves no
-- quota behind), which PEXPIRE GT only ever extends.
local function quotaWrite(list, now, L)
  local g = math.floor(now / (L.joinPer * QUOTA_SPAN))
  local key = K_QA
  if g % 2 == 1 then
    key = K_QB
  end
  local fresh = quotaGens[key] ~= g
  if fresh then
    -- The generation before last may hold a field per network of a
    -- flood: UNLINK frees it off the script's thread.
    redis.call('UNLINK', key)
    quotaGens[key] = g
  end
  local hi = now
  for i = 2, #list, 2 do
    hi = math.max(hi, list[i])
  end
  redis.call('HSET', key, '_g', g, unpack(list))
  local ms = math.ceil((hi - now) / 1000) + 1
  if fresh then
    redis.call('PEXPIRE', key, ms)
  else
    redis.call('PEXPIRE', key, ms, 'GT')
  end
end

-- charge counts a place taken against its network's quota (field "n:"
-- net, the room's join_limit) and its block's (field "b:" bname, when the
-- call has one), as memstore's charge does: the network may run burst·N-1
-- intervals of Per/N ahead of now, the block BLOCK times as many
-- intervals of a BLOCK-th of that. Past either, nothing is counted and
-- the place is refused. With commit false it only asks (a newcomer's
-- number, which counts nothing until its ticket comes back and takes its
-- place). It returns whether the place is within both, the wait, and the
-- network's recent places (intervals ahead).
local function charge(now, net, burst, block, bname, L, commit)
  if L.joinN <= 0 or net == '' or K_QA == K_META then
    return true, 0, 0
  end
  local fields = {'n:' .. net}
  if bname ~= '' then
    fields[2] = 'b:' .. bname
  end
  local t = quotaRead(fields, now, L)
  local every = L.joinPer / L.joinN
  local tat = t[1]
  local ahead = tat - now
  local wait = ahead - every * (burst * L.joinN - 1)
  local btat, bevery
  if t[2] then
    bevery = every / block
    btat = t[2]
    wait = math.max(wait, btat - now - bevery * (burst * L.joinN * block - 1))
  end
  if wait > 0 then
    return false, math.ceil(wait), math.ceil(ahead / every)
  end
  if not commit then
    return true, 0, math.ceil(ahead / every)
  end
  tat = tat + every
  local list = {fields[1], math.ceil(tat)}
  if btat then
    btat = btat + bevery
    list[3], list[4] = fields[2], math.ceil(btat)
  end
  quotaWrite(list, now, L)
  return true, 0, math.ceil((tat - now) / every)
end
