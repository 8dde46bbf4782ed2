// spike.js: the ramp profile of cmd/waitroom-load as a k6 script. VISITORS
// browsers arrive evenly over RAMP; each joins the line, polls the status
// endpoint as the waiting page's script does (following refresh_after),
// makes REQUESTS requests once admitted, then leaves (AFTER=leave) or not.
// One k6 iteration is one visitor: k6 empties a VU's cookie jar between
// iterations, so every visitor starts without a ticket.
//
//   k6 run -e TARGET=http://127.0.0.1:8080/ -e VISITORS=2000 -e RAMP=10s loadtest/spike.js
//
// What k6 cannot do here is the cross-visitor checks (admission order,
// visitors inside at once): use cmd/waitroom-load for those. See
// docs/loadtest.md.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';

const env = (name, dflt) => (__ENV[name] === undefined || __ENV[name] === '' ? dflt : __ENV[name]);
const TARGET = env('TARGET', 'http://localhost:8080/');
const VISITORS = parseInt(env('VISITORS', '1000'), 10);
const RAMP = env('RAMP', '10s');
const REQUESTS = parseInt(env('REQUESTS', '5'), 10);
const THINK = parseFloat(env('THINK', '0.1')); // seconds between admitted requests
const AFTER = env('AFTER', 'leave'); // leave | idle
const MAX_WAIT = env('MAX_WAIT', '60s'); // how long a visitor may wait in line, after the ramp

const origin = (/^(https?:\/\/[^/]+)/.exec(TARGET) || [])[1];
const host = origin ? origin.replace(/^https?:\/\//, '').replace(/:\d+$/, '') : '';
// Like waitroom-load, refuse to load anything but this machine by default.
if (!origin || !(env('ALLOW_REMOTE', '') === '1' || host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host))) {
  throw new Error(`TARGET ${TARGET}: not a loopback URL; set ALLOW_REMOTE=1 to load a gateway you run elsewhere`);
}
if (!(VISITORS > 0) || !(REQUESTS >= 0) || !(THINK >= 0) || (AFTER !== 'leave' && AFTER !== 'idle')) {
  throw new Error('bad VISITORS, REQUESTS, THINK or AFTER');
}

export const options = {
  scenarios: {
    spike: {
      executor: 'constant-arrival-rate', // VISITORS arrivals spread evenly over RAMP
      rate: VISITORS,
      timeUnit: RAMP,
      duration: RAMP, // at least 1s (k6's rule)
      preAllocatedVUs: VISITORS, // every visitor may still be waiting when the last arrives
      maxVUs: VISITORS,
      gracefulStop: parseDuration(MAX_WAIT) / 1000 + 30 + 's', // the last to arrive may wait MAX_WAIT, then browse
    },
  },
  maxRedirects: 0, // a site's redirect is its answer, as in waitroom-load
  userAgent: 'Mozilla/5.0 (compatible; waitroom-load-k6/1)',
  thresholds: {
    join_latency: ['p(99)<100'],
    poll_latency: ['p(99)<100'],
    admitted_latency: ['p(99)<250'],
    errors: ['count<1'],
    still_waiting: ['count<1'],
  },
};

const joinLatency = new Trend('join_latency', true);
const pollLatency = new Trend('poll_latency', true);
const admittedLatency = new Trend('admitted_latency', true);
const errors = new Counter('errors');
const admitted = new Counter('admitted');
const stillWaiting = new Counter('still_waiting');

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const navigate = (referer) => ({
  Accept: HTML, 'Accept-Language': 'en-US,en;q=0.9', 'Sec-Fetch-Site': referer ? 'same-origin' : 'none',
  'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document', ...(referer ? { Referer: referer } : {}),
});
// What the page's fetch(status, {credentials: 'same-origin', cache: 'no-store'}) sends.
const poll = (referer) => ({
  Accept: 'application/json', 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty',
  'Cache-Control': 'no-cache', Pragma: 'no-cache', Referer: referer,
});
const local = (u) => typeof u === 'string' && u[0] === '/' && u[1] !== '/' && u[1] !== '\\';
const fail = (what) => errors.add(1, { what });

export default function () {
  // The executor also starts an iteration at exactly RAMP: one too many.
  if (exec.scenario.iterationInTest >= VISITORS) return;
  const deadline = Date.now() + parseDuration(MAX_WAIT);
  const join = http.get(TARGET, { headers: navigate(''), tags: { kind: 'join' } });
  joinLatency.add(join.timings.duration);
  if (join.status === 0) return fail('join: ' + join.error);
  let next = TARGET;
  if (join.headers['Waitroom-State']) {
    const seed = /id="wr-data">([^<]*)<\/script>/.exec(join.body || '');
    let page;
    try { page = JSON.parse(seed[1]); } catch (e) { return fail('join: no wr-data in the page'); }
    if (!local(page.status)) return fail('join: status URL not on this site');
    const to = waitInLine(origin + page.status, page.refresh > 0 ? page.refresh : 5, deadline);
    if (to === null) return;
    if (local(to)) next = origin + to;
  } else if (join.status >= 400) {
    return fail('join: status ' + join.status);
  }
  admitted.add(1);
  let referer = TARGET;
  for (let i = 0; i < REQUESTS; i++) {
    if (i > 0) sleep(THINK);
    const res = http.get(next, { headers: navigate(referer), tags: { kind: 'admitted' } });
    admittedLatency.add(res.timings.duration);
    if (res.status === 0 || res.status >= 400) fail('admitted: status ' + (res.status || res.error));
    if (res.headers['Waitroom-State']) return fail('admitted: sent back to the line');
    referer = next;
    next = TARGET;
  }
  if (AFTER === 'leave') {
    const res = http.post(origin + '/.waitroom/leave', null, {
      headers: { ...navigate(TARGET), Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' },
      tags: { kind: 'leave' },
    });
    if (res.status !== 200) fail('leave: status ' + (res.status || res.error));
  }
}

// waitInLine polls like the page: first after its refresh, then after each
// answer's refresh_after, backing off on trouble. It returns where to go
// once admitted, or null when the visitor gave up or lost its ticket.
function waitInLine(status, base, deadline) {
  let delay = base, fails = 0;
  for (;;) {
    if (Date.now() + delay * 1000 > deadline) { stillWaiting.add(1); return null; }
    sleep(delay);
    const res = http.get(status, { headers: poll(TARGET), tags: { kind: 'poll' } });
    pollLatency.add(res.timings.duration);
    let d = null;
    if ((res.status >= 200 && res.status < 300) || res.status === 429) {
      try { d = JSON.parse(res.body); } catch (e) { /* counted below */ }
    }
    if (!d || typeof d.state !== 'string') {
      fail('poll: ' + (res.status ? 'status ' + res.status : res.error));
      fails++;
      delay = Math.min(60, base * Math.pow(2, fails)) * (0.75 + Math.random() * 0.5);
      continue;
    }
    fails = 0;
    if (d.state === 'admitted') return d.next || '/';
    if (d.state === 'none') { fail('poll: ticket lost'); return null; }
    if (d.state === 'hold') fail('poll: store unreachable (hold)');
    delay = d.refresh_after >= 1 ? d.refresh_after : base;
  }
}

function parseDuration(s) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
  if (!m) throw new Error(`bad duration ${s}`);
  return parseFloat(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]];
}
