-- cacheput.lua: CertCache.Put and Delete, a certificate or account key the
-- ACME client keeps, shared by every instance so one asks the CA for all.
-- KEYS[1]: the entry. ARGV[1]: 'put' or 'delete'; ARGV[2]: the bytes to put.
-- Certificates carry their own expiry and autocert renews them early, so
-- entries have no lifetime.
if ARGV[1] == 'delete' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return {1}
