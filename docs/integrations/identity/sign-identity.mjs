// Signs a waitroom identity at login: "<account>.<expiry>.<mac>", where
// expiry is Unix seconds and mac the unpadded base64url of
// HMAC-SHA256(secret, "<account>.<expiry>"). Set it as the room's identity
// cookie, or send it in the Waitroom-Identity header from an app.
//
//   WAITROOM_IDENTITY_SECRET=... node sign-identity.mjs kim@example.com 14400
import { createHmac } from 'node:crypto';
import { pathToFileURL } from 'node:url';

export function signIdentity(secret, account, ttlSeconds, nowMs = Date.now()) {
  const signed = `${account}.${Math.floor(nowMs / 1000) + ttlSeconds}`;
  const mac = createHmac('sha256', secret).update(signed).digest('base64url');
  return `${signed}.${mac}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [account, ttl] = process.argv.slice(2);
  const secret = process.env.WAITROOM_IDENTITY_SECRET;
  if (!secret || !account || !Number.isInteger(Number(ttl))) {
    process.stderr.write('usage: WAITROOM_IDENTITY_SECRET=... node sign-identity.mjs ACCOUNT TTL_SECONDS\n');
    process.exit(2);
  }
  process.stdout.write(signIdentity(secret, account, Number(ttl)) + '\n');
}
