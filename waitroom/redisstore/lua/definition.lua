-- definition.lua: Store.PutDefinition and Store.DeleteDefinition, the
-- rooms created at run time. KEYS[1]: the definitions' hash, each body
-- under its room's name and the version under a field no name can be.
-- ARGV: that field, the operation (O_ below), the name, and for a put the
-- body; for a delete, optionally the only body it may remove (another
-- instance may have written the room again since the caller read it). Reply: {result (X_ below), the version after the call}. The hash
-- never expires: a definition lasts until it is deleted.

local O_CREATE, O_REPLACE, O_DELETE = 1, 2, 3
local X_OK, X_EXISTS, X_MISSING, X_CHANGED = 0, 1, 2, 3

local K_DEFS = KEYS[1]
local VERSION, OP, NAME = ARGV[1], tonumber(ARGV[2]), ARGV[3]

if OP ~= O_CREATE and OP ~= O_REPLACE and OP ~= O_DELETE then
  return redis.error_reply('definition.lua: ARGV[2]: want 1, 2 or 3, got ' .. tostring(ARGV[2]))
end
local there = redis.call('HEXISTS', K_DEFS, NAME) == 1
if OP == O_CREATE and there then
  return {X_EXISTS, tonumber(redis.call('HGET', K_DEFS, VERSION)) or 0}
elseif OP ~= O_CREATE and not there then
  return {X_MISSING, tonumber(redis.call('HGET', K_DEFS, VERSION)) or 0}
end
if OP == O_DELETE and ARGV[4] ~= nil and redis.call('HGET', K_DEFS, NAME) ~= ARGV[4] then
  return {X_CHANGED, tonumber(redis.call('HGET', K_DEFS, VERSION)) or 0}
end
if OP == O_DELETE then
  redis.call('HDEL', K_DEFS, NAME)
else
  redis.call('HSET', K_DEFS, NAME, ARGV[4])
end
return {X_OK, redis.call('HINCRBY', K_DEFS, VERSION, 1)}
