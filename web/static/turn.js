// turn.js tells a visitor whose tab is in the background that their turn
// has come, as NetFUNNEL's page does: a short tone, a vibration, a title
// that flashes until the tab is looked at again, and a system notification
// if the visitor asked for one. The waiting page (waiting.js) and client.js
// both carry it (each is served with this file before it) and share it
// through window.waitroomTurn. In the foreground it does nothing: the page
// on screen says it all.
//
//   waitroomTurn.alert({title, body, tag, sound}) -> bool
//     alerts if the document is hidden; false (and nothing done) otherwise.
//   waitroomTurn.unlock()
//     from the first click or key press on, the tone may play: browsers
//     start audio only after a gesture, and a background tab has none.
//   waitroomTurn.available() / optedIn() / optIn() / optOut()
//     the notification opt-in, remembered per origin in localStorage;
//     optIn asks the browser's permission and must run from a click.
(function (root) {
  'use strict';
  if (root.waitroomTurn) return; // client.js and the page both loaded: one is enough
  var KEY = 'waitroom.notify';
  var audio = null; // an AudioContext made during a gesture, so it may play later
  var flashing = 0, restore = null;

  function Ctx() { return root.AudioContext || root.webkitAudioContext; }

  // unlock makes the AudioContext on the visitor's first gesture (if any);
  // without one the tone is tried anyway and fails silently where the
  // browser's autoplay policy forbids it.
  function unlock() {
    var events = ['pointerdown', 'keydown', 'touchend'];
    function once() {
      events.forEach(function (e) { root.removeEventListener(e, once, true); });
      try {
        var C = Ctx();
        if (C && !audio) audio = new C();
        if (audio && audio.state === 'suspended') audio.resume().catch(function () {});
      } catch (e) { audio = null; }
    }
    events.forEach(function (e) { root.addEventListener(e, once, true); });
  }

  // tone plays two short notes (880 Hz then 660 Hz, 0.18 s each) at a soft
  // volume, generated here: no audio file to fetch or to block.
  function tone() {
    try {
      var C = Ctx();
      if (!C) return;
      if (!audio) audio = new C();
      var play = function () {
        var t = audio.currentTime;
        [880, 660].forEach(function (hz, i) {
          var o = audio.createOscillator(), g = audio.createGain(), at = t + i * 0.22;
          o.type = 'sine';
          o.frequency.value = hz;
          g.gain.setValueAtTime(0.0001, at);
          g.gain.exponentialRampToValueAtTime(0.2, at + 0.02);
          g.gain.exponentialRampToValueAtTime(0.0001, at + 0.18);
          o.connect(g);
          g.connect(audio.destination);
          o.start(at);
          o.stop(at + 0.2);
        });
      };
      // A context the browser has not let start yet may start later, when
      // the visitor is back: a tone then would be late, so none.
      if (audio.state === 'running') play();
      else audio.resume().then(function () { if (document.hidden) play(); }, function () {});
    } catch (e) { /* no audio here: the other signals still go */ }
  }

  function vibrate() {
    try {
      if (typeof navigator.vibrate === 'function') navigator.vibrate([200, 100, 200]);
    } catch (e) { /* not allowed without a gesture in some browsers */ }
  }

  // flash alternates the title's mark until the tab is seen, then puts
  // back the title it found.
  function flash(title) {
    if (flashing) return;
    var on = true;
    restore = document.title;
    document.title = '\u25cf ' + title;
    flashing = setInterval(function () {
      on = !on;
      document.title = (on ? '\u25cf ' : '\u25cb ') + title;
    }, 1000);
    function seen() {
      if (document.hidden) return;
      document.removeEventListener('visibilitychange', seen);
      clearInterval(flashing);
      flashing = 0;
      document.title = restore;
    }
    document.addEventListener('visibilitychange', seen);
  }

  function available() {
    return typeof root.Notification === 'function' && root.Notification.permission !== 'denied';
  }
  function remembered() {
    try { return root.localStorage.getItem(KEY) === '1'; } catch (e) { return false; }
  }
  function optedIn() {
    return available() && remembered() && root.Notification.permission === 'granted';
  }
  // optIn asks for permission (from a click only: browsers ignore or
  // penalise unprompted asks) and remembers a yes; it resolves with the
  // browser's answer.
  function optIn() {
    if (!available()) return Promise.resolve('denied');
    var ask = root.Notification.requestPermission();
    return Promise.resolve(ask).then(function (p) {
      try {
        if (p === 'granted') root.localStorage.setItem(KEY, '1');
        else root.localStorage.removeItem(KEY);
      } catch (e) { /* storage off: the choice lasts this page */ }
      return p;
    });
  }
  function optOut() {
    try { root.localStorage.removeItem(KEY); } catch (e) { /* nothing kept */ }
  }

  function notify(o) {
    if (!optedIn()) return;
    try {
      var n = new root.Notification(o.title, { body: o.body || '', tag: o.tag || 'waitroom-turn', requireInteraction: true });
      n.onclick = function () {
        try { root.focus(); } catch (e) { /* the browser decides */ }
        n.close();
      };
      document.addEventListener('visibilitychange', function gone() {
        if (document.hidden) return;
        document.removeEventListener('visibilitychange', gone);
        n.close();
      });
    } catch (e) { /* Android Chrome wants a service worker for this: the other signals go */ }
  }

  function alert(o) {
    if (!document.hidden) return false;
    if (o.sound !== false) tone();
    vibrate();
    flash(o.title);
    notify(o);
    return true;
  }

  root.waitroomTurn = { alert: alert, unlock: unlock, available: available, optedIn: optedIn, optIn: optIn, optOut: optOut };
})(typeof window !== 'undefined' ? window : this);
