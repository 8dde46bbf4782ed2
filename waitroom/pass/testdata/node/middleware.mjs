// Serves the Node module's middleware for the Go tests:
//   node middleware.mjs MODULE JWKS_URL DOWN_URL
// /bookings needs a pass for room concert checked against JWKS_URL; /down
// checks against DOWN_URL, which serves no key set. A request that gets
// through is answered with req.waitroomPass as JSON. Prints the port.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const [modulePath, jwksUrl, downUrl] = process.argv.slice(2);
const { WaitroomPassVerifier, waitroomPass } = await import(pathToFileURL(modulePath).href);
const options = { issuer: 'waitroom', audience: 'shop' };
const guards = {
  '/bookings': waitroomPass(new WaitroomPassVerifier({ ...options, jwksUrl }), { room: 'concert' }),
  '/down': waitroomPass(new WaitroomPassVerifier({ ...options, jwksUrl: downUrl }), { room: 'concert' }),
};
const server = http.createServer((req, res) => {
  const guard = guards[req.url];
  if (!guard) {
    res.statusCode = 404;
    res.end();
    return;
  }
  guard(req, res, () => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(req.waitroomPass));
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
// The test ends the server by closing stdin.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
