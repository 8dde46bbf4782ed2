// challenge.js solves the waiting room's proof of work in the browser. It
// finds a nonce such that SHA-256(prefix + nonce) starts with `bits` zero
// bits. Nonces are the decimal counter 0, 1, 2, … taken in order, so the
// answer is the one the Go solver (challenge.Solve) finds.
//
//   waitroomSolve(prefix, bits, onProgress, signal) -> Promise<string>
//     hashes with WebCrypto. A digest costs mostly its trip to the crypto
//     thread, so BATCH of them are in flight at once and awaited together.
//     Where WebCrypto is missing (a page served over plain http) it uses
//     the engine below.
//   waitroomSolveJS(prefix, bits, onProgress, signal) -> Promise<string>
//     hashes in JavaScript from the prefix's midstate: the prefix's whole
//     64-byte blocks are compressed once, and each attempt compresses only
//     the last block. Many times faster than WebCrypto; see
//     docs/challenge.md for figures.
//
// Both return to the event loop every few milliseconds, so the page stays
// responsive. onProgress(attempts, expected) is called at the start, at most
// every REPORT_MS after, and once at the end; expected is 2^bits, the
// average number of attempts. An AbortSignal stops the work and rejects the
// promise with the signal's reason.
//
// No eval and no handlers in markup: the page's Content-Security-Policy
// allows this file by its hash.
(function (root) {
  'use strict';
  var BATCH = 256; // digests in flight per WebCrypto step
  var SLICE_MS = 20; // longest either engine works before yielding
  var REPORT_MS = 100;
  var MAX_BITS = 32; // challenge.MaxBits
  var MAX_PREFIX = 200;

  // solve checks the arguments and drives engine(prefix, bits), whose
  // step(from) returns a promise of the first good counter in a run of
  // attempts from `from` (or -1) and how many it tried.
  function solve(engine, prefix, bits, onProgress, signal) {
    bits = Number(bits);
    if (typeof prefix !== 'string' || prefix.length > MAX_PREFIX || !/^[A-Za-z0-9_-]+$/.test(prefix) ||
        !(bits >= 0 && bits <= MAX_BITS && Math.floor(bits) === bits)) {
      return Promise.reject(new TypeError('waitroomSolve: bad challenge'));
    }
    var step = engine(prefix, bits);
    var report = typeof onProgress === 'function' ? onProgress : function () {};
    var expected = Math.pow(2, bits);
    var next = 0, lastReport = 0, lastYield = Date.now();
    return new Promise(function (resolve, reject) {
      function tell(n) {
        lastReport = Date.now();
        try { report(n, expected); } catch (e) { /* the page's own problem */ }
      }
      function go() {
        step(next).then(more, reject);
      }
      function more(r) {
        if (signal && signal.aborted) {
          return reject(signal.reason !== undefined ? signal.reason : new DOMException('stopped', 'AbortError'));
        }
        if (r.found >= 0) {
          tell(r.found + 1);
          return resolve(String(r.found));
        }
        next += r.tried;
        var now = Date.now();
        if (now - lastReport >= REPORT_MS) tell(next);
        // Settled digests alone would starve the page's timers (Chromium
        // runs their completions first), so hand the loop back now and then.
        if (now - lastYield < SLICE_MS) return go();
        yieldNow().then(function () {
          lastYield = Date.now();
          go();
        });
      }
      tell(0);
      more({ found: -1, tried: 0 });
    });
  }

  // yieldNow resolves after the event loop has run other tasks: a message,
  // because timers in a background tab are throttled to one a second or less.
  function yieldNow() {
    return new Promise(function (resolve) {
      var ch = new MessageChannel();
      ch.port1.onmessage = function () {
        ch.port1.close();
        resolve();
      };
      ch.port2.postMessage(0);
    });
  }

  function ascii(s) {
    var b = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
    return b;
  }

  // good reports whether a hash starting with the 32-bit word w has bits
  // leading zero bits.
  function good(w, bits) {
    return bits === 0 || (w >>> (32 - bits)) === 0;
  }

  // putCounter writes n in decimal into buf at off and returns its length.
  function putCounter(buf, off, n) {
    var s = String(n);
    for (var i = 0; i < s.length; i++) buf[off + i] = s.charCodeAt(i);
    return s.length;
  }

  function webCrypto(prefix, bits) {
    var subtle = root.crypto.subtle;
    var head = ascii(prefix);
    // digest copies its input before returning, so one buffer serves the
    // whole batch; 16 bytes hold any counter below 2^53.
    var buf = new Uint8Array(head.length + 16);
    buf.set(head);
    return function (from) {
      var work = new Array(BATCH);
      for (var i = 0; i < BATCH; i++) {
        work[i] = subtle.digest('SHA-256', buf.subarray(0, head.length + putCounter(buf, head.length, from + i)));
      }
      return Promise.all(work).then(function (sums) {
        for (var i = 0; i < sums.length; i++) {
          if (good(new DataView(sums[i]).getUint32(0), bits)) return { found: from + i, tried: i + 1 };
        }
        return { found: -1, tried: BATCH };
      });
    };
  }

  // SHA-256 round constants (FIPS 180-4, 4.2.2) and initial state (5.3.3).
  var K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  var H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

  // compress runs one SHA-256 block, the 16 big-endian words of bytes at
  // off, on state H (8 words, updated) with schedule scratch W.
  function compress(H, bytes, off, W) {
    var i, x, y;
    for (i = 0; i < 16; i++, off += 4) {
      W[i] = bytes[off] << 24 | bytes[off + 1] << 16 | bytes[off + 2] << 8 | bytes[off + 3];
    }
    for (i = 16; i < 64; i++) {
      x = W[i - 15];
      y = W[i - 2];
      W[i] = (W[i - 16] + ((x >>> 7 | x << 25) ^ (x >>> 18 | x << 14) ^ (x >>> 3)) + W[i - 7] +
        ((y >>> 17 | y << 15) ^ (y >>> 19 | y << 13) ^ (y >>> 10))) | 0;
    }
    var a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7], t1, t2;
    for (i = 0; i < 64; i++) {
      t1 = (h + ((e >>> 6 | e << 26) ^ (e >>> 11 | e << 21) ^ (e >>> 25 | e << 7)) + ((e & f) ^ (~e & g)) +
        K[i] + W[i]) | 0;
      t2 = (((a >>> 2 | a << 30) ^ (a >>> 13 | a << 19) ^ (a >>> 22 | a << 10)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
    H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
  }

  function javaScript(prefix, bits) {
    var head = ascii(prefix), whole = head.length - head.length % 64;
    var W = new Int32Array(64), mid = new Int32Array(H0), H = new Int32Array(8);
    for (var off = 0; off < whole; off += 64) compress(mid, head, off, W);
    // The tail of the prefix, the counter, 0x80, zeros and the length in
    // bits fill one or two blocks.
    var tail = new Uint8Array(128);
    tail.set(head.subarray(whole));
    var at = head.length - whole;
    function attempt(n) {
      var len = putCounter(tail, at, n), end = at + len;
      var blocks = end + 9 <= 64 ? 1 : 2, last = blocks * 64;
      tail.fill(0, end, last);
      tail[end] = 0x80;
      var bitLen = (head.length + len) * 8; // < 2^32: the prefix is short
      tail[last - 4] = bitLen >>> 24; tail[last - 3] = bitLen >>> 16 & 255;
      tail[last - 2] = bitLen >>> 8 & 255; tail[last - 1] = bitLen & 255;
      H.set(mid);
      compress(H, tail, 0, W);
      if (blocks === 2) compress(H, tail, 64, W);
      return H[0];
    }
    return function (from) {
      var until = Date.now() + SLICE_MS, n = from;
      do {
        for (var stop = n + 1024; n < stop; n++) {
          if (good(attempt(n), bits)) return Promise.resolve({ found: n, tried: n - from + 1 });
        }
      } while (Date.now() < until);
      return Promise.resolve({ found: -1, tried: n - from });
    };
  }

  root.waitroomSolveJS = function (prefix, bits, onProgress, signal) {
    return solve(javaScript, prefix, bits, onProgress, signal);
  };
  root.waitroomSolve = function (prefix, bits, onProgress, signal) {
    var engine = root.crypto && root.crypto.subtle ? webCrypto : javaScript;
    return solve(engine, prefix, bits, onProgress, signal);
  };
})(typeof self !== 'undefined' ? self : this);
