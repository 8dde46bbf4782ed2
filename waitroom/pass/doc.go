// Package pass makes and checks the admission pass: a short-lived signed
// token the gateway adds to every request it forwards for an admitted
// visitor, so the site behind it can refuse requests that did not come
// through the waiting room (someone who found the site's own address, a
// bot that skipped the line, a visitor admitted to another room).
//
// It imports nothing of the rest of waitroom: a Go site uses it as a
// library (Verifier, RemoteJWKS, Middleware); the gateway uses Config,
// Signer and Signer.For. Java and Node verifiers with the same checks live
// in docs/integrations/pass.
//
// # The format
//
// The pass travels in the request header
//
//	Waitroom-Pass: <header>.<claims>.<signature>
//
// a JWS in compact serialization (RFC 7515): three segments, each the
// base64url encoding (RFC 4648 section 5, no padding) of
//
//   - the protected header, the JSON {"alg":"EdDSA","kid":"<kid>","typ":"JWT"}
//     ("ES256" with pass.algorithm: ES256);
//   - the claims, a JSON object:
//     iss  the gateway (pass.issuer, default "waitroom"), string;
//     aud  the site, the upstream's name in the gateway's config, string
//     (RFC 7519 also allows an array of strings; accept both);
//     sub  the visitor id, or the account when the visitor signed in
//     through the gateway's identity check, string;
//     room the room the visitor was admitted to, string;
//     path the path of the request the pass came with, as the site
//     receives it (escaped, without the query), string;
//     vid  the visitor id when sub is an account, string, else absent;
//     tkt  the ticket number, an integer below 2^53;
//     iat  when the pass was made, integer seconds since the Unix epoch;
//     exp  when it stops being valid, the same unit: iat + pass.ttl
//     (default 10s);
//   - the Ed25519 signature (RFC 8032, as JOSE uses it per RFC 8037), or for
//     ES256 the ECDSA P-256 SHA-256 signature as r||s (RFC 7518), of the
//     ASCII bytes of the first two segments joined by the dot.
//
// The kid is the RFC 7638 thumbprint of the signing key: the base64url
// SHA-256 of the exact text {"crv":"Ed25519","kty":"OKP","x":"<x>"}, x being
// the base64url public key (for P-256: {"crv":"P-256","kty":"EC","x":"<x>","y":"<y>"}). A key keeps its kid across restarts, and anyone
// can compute it. The gateway publishes its public keys as a JWK Set
// (RFC 7517, RFC 8037):
//
//	{"keys":[{"kty":"OKP","crv":"Ed25519","x":"...","kid":"...","alg":"EdDSA","use":"sig"}]}
//
// # Checking a pass
//
// Every verifier here takes these steps in this order and names a refusal
// by the same reason code (see Reason):
//
//  1. At most MaxTokenSize (4096) bytes, three segments of base64url
//     letters, each the canonical encoding of its bytes; else "malformed".
//  2. The header is a JSON object (at most 32 levels deep, as are the
//     claims) with alg exactly "EdDSA" or "ES256", else "algorithm" (so
//     "none" and HS256 never get further); no crit member and a non-empty
//     string kid, else "malformed".
//  3. The kid names a key of the set, else "unknown_key" ("keys_unavailable"
//     when no set could be loaded); the key's algorithm is the header's,
//     else "algorithm".
//  4. The signature is 64 bytes and valid for that key, else "signature".
//  5. The claims are a JSON object with integer iat and exp and strings
//     where strings belong, else "malformed".
//  6. now < exp + leeway, else "expired"; iat <= now + leeway, else
//     "not_yet_valid"; the leeway absorbs clock skew, 5s by default.
//  7. iss equals the expected issuer (when one is set), else "issuer"; aud
//     names the site, else "audience"; room equals the room the site
//     guards (when it guards one), else "room"; path equals the request's
//     path (the middlewares check it), else "path".
//
// A pass is a bearer credential for its short life: the gateway removes any
// Waitroom-Pass a client sends or the site answers with and only ever sends
// one to the site, which should not log it. A pass of a visitor who left or
// was released is refused within pass.ttl plus the leeway, 15s by default.
//
// # Keys and rotation
//
// The gateway's pass.key_files are Ed25519 private keys in PKCS#8 PEM, as
// `openssl genpkey -algorithm ed25519` writes them; the first signs and all
// are published. A site's RemoteJWKS fetches the set on first use, again
// when it is older than its refresh interval (5 minutes), and again when a
// pass names a kid it does not know, at most once per 30 seconds. To rotate:
// add the new key second, wait for the sites to see it, move it first, wait
// a TTL plus the leeway, then remove the old one.
package pass
