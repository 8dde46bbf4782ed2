// client.js gates an SPA's buttons and API calls with a waiting room, as a
// page behind the room is gated (served at /.waitroom/client.js, with
// challenge.js's solver after it). No dependencies; docs/client.md documents
// it with examples, client.d.ts (/.waitroom/client.d.ts) types it, and
// docs/protocol.md has the protocol it speaks, for apps that cannot run it.
//
//   waitroom.fetch(url, init) -> Promise<Response>
//     fetch, but an answer that says the visitor waits (the header
//     Waitroom-State: waiting, paused, prequeue or hold) shows the waiting
//     overlay, polls as the server hints, and sends the request again once
//     the visitor is in: the promise resolves with that answer.
//   waitroom.enter(room, {returnTo}) -> Promise<answer>
//     joins the room's line (POST /.waitroom/enter) and resolves once the
//     visitor is in, showing the overlay meanwhile: a button or a flow
//     gated NetFUNNEL-style.
//   waitroom.leave(room) -> Promise
//     gives the place up, or ends the session.
//   waitroom.onTurn(fn) -> function that removes fn
//     fn(answer, {hidden}) runs when a wait the overlay showed ends with
//     the visitor in, before the promise of fetch or enter resolves.
//   waitroom.alerts({sound, notify})
//     opts in to turn.js's alerts when the turn comes in a background tab
//     (a tone unless sound is false, a vibration, a flashing title until
//     the tab is seen, a system notification if the visitor opted in);
//     notify: false leaves the overlay's "Notify me" button out.
//   waitroom.notify() -> Promise<permission>
//     asks for the notification permission (from a click) and remembers
//     a yes per origin: the visitor's opt-in, as the overlay's button does.
//
// The overlay is a modal dialog (role="dialog", aria-live position), in
// Korean or English by the document's language, with the room's title from
// the server. It can be cancelled: the promise then rejects with an
// AbortError and the place is given up.
(function (root) {
  'use strict';
  var PREFIX = '/.waitroom/';
  var WAITING = { waiting: 1, paused: 1, prequeue: 1, hold: 1 };
  var TEXT = {
    en: { title: 'You are in line', position: 'Your place: {n}', ahead: '{n} ahead of you',
      eta: 'About {m} min', calculating: 'Estimating your wait…', leave: 'Leave the line',
      hold: 'Hold on, reconnecting…', paused: 'Entry is paused for a moment.', solving: 'Checking your browser…',
      turn: 'Your turn — {n}', turnBody: 'It is your turn. Come back to this tab to go on.',
      notify: "Notify me when it's my turn", notifyOn: 'You will get a notification when it is your turn.',
      notifyOff: 'Notifications are off.', notifyDenied: 'The browser did not allow notifications.' },
    ko: { title: '대기 중입니다', position: '내 순서: {n}번째', ahead: '앞에 {n}명',
      eta: '약 {m}분', calculating: '대기 시간을 계산하고 있습니다…', leave: '대기 취소',
      hold: '잠시만 기다려 주세요. 다시 연결하는 중입니다…', paused: '입장이 잠시 멈췄습니다.', solving: '브라우저를 확인하는 중입니다…',
      turn: '입장 차례 — {n}', turnBody: '입장 차례입니다. 이 탭으로 돌아와 계속하세요.',
      notify: '내 차례가 되면 알림 받기', notifyOn: '차례가 되면 알림을 보내 드립니다.',
      notifyOff: '알림을 껐습니다.', notifyDenied: '브라우저가 알림을 허용하지 않았습니다.' }
  };

  function lang() {
    var l = (document.documentElement.lang || navigator.language || 'en').toLowerCase();
    return l.indexOf('ko') === 0 ? 'ko' : 'en';
  }
  function t(key, n) { return String(TEXT[lang()][key]).split('{n}').join(n).split('{m}').join(n); }
  function sleep(ms, signal) {
    return new Promise(function (resolve, reject) {
      var id = setTimeout(resolve, ms);
      if (signal) signal.addEventListener('abort', function () { clearTimeout(id); reject(signal.reason); }, { once: true });
    });
  }
  function abortError() {
    try { return new DOMException('left the line', 'AbortError'); } catch (e) { var x = new Error('left the line'); x.name = 'AbortError'; return x; }
  }

  // Overlay is the waiting dialog, built with DOM calls only (no markup
  // from the server ever becomes HTML).
  function Overlay(onCancel) {
    var box = document.createElement('div');
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-modal', 'true');
    box.setAttribute('aria-labelledby', 'waitroom-overlay-title');
    box.id = 'waitroom-overlay';
    box.style.cssText = 'position:fixed;inset:0;z-index:2147483647;display:flex;align-items:center;justify-content:center;' +
      'background:rgba(0,0,0,.55);font:16px/1.5 system-ui,sans-serif';
    var card = document.createElement('div');
    card.style.cssText = 'background:#fff;color:#111;padding:24px 28px;border-radius:12px;max-width:22rem;text-align:center';
    var h = document.createElement('h2');
    h.id = 'waitroom-overlay-title';
    h.style.margin = '0 0 8px';
    var pos = document.createElement('p');
    pos.id = 'waitroom-overlay-position';
    pos.setAttribute('aria-live', 'polite');
    var info = document.createElement('p');
    info.id = 'waitroom-overlay-info';
    var btn = document.createElement('button');
    btn.type = 'button';
    btn.textContent = t('leave');
    btn.addEventListener('click', onCancel);
    card.appendChild(h); card.appendChild(pos); card.appendChild(info); card.appendChild(btn);
    notifyButton(card);
    box.appendChild(card);
    h.textContent = t('title');
    document.body.appendChild(box);
    btn.focus();
    var low = 0, lowTicket = 0;
    this.show = function (a) {
      if (a.state === 'hold') { pos.textContent = t('hold'); info.textContent = ''; return; }
      // paused is also a room with max_active 0: no estimate to give.
      if (a.state === 'paused' || a.paused) { info.textContent = t('paused'); }
      // Never a larger place for the same ticket: instances answer from
      // views up to a tick apart.
      if (a.position > 0 && !(a.ticket && a.ticket === lowTicket && a.position > low)) {
        low = a.position;
        lowTicket = a.ticket;
      }
      if (a.position > 0) pos.textContent = t('position', a.ticket === lowTicket ? low : a.position);
      if (a.state === 'waiting' && !a.paused) {
        info.textContent = typeof a.eta_seconds === 'number' ? t('eta', Math.max(1, Math.ceil(a.eta_seconds / 60))) : t('calculating');
      }
    };
    this.say = function (key) { info.textContent = t(key); };
    this.close = function () { if (box.parentNode) box.parentNode.removeChild(box); };
  }

  // The turn: turn.js (served after this file) alerts a visitor in a
  // background tab once the page opted in with alerts(); onTurn's
  // callbacks run either way.
  var turnFns = [], alertOpts = null;
  function helper() { return root.waitroomTurn; }
  function onTurn(fn) {
    turnFns.push(fn);
    return function () { turnFns = turnFns.filter(function (f) { return f !== fn; }); };
  }
  function alerts(opts) {
    alertOpts = Object.assign({ sound: true, notify: true }, opts || {});
    if (alertOpts.sound && helper()) helper().unlock();
  }
  function notify() {
    return helper() ? helper().optIn() : Promise.resolve('denied');
  }
  function turned(a) {
    var hidden = !!document.hidden;
    if (alertOpts && helper()) {
      helper().alert({ title: t('turn', document.title || location.host), body: t('turnBody'),
        tag: 'waitroom-turn-' + a.room, sound: alertOpts.sound });
    }
    turnFns.slice().forEach(function (fn) {
      try { fn(a, { hidden: hidden }); } catch (e) { setTimeout(function () { throw e; }); }
    });
    return a;
  }
  // notifyButton adds the opt-in to the overlay where it can work: alerts
  // on with notify, and a browser that has notifications and has not been
  // told no.
  function notifyButton(card) {
    var h = helper();
    if (!alertOpts || !alertOpts.notify || !h || !h.available()) return;
    var b = document.createElement('button'), say = document.createElement('p');
    b.type = 'button';
    b.id = 'waitroom-overlay-notify';
    b.textContent = t('notify');
    b.style.marginLeft = '8px';
    say.setAttribute('role', 'status');
    function mark() { b.setAttribute('aria-pressed', h.optedIn() ? 'true' : 'false'); return h.optedIn(); }
    mark();
    b.addEventListener('click', function () {
      if (h.optedIn()) { h.optOut(); mark(); say.textContent = t('notifyOff'); return; }
      h.optIn().then(function () { say.textContent = t(mark() ? 'notifyOn' : 'notifyDenied'); });
    });
    card.appendChild(b);
    card.appendChild(say);
  }

  function post(path, headers) {
    return fetch(path, { method: 'POST', credentials: 'same-origin', headers: Object.assign({ Accept: 'application/json' }, headers || {}) });
  }
  function json(res) { return res.json().catch(function () { return {}; }); }
  function status(room) {
    return fetch(PREFIX + 'status?room=' + encodeURIComponent(room), { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(json);
  }

  // wait polls the room until the visitor is in, as the server hints
  // (refresh_after), showing each answer; it resolves with the last one.
  function wait(room, first, overlay, signal) {
    var a = first;
    function step() {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (a.state === 'admitted') return Promise.resolve(a);
      if (!WAITING[a.state]) return Promise.reject(new Error('waitroom: ' + (a.state || 'no answer')));
      overlay.show(a);
      return sleep(Math.max(1, a.refresh_after || 5) * 1000, signal)
        .then(function () { return status(room); })
        .then(function (next) { a = next; return step(); });
    }
    return step();
  }

  // solve does a room's proof of work (challenge.js), then asks again.
  function solved(a, overlay, signal) {
    var solve = root.waitroomSolve;
    if (!a.challenge || typeof solve !== 'function') return Promise.reject(new Error('waitroom: cannot solve the challenge'));
    overlay.say('solving');
    return solve(a.challenge.prefix, a.challenge.bits, null, signal).then(function (nonce) {
      return a.challenge.prefix + ':' + nonce;
    });
  }

  function session(room, run) {
    var ctl = new AbortController();
    var overlay = new Overlay(function () {
      ctl.abort(abortError());
      post(PREFIX + 'leave?room=' + encodeURIComponent(room));
    });
    return run(overlay, ctl.signal).then(function (v) { overlay.close(); return v; },
      function (e) { overlay.close(); throw e; });
  }

  function enter(room, opts) {
    var q = 'room=' + encodeURIComponent(room) + (opts && opts.returnTo ? '&return_to=' + encodeURIComponent(opts.returnTo) : '');
    function ask(headers) { return post(PREFIX + 'enter?' + q, headers).then(json); }
    return ask().then(function (a) {
      if (a.state === 'admitted') return a;
      return session(room, function (overlay, signal) {
        var next = a.state === 'challenge'
          ? solved(a, overlay, signal).then(function (proof) { return ask({ 'Waitroom-Challenge': proof }); })
          : Promise.resolve(a);
        return next.then(function (b) { return wait(room, b, overlay, signal); });
      }).then(turned);
    });
  }

  function leave(room) {
    return post(PREFIX + 'leave?room=' + encodeURIComponent(room));
  }

  // wfetch sends the request; a waiting answer starts the line, and the
  // request is sent again, once, when the visitor is in.
  function wfetch(url, init) {
    init = Object.assign({ credentials: 'same-origin' }, init || {});
    return fetch(url, init).then(function (res) {
      var state = res.headers.get('Waitroom-State');
      if (!state || !WAITING[state]) return res;
      return json(res.clone()).then(function (a) {
        var room = a.room || res.headers.get('Waitroom-Room');
        if (!room) return res;
        return session(room, function (overlay, signal) {
          return wait(room, a.state ? a : { state: state, refresh_after: 2 }, overlay, signal);
        }).then(turned).then(function () { return fetch(url, init); });
      });
    });
  }

  root.waitroom = { fetch: wfetch, enter: enter, leave: leave, onTurn: onTurn, alerts: alerts, notify: notify, version: 1 };
})(typeof window !== 'undefined' ? window : this);
