// waiting.js keeps the waiting room current without reloading it: it polls
// the status endpoint, rewrites the numbers in place and, once the visitor is
// admitted, moves on to the page first asked for. Without it the page's
// <noscript> refresh does the same job, more coarsely.
(function () {
  'use strict';
  var seed = document.getElementById('wr-data');
  var cfg;
  try { cfg = JSON.parse(seed.textContent); } catch (e) { return; }
  var T = cfg.text || {};
  // A room's own words for its closed page ("Sold out") replace the built-in ones.
  if (cfg.closed) {
    if (cfg.closed.heading) T.closed_heading = cfg.closed.heading;
    if (cfg.closed.lead) T.closed_lead = cfg.closed.lead;
  }
  var base = cfg.refresh > 0 ? cfg.refresh : 5;
  var fails = 0, timer = 0, due = 0, said = cfg.position, saidAt = 0, gone = false;
  var turn = window.waitroomTurn;
  if (turn && !cfg.quiet) turn.unlock();

  function $(id) { return document.getElementById(id); }
  // Same site only: one leading slash, so "//host" and "/\host" cannot
  // send the visitor elsewhere.
  function local(u) {
    return typeof u === 'string' && u.charAt(0) === '/' && u.charAt(1) !== '/' && u.charAt(1) !== '\\';
  }
  function group(n) {
    return String(Math.max(0, Math.floor(n || 0))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function fill(s, n) { return String(s || '').split('{n}').join(n); }
  // The same plural rule as text.go: "ahead0"/"ahead1" if the language has
  // them, else "aheadN".
  function count(key, n) {
    n = Math.max(0, n || 0);
    var s = n <= 1 ? T[key + n] : undefined;
    return s !== undefined ? s : fill(T[key + 'N'], group(n));
  }
  function eta(sec, most) {
    if (typeof sec !== 'number') return T.eta_unknown;
    if (typeof most === 'number' && most > sec) {
      var a = Math.max(1, Math.ceil(sec / 60)), b = Math.ceil(most / 60);
      if (b >= 60) return eta(most);
      if (a < b) return T.eta_range.replace('{a}', a).replace('{b}', b);
    }
    if (sec < 60) return T.eta_less;
    var m = Math.ceil(sec / 60);
    if (m < 60) return count('eta_m', m);
    m = Math.ceil(m / 5) * 5;
    var s = m % 60 ? T.eta_hm : T.eta_h;
    return s.replace('{h}', Math.floor(m / 60)).replace('{m}', m % 60);
  }
  function set(id, s) {
    var el = $(id);
    if (el && el.textContent !== s) el.textContent = s;
  }
  function stamp(d) {
    var el = $('wr-updated');
    if (!el || isNaN(d)) return;
    el.setAttribute('datetime', d.toISOString());
    el.textContent = d.toLocaleTimeString(cfg.lang);
  }

  // A position shown never grows for one ticket: instances answer polls
  // from views up to a tick apart, so one may say a few places more than
  // the last.
  var lowest = cfg.position > 0 ? cfg.position : 0, lowestTicket = cfg.ticket || 0;
  function steady(d) {
    if (!(d.position > 0)) return;
    if (d.ticket && d.ticket === lowestTicket && lowest > 0 && d.position > lowest) {
      d.behind = (d.behind || 0) + d.position - lowest;
      d.position = lowest;
      d.ahead = Math.max(0, lowest - 1);
    }
    lowest = d.position;
    lowestTicket = d.ticket || lowestTicket;
  }

  function show(d) {
    steady(d);
    var state = T[d.state + '_heading'] ? d.state : 'waiting';
    $('wr-main').setAttribute('data-state', state);
    set('wr-heading', T[state + '_heading']);
    set('wr-lead', T[state + '_lead']);
    // The operator's notice changes without a reload (set as text, never markup).
    var note = $('wr-message');
    if (note) {
      set('wr-message', d.message || '');
      note.hidden = !d.message;
    }
    var line = d.position > 0 && state !== 'admitted' && state !== 'closed';
    $('wr-line').hidden = !line;
    document.title = (cfg.preview ? T.preview_title + ' · ' : '') +
      (line ? fill(T.doc_title, group(d.position)) + ' · ' + cfg.title : cfg.title);
    if (line) {
      set('wr-pos', group(d.position));
      set('wr-ahead', count('ahead', d.ahead));
      set('wr-behind', count('behind', d.behind));
      set('wr-total', count('waiting', d.waiting));
      // A room that lets nobody in has no estimate: a rate measured before
      // the stop would promise a turn that is not coming.
      set('wr-eta', d.paused || state === 'paused' ? T.eta_paused : eta(d.eta_seconds, d.eta_max_seconds));
      var pct = Math.round(Math.min(1, Math.max(0, d.progress || 0)) * 100);
      var bar = $('wr-bar');
      bar.setAttribute('aria-valuenow', pct);
      bar.setAttribute('aria-valuetext', fill(T.progress_text, pct));
      $('wr-fill').setAttribute('width', pct + '%');
      announce(d.position);
    }
    stamp(new Date());
  }
  // Tell screen readers about a new position, but not more than every 20s:
  // a fast line would otherwise talk over everything else.
  function announce(pos) {
    var now = Date.now();
    if (pos === said || now - saidAt < 20000) return;
    said = pos;
    saidAt = now;
    set('wr-announce', fill(T.announce, group(pos)));
  }

  function go(next) {
    gone = true;
    set('wr-heading', T.admitted_heading);
    set('wr-lead', T.admitted_lead);
    set('wr-announce', T.admitted_heading);
    // In a background tab the turn is announced (turn.js) and the page
    // stays until it is looked at: the site opened out of sight would take
    // the title, and the visitor would not know. In front, on at once.
    if (document.hidden && turn && !cfg.preview) {
      var line = $('wr-line'), box = $('wr-notify');
      if (line) line.hidden = true;
      if (box) box.hidden = true;
      set('wr-lead', T.turn_lead);
      set('wr-announce', T.turn_lead);
      turn.alert({ title: fill(T.turn_title, cfg.title), body: fill(T.turn_body, cfg.title),
        tag: 'waitroom-turn', sound: !cfg.quiet });
      document.addEventListener('visibilitychange', function seen() {
        if (document.hidden) return;
        document.removeEventListener('visibilitychange', seen);
        on(next);
      });
      return;
    }
    on(next);
  }
  function on(next) {
    // replace, not assign: Back must not return to the waiting room.
    if (local(next)) location.replace(next);
    else location.reload();
  }

  // The opt-in for a system notification when the turn comes: shown only
  // where the browser has them and has not been told no; the browser asks
  // only on this click, never unprompted.
  function optIn() {
    var box = $('wr-notify'), btn = $('wr-notify-btn');
    if (!box || !btn || !turn || !turn.available() || cfg.state === 'admitted') return;
    function mark() {
      var yes = turn.optedIn();
      btn.setAttribute('aria-pressed', yes ? 'true' : 'false');
      box.hidden = !turn.available();
      return yes;
    }
    mark();
    btn.addEventListener('click', function () {
      if (turn.optedIn()) {
        turn.optOut();
        mark();
        set('wr-notify-state', T.notify_off);
        return;
      }
      turn.optIn().then(function () {
        set('wr-notify-state', mark() ? T.notify_on : T.notify_denied);
      });
    });
  }

  // A room with a challenge: the page does the work (challenge.js), then
  // asks again with the answer, which hands it its ticket, and reloads to
  // show its place, or the site when there is room. A refused answer comes
  // back with a fresh challenge, which it solves in turn.
  function solve(c) {
    if (typeof window.waitroomSolve !== 'function' || !window.fetch) return;
    window.waitroomSolve(c.prefix, c.bits, function (done, expected) {
      set('wr-announce', fill(T.challenge_progress, Math.min(99, Math.floor(100 * done / expected))));
      set('wr-lead', fill(T.challenge_progress, Math.min(99, Math.floor(100 * done / expected))));
    }).then(function (nonce) {
      // A preview shows the work and stops there: its link joins nobody,
      // so nothing is sent, and this promise never settles.
      if (cfg.preview) return new Promise(function () {});
      return fetch(location.href, {
        headers: { Accept: 'application/json', 'Waitroom-Challenge': c.prefix + ':' + nonce },
        credentials: 'same-origin',
        cache: 'no-store'
      });
    }).then(function (r) {
      return r.json().catch(function () { return null; });
    }).then(function (d) {
      if (d && d.state === 'challenge' && d.challenge) return solve(d.challenge);
      location.reload();
    }).catch(function () {
      setTimeout(function () { location.reload(); }, base * 1000);
    });
  }

  function wait(s) {
    clearTimeout(timer);
    due = Date.now() + s * 1000;
    timer = setTimeout(poll, s * 1000);
  }

  function poll() {
    var ctl = window.AbortController ? new AbortController() : null;
    var guard = setTimeout(function () { if (ctl) ctl.abort(); }, 15000);
    fetch(cfg.status, {
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
      cache: 'no-store',
      signal: ctl ? ctl.signal : undefined
    }).then(function (r) {
      // 202 and 429 are waiting answers too; anything else is trouble.
      if (!r.ok && r.status !== 429) throw new Error('status ' + r.status);
      return r.json();
    }).then(function (d) {
      clearTimeout(guard);
      if (!d || typeof d.state !== 'string') throw new Error('no state');
      fails = 0;
      if (d.state === 'admitted') return go(d.next);
      // The ticket is gone (say, the visitor left in another tab): a fresh
      // page load lets the server decide what comes next.
      if (d.state === 'none') return location.reload();
      show(d);
      wait(d.refresh_after >= 1 ? d.refresh_after : base);
    }).catch(function () {
      clearTimeout(guard);
      fails++;
      // Back off up to a minute, with jitter so that when the server comes
      // back it is not met by every waiting browser in the same second.
      wait(Math.min(60, base * Math.pow(2, fails)) * (0.75 + Math.random() * 0.5));
    });
  }

  stamp(new Date($('wr-updated').getAttribute('datetime')));
  optIn();
  if (cfg.state === 'admitted') return go(cfg.next);
  if (cfg.state === 'challenge' && cfg.challenge) return solve(cfg.challenge);
  if (!window.fetch || !local(cfg.status)) {
    setTimeout(function () { location.reload(); }, base * 1000);
    return;
  }
  wait(base);
  // Timers in a background tab are slowed; catch up when it is looked at
  // again, and as soon as the network is back.
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden && !gone && Date.now() > due + 1000) wait(0);
  });
  window.addEventListener('online', function () { if (fails) wait(0); });
}());
