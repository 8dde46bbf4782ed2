-- claim.lua: Store.Claim, which decides the one gateway instance that sends
-- a webhook event: the first caller of a key within its lifetime takes it.
-- KEYS[1]: the claim. ARGV[1]: its lifetime in milliseconds. Reply: {1} to
-- the caller that took it, {0} to every other. Redis times the lifetime, so
-- instances with skewed clocks agree.

if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return {1}
end
return {0}
