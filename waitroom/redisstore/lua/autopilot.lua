-- autopilot.lua: Autopilots.Autopilot, a room's autopilot across all
-- instances (waitroom/autopilot.go holds the same rule in Go, for the
-- memory store: AutopilotRecord.Report and DecideAutopilot). KEYS[1]: the
-- room's autopilot hash. ARGV: the step's length, the latency target (both
-- microseconds), the percentile (50-99), the error bound (parts per
-- million), the floor, the ceiling, the pin (-1: none), then this
-- instance's report: errors, requests, sessions inside, and the count of
-- each latency bucket (AUTO_BOUNDS, then one for the rest).
-- Reply: {limit, steps judged, the last step's latency (microseconds),
-- error share (ppm), requests, most inside, reason, 1 if this call judged
-- a step, the last step's median and the baseline it was judged against
-- (microseconds)}.
--
-- Every instance adds its counts to the step running; the first call
-- after the step is Interval old by Redis's clock judges it, so the limit
-- moves once per step whatever the number of instances. Only integers,
-- below 2^53, so Lua's doubles are exact and the floors match Go's
-- integer division.

local K_AUTO = KEYS[1]
local INTERVAL, TARGET, PCT, ERR_PPM = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local MIN, MAX, PIN = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local R_ERRORS, R_REQUESTS, R_ACTIVE = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local B0 = 10 -- ARGV[B0 + i] is bucket i's count

-- AutopilotBounds in autopilot.go; the last bucket's top is twice the last.
local AUTO_BOUNDS = {5e3, 10e3, 20e3, 35e3, 50e3, 75e3, 100e3, 150e3, 200e3, 300e3, 400e3, 500e3, 650e3, 800e3,
  1e6, 1.3e6, 1.6e6, 2e6, 2.5e6, 3.2e6, 4e6, 5e6, 6.5e6, 8e6, 10e6, 15e6, 20e6, 30e6, 60e6}
local NB = #AUTO_BOUNDS + 1
local MIN_SAMPLES = 10 -- AutopilotMinSamples
local MAX_CARRY = 3 -- AutopilotMaxCarry
local BASE_STEPS = 8 -- AutopilotBaseSteps

-- The reasons (AutopilotReason).
local R_START, R_IDLE, R_RISE, R_UNUSED, R_SLOW, R_FAILING, R_DRAINING, R_PINNED, R_CEILING, R_FLOOR = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
local R_RECOVERING, R_AT_TARGET, R_SETTLING, R_BACKOFF, R_KNEE = 11, 12, 13, 14, 15 -- 10 is Go's "frozen"

local function idiv(a, b) return math.floor(a / b) end
local function clamp(l) return math.max(MIN, math.min(MAX, l)) end

local now = clock()
local h = redis.call('HGETALL', K_AUTO)
local st = {}
for i = 1, #h, 2 do st[h[i]] = tonumber(h[i + 1]) end

if not st.started then
  st = {limit = MIN, started = now, steps = 0, lat = 0, err = 0, n = 0, act = 0, reason = R_START, e = 0, r = 0, a = 0,
    med = 0, base = 0, lo1 = 0, lo2 = 0}
  if PIN >= 0 then st.limit, st.reason = PIN, R_PINNED end
end
st.e = (st.e or 0) + math.max(R_ERRORS, 0)
st.r = (st.r or 0) + math.max(R_REQUESTS, 0)
st.a = math.max(st.a or 0, R_ACTIVE)
local b = {}
for i = 1, NB do
  b[i] = (st['b' .. i] or 0) + math.max(tonumber(ARGV[B0 + i]) or 0, 0)
end

-- percentile: AutopilotStep.Percentile.
local function percentile(PCT)
  local timed = 0
  for i = 1, NB do timed = timed + b[i] end
  if timed == 0 then return 0, 0 end
  local rank = idiv(PCT * timed + 99, 100)
  local cum, lo = 0, 0
  for i = 1, NB do
    local hi = AUTO_BOUNDS[i] or 2 * AUTO_BOUNDS[#AUTO_BOUNDS]
    if b[i] > 0 and cum + b[i] >= rank then
      return lo + idiv((hi - lo) * (rank - cum), b[i]), timed
    end
    cum, lo = cum + b[i], hi
  end
  return lo, timed
end

-- baseline: AutopilotRecord.Baseline, the lower of the two windows'
-- lowest medians (0: none).
local function baseline()
  local lo1, lo2 = st.lo1 or 0, st.lo2 or 0
  if lo1 == 0 then return lo2 end
  if lo2 == 0 then return lo1 end
  return math.min(lo1, lo2)
end

-- decide: DecideAutopilot.
local function decide(limit, base)
  local lat, timed = percentile(PCT)
  local med = percentile(50)
  local errppm = 0
  if st.r > 0 then errppm = idiv(st.e * 1000000, st.r) end
  -- Only timed requests tell the latency; with too few, judged on the
  -- errors alone when enough and over the bound (DecideAutopilot).
  local failing = st.e * 1000000 > ERR_PPM * st.r
  if timed < MIN_SAMPLES and (st.e < MIN_SAMPLES or not failing) then return limit, R_IDLE, lat, med, errppm end
  local slow = timed >= MIN_SAMPLES and lat > TARGET
  local active = st.a
  if slow or failing then
    local worse = (slow and lat * 2 > st.lat * 3) or (failing and errppm * 2 > st.err * 3)
    if active > limit and not worse then return limit, R_DRAINING, lat, med, errppm end
    local lr = st.reason
    if lr == R_SLOW or lr == R_FAILING or lr == R_DRAINING or lr == R_RECOVERING then
      local better = (not slow or lat * 10 < st.lat * 9) and (not failing or errppm * 10 < st.err * 9)
      if better then return limit, R_RECOVERING, lat, med, errppm end
    end
    local base = limit
    if active > 0 and active < limit then base = active end
    -- After a cut (or a hold while recovering) the latency still carries
    -- the backlog the cut drains: a fifth, not the gradient.
    local again = lr == R_SLOW or lr == R_FAILING or lr == R_FLOOR or lr == R_RECOVERING
    local nxt, why = idiv(base * 4, 5), R_SLOW
    if slow and not again then nxt = math.min(nxt, idiv(base * TARGET, lat)) end
    if failing then
      why = R_FAILING
      if not again then nxt = math.min(nxt, idiv(base * (1000000 - errppm), 1000000)) end
    end
    nxt = math.max(nxt, idiv(base, 2))
    if nxt < MIN then nxt, why = MIN, R_FLOOR end
    return nxt, why, lat, med, errppm
  end
  if active * 10 < limit * 8 then return limit, R_UNUSED, lat, med, errppm end
  -- The median past the knee (a margin over the unloaded latency): back
  -- off while it is not falling (a tenth, at least 2), hold while it
  -- falls or while more are inside than the limit (a cut's excess still
  -- leaves).
  local margin = math.max(idiv(base, 2), idiv(TARGET, 10))
  if base > 0 and timed >= MIN_SAMPLES and med > base + margin then
    if med >= (st.med or 0) and active <= limit then
      return math.max(limit - math.max(2, idiv(limit, 10)), MIN), R_BACKOFF, lat, med, errppm
    end
    return limit, R_KNEE, lat, med, errppm
  end
  if lat * 4 > TARGET * 3 then return limit, R_AT_TARGET, lat, med, errppm end
  -- A rise is judged with the raised limit in effect for a whole step,
  -- unless the median stays within a quarter of the margin of the
  -- baseline and the percentile under a third of the target.
  if st.reason == R_RISE and (base == 0 or timed < MIN_SAMPLES or med > base + idiv(margin, 4) or lat * 3 > TARGET) then
    return limit, R_SETTLING, lat, med, errppm
  end
  local step = math.max(1, idiv(limit, 20))
  if lat * 2 <= TARGET then step = math.max(2, idiv(limit, 10)) end
  local nxt = limit + step
  if nxt >= MAX then return MAX, R_CEILING, lat, med, errppm end
  return nxt, R_RISE, lat, med, errppm
end

local decided = 0
local out_reason = st.reason
if now - st.started >= INTERVAL then
  local lat, med, errppm, why = 0, 0, 0, R_PINNED
  local base = baseline()
  local in_effect = clamp(st.limit)
  if PIN >= 0 then in_effect = PIN end
  if PIN >= 0 then
    lat = percentile(PCT)
    med = percentile(50)
    if st.r > 0 then errppm = idiv(st.e * 1000000, st.r) end
    st.limit = PIN
  else
    st.limit, why, lat, med, errppm = decide(clamp(st.limit), base)
  end
  st.steps, st.lat, st.err, st.n, st.act, st.reason = st.steps + 1, lat, errppm, st.r, st.a, why
  st.med, st.base = med, base
  -- The step's median joins the baseline when the limit was in use (at
  -- least 80% of it inside) and enough requests were timed to trust it
  -- (MIN_SAMPLES and a quarter of the limit): AutopilotBaseStep. Every
  -- BASE_STEPS steps the older window is dropped.
  local _, timed = percentile(50)
  if st.a * 10 >= in_effect * 8 and timed >= MIN_SAMPLES and timed * 4 >= in_effect and ((st.lo1 or 0) == 0 or med < st.lo1) then st.lo1 = math.max(med, 1) end
  if st.steps % BASE_STEPS == 0 then st.lo1, st.lo2 = 0, st.lo1 or 0 end
  out_reason = why
  decided = 1
  st.started = now
  if why == R_IDLE and (st.c or 0) < MAX_CARRY then
    -- Too few to judge: the counts carry into the next step.
    st.c = (st.c or 0) + 1
  else
    st.c, st.e, st.r, st.a = 0, 0, 0, 0
    for i = 1, NB do b[i] = 0 end
  end
end
if PIN >= 0 then
  st.limit, out_reason = PIN, R_PINNED
else
  st.limit = clamp(st.limit)
end

local args = {'limit', st.limit, 'started', st.started, 'steps', st.steps, 'lat', st.lat, 'err', st.err,
  'n', st.n, 'act', st.act, 'reason', st.reason, 'e', st.e, 'r', st.r, 'a', st.a, 'c', st.c or 0,
  'med', st.med or 0, 'base', st.base or 0, 'lo1', st.lo1 or 0, 'lo2', st.lo2 or 0}
for i = 1, NB do
  args[#args + 1] = 'b' .. i
  args[#args + 1] = b[i]
end
redis.call('HSET', K_AUTO, unpack(args))
-- A room unused for a day starts again from its floor.
redis.call('PEXPIRE', K_AUTO, math.max(86400000, math.ceil(10 * INTERVAL / 1000)))
return {st.limit, st.steps, st.lat, st.err, st.n, st.act, out_reason, decided, st.med or 0, st.base or 0}
