-- allow.lua: Store.Allow, one unit of a client network's allowance of some
-- kind (a room's preflights), shared by every instance. KEYS[1]: the
-- allowance's time (gcra in common.lua). ARGV: the limit's n and its
-- period in microseconds. Reply: {1, 0} when allowed, {0, wait in
-- microseconds} when not.

local ok, wait = gcra(KEYS[1], clock(), tonumber(ARGV[1]), tonumber(ARGV[2]), true)
if ok then
  return {1, 0}
end
return {0, wait}
