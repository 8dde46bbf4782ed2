// Serves the Node module's middleware for the Go tests:
//   node middleware.mjs MODULE JWKS_URL DOWN_URL
// /events/7/checkout and /events/8/checkout need a pass for room concert
// and their own path, checked against JWKS_URL; /event/ID needs one for room
// event-ID (a template room, named from the request); /down checks against
// DOWN_URL, which serves no key set. A request that gets through is answered
// with req.waitroomPass as JSON. Prints the port.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const [modulePath, jwksUrl, downUrl] = process.argv.slice(2);
const { WaitroomPassVerifier, waitroomPass, requestPath } = await import(pathToFileURL(modulePath).href);
const options = { issuer: 'waitroom', audience: 'shop' };
const passes = new WaitroomPassVerifier({ ...options, jwksUrl });
const concert = waitroomPass(passes, { room: 'concert' });
const guards = {
  '/events/7/checkout': concert,
  '/events/8/checkout': concert,
  '/down': waitroomPass(new WaitroomPassVerifier({ ...options, jwksUrl: downUrl }), { room: 'concert' }),
};
const event = waitroomPass(passes, { room: (req) => `event-${requestPath(req).split('/')[2] ?? ''}` });
const server = http.createServer((req, res) => {
  const path = requestPath(req);
  const guard = guards[path] ?? (path.startsWith('/event/') ? event : null);
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
