// Verifies a waitroom admission pass (the Waitroom-Pass request header) with
// node:crypto alone (Node 20 or later).
//
// A pass is a compact JWS: base64url(header).base64url(claims).base64url(sig),
// header {"alg":"EdDSA","kid":...,"typ":"JWT"} (or "ES256" with pass.algorithm:
// ES256), an Ed25519 (or ECDSA P-256) signature over the first two segments
// and the dot, claims iss, aud, sub, room, path, tkt,
// iat, exp. The gateway publishes its public keys as a JWK Set.
//
//   import { WaitroomPassVerifier, waitroomPass } from './waitroom-pass.mjs';
//   const passes = new WaitroomPassVerifier({
//     jwksUrl: 'https://tickets.example.com/.waitroom/jwks.json',
//     issuer: 'waitroom', audience: 'shop' });
//   app.post('/bookings', waitroomPass(passes, { room: 'concert' }), (req, res) => {
//     // req.waitroomPass: { iss, aud, sub, room, path, tkt, iat, exp }
//   });
//   // Rooms filled from a template ("event-{id}"): the room from the request.
//   app.post('/events/:id/checkout', waitroomPass(passes, { room: (req) => `event-${req.params.id}` }), ...);
//
// A pass is for one path: the middleware checks the path claim against the
// request's own path (as received, without the query); give path: (req) =>
// '...' when a proxy in front rewrites paths.
//
// Checks, in this order (the Go and Java verifiers use the same order and
// reason codes): size (4 KiB) and shape (three canonical base64url segments)
// "malformed"; header alg EdDSA or ES256, matching the key, "algorithm", no crit and a kid "malformed";
// the kid in the key set "unknown_key" (or "keys_unavailable"); the signature
// "signature"; the claims JSON "malformed"; exp plus leeway in the future
// "expired"; iat at most leeway in the future "not_yet_valid"; iss "issuer";
// aud "audience"; room "room"; path "path".
//
// Run as a program to check passes by hand or from tests:
//   node waitroom-pass.mjs --jwks URL|FILE --audience shop [--issuer waitroom]
//     [--room concert] [--path /events/1] [--leeway 5] [--min-refetch 30] [TOKEN]
// With a TOKEN it prints the claims as JSON (exit 0) or the reason (exit 1);
// without, it reads "room TAB path TAB token" lines from stdin (an empty
// room or path checks none) and answers each with "ok {claims}" or
// "refused reason detail".

import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

export const HEADER = 'Waitroom-Pass';
export const MAX_TOKEN_SIZE = 4096;
const MAX_JWKS_BYTES = 64 * 1024;
const MAX_KEYS = 64;
const B64URL = /^[A-Za-z0-9_-]+$/;

// PassError is a refusal: reason is one of missing, malformed, algorithm,
// unknown_key, keys_unavailable, signature, expired, not_yet_valid, issuer,
// audience, room, path; the message is a detail without the token.
export class PassError extends Error {
  constructor(reason, detail) {
    super(`${reason}: ${detail}`);
    this.name = 'PassError';
    this.reason = reason;
  }
}

const refuse = (reason, detail) => { throw new PassError(reason, detail); };
const clip = (s) => JSON.stringify(String(s).slice(0, 64));

// decodeSegment returns the bytes of unpadded base64url, or null unless s is
// the one canonical encoding of them (Buffer alone would take almost anything).
function decodeSegment(s) {
  if (typeof s !== 'string' || !B64URL.test(s)) return null;
  const b = Buffer.from(s, 'base64url');
  return b.toString('base64url') === s ? b : null;
}

// tooDeep reports whether JSON text nests arrays and objects deeper than 32,
// the bound every verifier keeps. Brackets inside strings do not count.
function tooDeep(text) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString && c === '\\') i++;
    else if (c === '"') inString = !inString;
    else if (inString) continue;
    else if ((c === '[' || c === '{') && ++depth > 32) return true;
    else if (c === ']' || c === '}') depth--;
  }
  return false;
}

function parseObject(bytes, what) {
  const text = bytes.toString('utf8');
  let v = null;
  if (!tooDeep(text)) {
    try { v = JSON.parse(text); } catch { v = null; }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) refuse('malformed', `${what} is not a JSON object`);
  return v;
}

const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

// thumbprint is the RFC 7638 thumbprint of an Ed25519 JWK (x) or a P-256
// one (x and y): the pass's kid.
export function thumbprint(x, y) {
  const canon = y === undefined ? `{"crv":"Ed25519","kty":"OKP","x":"${x}"}` : `{"crv":"P-256","kty":"EC","x":"${x}","y":"${y}"}`;
  return createHash('sha256').update(canon).digest('base64url');
}

// jwkKey is { alg, key } for an Ed25519 (EdDSA) or P-256 (ES256) signing
// JWK, or null for any other.
function jwkKey(k) {
  if (!k || (has(k, 'use') && k.use !== 'sig')) return null;
  const x = decodeSegment(k.x);
  try {
    if (k.kty === 'OKP' && k.crv === 'Ed25519' && (!has(k, 'alg') || k.alg === 'EdDSA') && x?.length === 32) {
      return { alg: 'EdDSA', key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' }), kid: thumbprint(k.x) };
    }
    const y = decodeSegment(k.y);
    if (k.kty === 'EC' && k.crv === 'P-256' && (!has(k, 'alg') || k.alg === 'ES256') && x?.length === 32 && y?.length === 32) {
      return { alg: 'ES256', key: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: k.x, y: k.y }, format: 'jwk' }), kid: thumbprint(k.x, k.y) };
    }
  } catch { /* a key this runtime does not accept (off the curve) is skipped like any other */ }
  return null;
}

// parseJwks keeps the Ed25519 and P-256 signing keys of a JWK Set (others
// are skipped) as a Map from kid to { alg, key }.
export function parseJwks(set) {
  if (typeof set === 'string') set = JSON.parse(set);
  if (!set || !Array.isArray(set.keys)) throw new Error('reading the key set: not a JSON object with a keys array');
  if (set.keys.length > MAX_KEYS) throw new Error(`reading the key set: ${set.keys.length} keys, at most ${MAX_KEYS}`);
  const out = new Map();
  for (const k of set.keys) {
    const entry = jwkKey(k);
    if (!entry) continue;
    const kid = typeof k.kid === 'string' && k.kid !== '' ? k.kid : entry.kid;
    if (!out.has(kid)) out.set(kid, { alg: entry.alg, key: entry.key });
  }
  if (out.size === 0) throw new Error('reading the key set: no Ed25519 or P-256 signing key in it');
  return out;
}

export class WaitroomPassVerifier {
  #keys = null; #fetched = 0; #attempted = null; #lastError = null; #inflight = null;

  // Options: jwksUrl (fetched on first use, then every refreshSeconds) or
  // jwks (an object or JSON string); audience (required: the site's name as
  // the gateway knows it); issuer (checked when not empty); leewaySeconds
  // (clock skew on exp and iat, default 5: a revoked pass is refused within
  // the gateway's pass.ttl plus this); minRefetchSeconds (least time
  // between fetches an unknown kid or a failure may start, default 30);
  // timeoutMs (one fetch, default 5000); now (ms clock, default Date.now).
  constructor({ jwksUrl, jwks, audience, issuer = '', leewaySeconds = 5, refreshSeconds = 300,
    minRefetchSeconds = 30, timeoutMs = 5000, now = Date.now } = {}) {
    if (!audience) throw new Error('audience is required');
    if (!(leewaySeconds >= 0)) throw new Error('leewaySeconds must not be negative');
    Object.assign(this, { audience, issuer, now });
    this.leeway = Math.floor(leewaySeconds);
    this.refreshMs = refreshSeconds * 1000;
    this.minRefetchMs = minRefetchSeconds * 1000;
    this.timeoutMs = timeoutMs;
    if (jwks) {
      this.#keys = parseJwks(jwks);
    } else if (/^https?:\/\//.test(jwksUrl ?? '')) {
      this.jwksUrl = jwksUrl;
    } else {
      throw new Error('set jwksUrl (http or https) or jwks');
    }
  }

  // verify resolves to the claims, or rejects with a PassError. room and
  // path, when not empty, must equal the room and path claims.
  async verify(token, { room = '', path = '' } = {}) {
    const [h, p, sig, signed] = split(token);
    const { alg, kid } = parseHeader(h);
    const { alg: keyAlg, key } = await this.#key(kid);
    // The key decides the algorithm, never the header alone.
    if (keyAlg !== alg) refuse('algorithm', `alg ${alg} does not match key ${clip(kid)}`);
    const data = Buffer.from(signed, 'ascii');
    const good = sig.length === 64 && (alg === 'EdDSA'
      ? verifySignature(null, data, key, sig)
      : verifySignature('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, sig));
    if (!good) {
      refuse('signature', `the signature does not match key ${clip(kid)}`);
    }
    const claims = parseClaims(p);
    this.#check(claims, room, path);
    return claims;
  }

  #check(c, room, path) {
    const now = Math.floor(this.now() / 1000);
    if (now >= c.exp + this.leeway) refuse('expired', `expired ${now - c.exp}s ago`);
    if (c.iat > now + this.leeway) refuse('not_yet_valid', `issued ${c.iat - now}s in the future`);
    if (this.issuer && c.iss !== this.issuer) refuse('issuer', `iss is ${clip(c.iss)}, want ${this.issuer}`);
    if (!c.aud.includes(this.audience)) refuse('audience', `aud does not name ${this.audience}`);
    if (room && c.room !== room) refuse('room', `room is ${clip(c.room)}, want ${clip(room)}`);
    if (path && c.path !== path) refuse('path', `path is ${clip(c.path)}, want ${clip(path)}`);
  }

  // A known kid is answered at once (from a set older than refresh too,
  // while it is fetched again in the background); an unknown kid, or no set
  // yet, waits for a fetch when one runs or may start. A fetch may start for
  // the first load, for a due refresh after a success, or minRefetch after
  // the last one started, so a flood of made-up kids costs one request per
  // minRefetch at most. A failed fetch keeps the keys already known.
  async #key(kid) {
    if (!this.jwksUrl) return this.#lookup(kid);
    const now = this.now();
    const k = this.#keys?.get(kid);
    const stale = !this.#keys || now - this.#fetched >= this.refreshMs;
    if (k && !stale) return k;
    let wait = this.#inflight;
    if (!wait && (this.#attempted === null || (stale && !this.#lastError) || now - this.#attempted >= this.minRefetchMs)) {
      this.#attempted = now;
      wait = this.#inflight = this.#fetch().finally(() => { this.#inflight = null; });
    }
    if (!k && wait) await wait;
    return this.#lookup(kid);
  }

  #lookup(kid) {
    if (!this.#keys) refuse('keys_unavailable', this.#lastError ?? 'no key set yet');
    return this.#keys.get(kid) ?? refuse('unknown_key', `kid ${clip(kid)} is not in the key set`);
  }

  // #fetch never rejects: the outcome goes to #keys or #lastError.
  async #fetch() {
    try {
      const res = await fetch(this.jwksUrl, {
        headers: { accept: 'application/jwk-set+json, application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new Error(`status ${res.status}`);
      }
      this.#keys = parseJwks(await readBounded(res, MAX_JWKS_BYTES));
      this.#fetched = this.now();
      this.#lastError = null;
    } catch (err) {
      this.#lastError = `fetching the key set: ${err.message}`;
    }
  }
}

async function readBounded(res, max) {
  const chunks = [];
  let n = 0;
  for await (const chunk of res.body) {
    n += chunk.length;
    if (n > max) throw new Error(`larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function split(token) {
  if (typeof token !== 'string' || token === '') refuse('missing', 'no pass');
  if (token.length > MAX_TOKEN_SIZE) refuse('malformed', `longer than ${MAX_TOKEN_SIZE} bytes`);
  const parts = token.split('.');
  if (parts.length !== 3) refuse('malformed', `want three dot-separated segments, got ${parts.length}`);
  const segs = parts.map((p, i) => decodeSegment(p) ?? refuse('malformed', `segment ${i + 1} is not base64url`));
  return [...segs, token.slice(0, token.lastIndexOf('.'))];
}

function parseHeader(bytes) {
  const h = parseObject(bytes, 'the header');
  if (!has(h, 'alg') || (h.alg !== 'EdDSA' && h.alg !== 'ES256')) refuse('algorithm', `alg ${typeof h.alg === 'string' ? clip(h.alg) : '(not a string)'} is not EdDSA or ES256`);
  if (has(h, 'crit')) refuse('malformed', 'the header has crit');
  if (typeof h.kid !== 'string' || h.kid === '') refuse('malformed', 'the header has no kid');
  return { alg: h.alg, kid: h.kid };
}

function parseClaims(bytes) {
  const m = parseObject(bytes, 'the claims');
  const str = (name) => {
    if (!has(m, name)) return '';
    return typeof m[name] === 'string' ? m[name] : refuse('malformed', `claim ${name} has the wrong type`);
  };
  const int = (name, required) => {
    if (!has(m, name)) return required ? refuse('malformed', `claim ${name} is missing`) : 0;
    return Number.isSafeInteger(m[name]) ? m[name] : refuse('malformed', `claim ${name} has the wrong type`);
  };
  let aud = [];
  if (typeof m.aud === 'string') aud = [m.aud];
  else if (Array.isArray(m.aud) && m.aud.every((a) => typeof a === 'string')) aud = m.aud;
  else if (has(m, 'aud')) refuse('malformed', 'claim aud has the wrong type');
  return { iss: str('iss'), aud, sub: str('sub'), room: str('room'), path: str('path'), tkt: int('tkt', false), iat: int('iat', true), exp: int('exp', true) };
}

// requestPath is the path of a request as received, without the query:
// Express's originalUrl (req.url is cut under a mounted router), else url.
export function requestPath(req) {
  const url = req.originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

// waitroomPass is middleware for Express or plain node:http: a request
// without exactly one valid pass for the room and its own path gets 403
// (503 when the key set cannot be loaded) and a short text body; a valid one
// goes on with the claims in req.waitroomPass. room is a name or a function
// of the request (template rooms); path a function of the request, default
// requestPath (return '' to check none).
export function waitroomPass(verifier, { room = '', path = requestPath, header = HEADER } = {}) {
  const name = header.toLowerCase();
  return async (req, res, next) => {
    const values = req.headersDistinct ? (req.headersDistinct[name] ?? []) : [req.headers[name]].filter(Boolean);
    let claims;
    try {
      if (values.length !== 1) refuse('missing', `want one ${header} header, got ${values.length}`);
      const want = typeof room === 'function' ? room(req) : room;
      if (typeof room === 'function' && !want) refuse('room', 'the request names no room');
      claims = await verifier.verify(values[0], { room: want, path: path ? path(req) : '' });
    } catch (err) {
      // Log err.reason if you like; never the token.
      const unavailable = err instanceof PassError && err.reason === 'keys_unavailable';
      res.statusCode = unavailable ? 503 : 403;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.end(unavailable ? 'the waiting room pass cannot be checked right now\n' : 'a valid waiting room pass is required\n');
      return;
    }
    req.waitroomPass = claims;
    next();
  };
}

async function main(argv) {
  const opt = {};
  const tokens = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--') && i + 1 < argv.length) opt[argv[i].slice(2)] = argv[++i];
    else tokens.push(argv[i]);
  }
  if (!opt.jwks || !opt.audience) {
    console.error('usage: node waitroom-pass.mjs --jwks URL|FILE --audience NAME [--issuer NAME] [--room NAME] [--path PATH] [--leeway SECONDS] [--min-refetch SECONDS] [TOKEN]');
    process.exit(2);
  }
  const source = /^https?:\/\//.test(opt.jwks) ? { jwksUrl: opt.jwks } : { jwks: readFileSync(opt.jwks, 'utf8') };
  const v = new WaitroomPassVerifier({
    ...source, audience: opt.audience, issuer: opt.issuer ?? '',
    leewaySeconds: Number(opt.leeway ?? 5), minRefetchSeconds: Number(opt['min-refetch'] ?? 30),
  });
  const room = opt.room ?? '';
  const path = opt.path ?? '';
  const out = (line) => new Promise((resolve) => process.stdout.write(line + '\n', resolve));
  if (tokens.length > 0) {
    try {
      await out(JSON.stringify(await v.verify(tokens[0], { room, path })));
      process.exit(0);
    } catch (err) {
      if (!(err instanceof PassError)) throw err;
      await out(`refused ${err.message}`);
      process.exit(1);
    }
  }
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const f = line.split('\t');
    const [lineRoom, linePath, token] = f.length >= 3 ? f : f.length === 2 ? [f[0], path, f[1]] : [room, path, line];
    try {
      await out(`ok ${JSON.stringify(await v.verify(token, { room: lineRoom, path: linePath }))}`);
    } catch (err) {
      if (!(err instanceof PassError)) throw err;
      await out(`refused ${err.reason} ${err.message}`);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
