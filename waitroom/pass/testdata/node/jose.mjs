// Stock JOSE from npm (panva's jose) against waitroom's passes, for the Go
// tests. Run from a directory where `npm install jose` put it:
//   node jose.mjs verify ALG JWKS_URL ISSUER AUDIENCE TOKEN
//     verifies with jwtVerify and createRemoteJWKSet (the way a site that
//     uses jose would); prints {"payload":...,"header":...} or exits 1 with
//     the error's code.
//   node jose.mjs sign ALG CLAIMS_JSON
//     makes a key pair, signs CLAIMS as a JWT with kid = the RFC 7638
//     thumbprint; prints {"jwks":{"keys":[...]},"token":...}.
//   node jose.mjs thumbprint JWK_JSON
//     prints calculateJwkThumbprint of the JWK.
import * as jose from 'jose';

const [mode, ...args] = process.argv.slice(2);
if (mode === 'verify') {
  const [alg, url, issuer, audience, token] = args;
  try {
    const jwks = jose.createRemoteJWKSet(new URL(url));
    const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, { issuer, audience, algorithms: [alg] });
    console.log(JSON.stringify({ payload, header: protectedHeader }));
  } catch (err) {
    console.log(`refused ${err.code ?? err.name}`);
    process.exit(1);
  }
} else if (mode === 'sign') {
  const [alg, claims] = args;
  const { publicKey, privateKey } = await jose.generateKeyPair(alg, { extractable: true });
  const jwk = await jose.exportJWK(publicKey);
  jwk.kid = await jose.calculateJwkThumbprint(jwk);
  jwk.alg = alg;
  jwk.use = 'sig';
  const token = await new jose.SignJWT(JSON.parse(claims))
    .setProtectedHeader({ alg, kid: jwk.kid, typ: 'JWT' })
    .sign(privateKey);
  console.log(JSON.stringify({ jwks: { keys: [jwk] }, token }));
} else if (mode === 'thumbprint') {
  console.log(await jose.calculateJwkThumbprint(JSON.parse(args[0])));
} else {
  console.error('usage: node jose.mjs verify|sign|thumbprint ...');
  process.exit(2);
}
