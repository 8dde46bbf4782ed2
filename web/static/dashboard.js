// dashboard.js runs the operator's dashboard: it asks for the admin token once
// (kept in this tab's sessionStorage), polls the admin API for the rooms every
// few seconds and for their 15-minute history less often, never with two
// requests of one kind in flight, draws the history as SVG polylines and sends
// the controls' changes. What it shows is set with textContent or SVG
// attributes; nothing from the API becomes markup.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const app = $('app'), API = app.dataset.api, KEY = 'waitroom.admin.token';
  const ROOMS_MS = Number(app.dataset.roomsEvery) || 3000;
  const HISTORY_MS = Number(app.dataset.historyEvery) || 10000;
  const SPAN = 15 * 60 * 1000; // what the charts cover
  // The page's words in its language (the server picked it: the operator's
  // choice, else Accept-Language); {x} marks a value tr() fills in.
  const T = JSON.parse($('dash-text').textContent), LANG = app.dataset.lang === 'ko' ? 'ko' : 'en';
  const tr = (key, vals) => String(T[key] || key).replace(/\{(\w+)\}/g, (m, k) => (vals && k in vals ? vals[k] : m));
  const CHARTS = { waiting: 'chart_waiting', active: 'chart_active', admitted_per_minute: 'chart_rate' };
  const LOCALE = LANG === 'ko' ? 'ko-KR' : 'en-US';
  const fmt = new Intl.NumberFormat(LOCALE), compact = new Intl.NumberFormat(LOCALE, { notation: 'compact' });
  let cards = {}, memToken = '', lastOK = 0;

  const num = (n) => (Number.isFinite(n) ? fmt.format(n) : '—');
  const setText = (el, s) => { if (el.textContent !== s) el.textContent = s; };
  const say = (el, msg, ok) => { el.textContent = msg; el.classList.toggle('ok', !!ok); }; // next to a control
  const banner = (msg) => { $('banner').textContent = msg; $('banner').hidden = !msg; };

  // The token lives in sessionStorage, or in memory where storage is blocked.
  function token() { try { return sessionStorage.getItem(KEY) || ''; } catch (e) { return memToken; } }
  function setToken(t) {
    memToken = t;
    try { t ? sessionStorage.setItem(KEY, t) : sessionStorage.removeItem(KEY); } catch (e) { /* memory only */ }
  }

  // call sends one API request and resolves to its JSON; a 401 signs out,
  // any other failure rejects with the API's own message.
  async function call(method, path, body) {
    const ctl = new AbortController(), timer = setTimeout(() => ctl.abort(), 8000);
    const headers = { Accept: 'application/json' };
    if (token()) headers.Authorization = 'Bearer ' + token();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const res = await fetch(API + path, { method, headers, cache: 'no-store', credentials: 'omit',
        signal: ctl.signal, body: body === undefined ? undefined : JSON.stringify(body) });
      const data = await res.json().catch(() => null); // errors may come without JSON
      if (res.status === 401) {
        signOut(tr('token_refused'));
        throw Object.assign(new Error('signed out'), { auth: true });
      }
      if (!res.ok) throw new Error((data && data.error) || 'HTTP ' + res.status);
      return data;
    } catch (e) {
      throw e.name === 'AbortError' ? new Error(tr('no_answer')) : e;
    } finally { clearTimeout(timer); }
  }

  // poller runs fn every ms milliseconds, counted from the end of the last
  // run, so a slow API never gets a second request on top of the first; a
  // kick during a run asks for one more run right after it.
  function poller(fn, ms) {
    let timer = 0, running = false, again = false, on = false;
    async function run() {
      clearTimeout(timer);
      if (!on) return;
      if (running) { again = true; return; }
      running = true;
      try { await fn(); } catch (e) { /* fn reports its own trouble */ }
      running = false;
      if (again && on) { again = false; run(); } else if (on) timer = setTimeout(run, ms);
    }
    return { start() { on = true; run(); }, stop() { on = again = false; clearTimeout(timer); }, kick: run };
  }
  const roomsPoll = poller(loadRooms, ROOMS_MS), historyPoll = poller(loadHistory, HISTORY_MS);

  async function loadRooms() {
    try {
      const data = await call('GET', '/rooms');
      lastOK = Date.now();
      banner('');
      render((data && data.rooms) || []);
      templates((data && data.templates) || []);
    } catch (e) {
      if (!e.auth) banner(tr('unreachable', { e: e.message }));
    }
    live();
  }

  async function loadHistory() {
    await Promise.all(Object.keys(cards).map(async (name) => {
      try {
        const h = await call('GET', '/rooms/' + encodeURIComponent(name) + '/history');
        if (cards[name]) { cards[name].hist = h; draw(cards[name]); }
      } catch (e) { /* the charts keep their last picture */ }
    }));
  }

  // live says whether the numbers are fresh: a silent API turns it amber.
  function live() {
    const el = $('live'), age = Date.now() - lastOK, fresh = lastOK && age < Math.max(10000, 3 * ROOMS_MS);
    el.classList.toggle('stale', !fresh);
    setText($('live-text'), !lastOK ? tr('connecting')
      : fresh ? tr('live_every', { n: ROOMS_MS / 1000 }) : tr('no_update', { n: Math.round(age / 1000) }));
    if (lastOK) el.title = tr('last_update', { t: new Date(lastOK).toLocaleTimeString(LOCALE, { hour12: false }) });
  }

  function render(list) {
    const box = $('rooms'), seen = new Set();
    list.forEach((r, i) => {
      seen.add(r.name);
      let c = cards[r.name];
      if (!c) { c = cards[r.name] = card(r.name); historyPoll.kick(); }
      // Move a card only when the order changed: moving drops an input's focus.
      if (box.children[i] !== c.el) box.insertBefore(c.el, box.children[i] || null);
      update(c, r);
    });
    Object.keys(cards).filter((n) => !seen.has(n)).forEach((n) => { cards[n].el.remove(); delete cards[n]; });
    $('empty').hidden = list.length > 0;
  }

  function card(name) {
    const el = $('card').content.firstElementChild.cloneNode(true);
    const c = { name, el, f: {}, err: {}, room: null, hist: null };
    el.dataset.room = name;
    el.querySelectorAll('[data-f]').forEach((n) => { c.f[n.dataset.f] = n; });
    el.querySelectorAll('[data-err]').forEach((n) => { c.err[n.dataset.err] = n; });
    wire(c);
    return c;
  }

  function update(c, r) {
    const f = c.f, eff = r.effective || {}, cfg = r.configured || {}, mode = r.mode || 'fifo', t = r.totals || {};
    c.room = r;
    setText(f.title, r.title || r.name);
    setText(f.name, r.name);
    setText(f.mode, T['mode_' + mode] || mode);
    setText(f.source, r.source === 'api' ? tr('src_api') : r.source === 'template' ? tr('src_template', { t: r.template }) : tr('src_file'));
    c.el.querySelector('[data-act="delete"]').hidden = r.source !== 'api';
    setText(f.waited, typeof r.wait_p50_seconds === 'number' ? wait(r.wait_p50_seconds) + ' · ' + wait(r.wait_p90_seconds) : '—');
    f.mode.className = 'badge mode-' + mode;
    f.override.hidden = !r.override;
    // The store's state: hidden while ok; why it does not answer else.
    const store = r.store_state || (r.store_up === false ? 'unreachable' : 'ok');
    f.store.hidden = store === 'ok';
    f.store.dataset.state = store;
    if (store !== 'ok') setText(f.store, store === 'failing_over' ? tr('store_failover') : tr('store_warn'));
    setText(f.waiting, num(r.waiting));
    setText(f.active, num(r.active));
    // effective.max_active is the operator's figure even while paused (the
    // store is handed 0 then): shown, and written back, as set; the note
    // says that nobody goes in now.
    setText(f.max, num(eff.max_active));
    setText(f['max-note'], mode === 'paused' ? tr('max_paused') : mode === 'reject' ? tr('max_closed')
      : eff.max_active === 0 ? tr('max_zero') : '');
    const full = eff.max_active > 0 ? r.active / eff.max_active : r.active > 0 ? 1 : 0;
    f.fill.setAttribute('width', Math.min(100, Math.max(0, full * 100)).toFixed(1) + '%');
    setText(f.rate, num(r.admitted_last_minute));
    setText(f['rate-cfg'], eff.admit_rate && eff.admit_rate !== cfg.admit_rate
      ? tr('rate_now', { now: eff.admit_rate, cfg: cfg.admit_rate }) : tr('rate_cfg', { cfg: cfg.admit_rate || '—' }));
    setText(f.eta, r.waiting === 0 ? tr('no_line') : wait(r.eta_back_seconds));
    setText(f['eta-note'], mode === 'paused' ? tr('eta_paused') : mode === 'reject' ? tr('eta_closed') : tr('estimated'));
    setText(f.totals, tr('totals', { joined: num(t.joined), admitted: num(t.admitted), released: num(t.released),
      expired: num(t.expired), abandoned: num(t.abandoned) }));
    const g = r.guards || {};
    setText(f.guards, tr('guards', { limit: g.join_limit || '—',
      challenge: g.challenge === 'pow' ? tr('bits', { n: g.challenge_bits }) : tr('off'),
      identity: g.identity && g.identity !== 'off' ? g.identity : tr('off'), issued: num(g.tickets_issued),
      refused: num((g.refused_quota || 0) + (g.refused_full || 0)) }));
    setText(f['override-note'], overrideNote(r.override));
    const btn = c.el.querySelector('[data-act="mode"]'), paused = mode === 'paused';
    setText(btn, paused ? tr('resume') : tr('pause'));
    btn.classList.toggle('primary', paused);
    c.el.querySelector('[data-act="reset"]').disabled = !r.override;
    autopilot(c, r.autopilot);
    watch(c, r.watch);
    sync(c, 'max_active', eff.max_active);
    sync(c, 'admit_rate', eff.admit_rate);
    if (c.hist) draw(c);
  }

  // watch shows what this instance counted of the room's newcomers (the
  // API's "watch", absent without metrics): the last whole minute's
  // arrivals and distinct visitors, the waiting pages shown, and the
  // access types and device classes as bars scaled to the largest.
  const ACCESS = ['browser', 'app', 'api', 'challenged', 'refused'];
  const DEVICES = ['phone', 'tablet', 'desktop', 'bot', 'unknown'];
  function watch(c, w) {
    const f = c.f;
    f.watch.hidden = !w;
    if (!w) return;
    setText(f['w-arrivals'], num(w.arrivals_last_minute));
    setText(f['w-arrivals-total'], tr('w_total', { n: num(w.arrivals) }));
    setText(f['w-visitors'], num(w.visitors_last_minute));
    const p = w.page_views || {};
    setText(f['w-pages'], num(p.waiting));
    setText(f['w-challenge'], p.challenge ? tr('acc_challenged') + ' ' + num(p.challenge) : '');
    bars(c, 'access', ACCESS, 'acc_', w.access || {});
    bars(c, 'devices', DEVICES, 'dev_', w.devices || {});
    // Regions: the six countries with the most newcomers, then "unknown"
    // (always there: all of them without geo.db_file).
    const rg = w.regions || {};
    const top = Object.keys(rg).filter((k) => k !== 'unknown' && rg[k] > 0).sort((a, b) => rg[b] - rg[a] || (a < b ? -1 : 1)).slice(0, 6);
    bars(c, 'regions', top.concat('unknown'), 'reg_', rg);
  }

  // bars draws one labelled bar a key in the card's figure data-bars=kind,
  // made again only when the keys change, else only resized. A key without
  // words of its own (a country code) is its own label.
  function bars(c, kind, keys, prefix, counts) {
    c.bars = c.bars || {};
    let rows = c.bars[kind];
    if (!rows || rows.map((r) => r.k).join() !== keys.join()) {
      const fig = c.el.querySelector('[data-bars="' + kind + '"]'), NS = 'http://www.w3.org/2000/svg';
      fig.querySelectorAll('.bar').forEach((n) => n.remove());
      rows = c.bars[kind] = keys.map((k) => {
        const row = document.createElement('div'), name = document.createElement('span');
        const svg = document.createElementNS(NS, 'svg'), track = document.createElementNS(NS, 'rect');
        const fill = document.createElementNS(NS, 'rect'), n = document.createElement('b');
        row.className = 'bar';
        row.dataset.k = k;
        name.textContent = T[prefix + k] ? tr(prefix + k) : k;
        svg.setAttribute('aria-hidden', 'true');
        track.setAttribute('class', 'track');
        fill.setAttribute('class', 'fill');
        for (const r of [track, fill]) { r.setAttribute('height', '100%'); r.setAttribute('width', '100%'); }
        fill.setAttribute('width', '0');
        svg.append(track, fill);
        row.append(name, svg, n);
        fig.append(row);
        return { k, fill, n };
      });
    }
    const top = Math.max(1, ...keys.map((k) => counts[k] || 0));
    for (const r of rows) {
      const v = counts[r.k] || 0;
      r.fill.setAttribute('width', (100 * v / top).toFixed(1) + '%');
      setText(r.n, num(v));
    }
  }

  // autopilot shows where the room's autopilot stands: its limit between
  // the bounds, why (in the page's language, from the API's state), what
  // the last step measured; pinned and frozen as badges.
  function autopilot(c, a) {
    const f = c.f;
    f.autopilot.hidden = !a;
    f['ap-pinned'].hidden = !a || !a.pinned;
    f['ap-frozen'].hidden = !a || !a.frozen;
    if (!a) return;
    setText(f['ap-line'], tr('ap_line', { limit: num(a.limit), min: num(a.min_active), max: num(a.max_active), rate: a.rate || '—' }));
    const why = a.state === 'pinned' ? 'ap_pinned_why' : a.state === 'frozen' ? 'ap_frozen_why' : 'ap_' + a.state;
    const arrived = typeof a.arrivals_per_second === 'number' ? new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 1 }).format(a.arrivals_per_second) + '/s' : '—';
    setText(f['ap-why'], T[why] ? tr(why, { n: num(a.inside), a: arrived, s: a.start_above || '—' }) : a.reason || '');
    setText(f['ap-measured'], a.steps > 0 ? tr('ap_measured', { p: a.percentile, lat: seconds(a.latency_seconds),
      err: new Intl.NumberFormat(LOCALE, { style: 'percent', maximumFractionDigits: 1 }).format(a.error_share || 0),
      target: seconds(a.target_seconds) }) : tr('ap_none'));
  }

  // seconds writes a latency: "710 ms", "1.4 s".
  function seconds(s) {
    if (typeof s !== 'number') return '—';
    return s < 1 ? fmt.format(Math.round(s * 1000)) + ' ms' : new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 }).format(s) + ' s';
  }

  function wait(s) {
    const m = Math.round(s / 60);
    if (typeof s !== 'number' || s < 0) return '—';
    return s < 60 ? tr('wait_lt1') : m < 60 ? tr('wait_m', { m: m }) : tr('wait_hm', { h: Math.floor(m / 60), m: m % 60 });
  }

  // templates lists the room templates and the rooms each fills now.
  function templates(list) {
    const el = $('templates');
    el.hidden = list.length === 0;
    setText(el, list.map((t) => tr('templates', { name: t.name, n: num(t.rooms), max: num(t.max_rooms) })).join(' · '));
  }

  function overrideNote(o) {
    if (!o) return tr('override_none');
    const parts = [o.max_active != null && tr('o_max', { n: num(o.max_active) }), o.admit_rate && tr('o_rate', { r: o.admit_rate }),
      o.mode && tr('o_mode', { m: o.mode })].filter(Boolean);
    const at = new Date(o.changed || NaN);
    const since = isNaN(at) ? '' : tr('override_since', { t: at.toLocaleTimeString(LOCALE, { hour: '2-digit', minute: '2-digit', hour12: false }) });
    return tr('override', { since: since, parts: parts.join(', ') || tr('o_message') });
  }

  // sync shows the value in effect in a limit's input unless the operator
  // is editing it; an edited, unapplied input stays marked as dirty.
  function sync(c, act, v) {
    const input = c.el.querySelector('form[data-act="' + act + '"] input');
    if (document.activeElement === input || input.classList.contains('dirty')) return;
    input.value = v == null ? '' : String(v);
  }

  function wire(c) {
    const path = (s) => '/rooms/' + encodeURIComponent(c.name) + (s || '');
    const title = () => (c.room && c.room.title) || c.name;
    c.el.querySelector('[data-act="mode"]').addEventListener('click', (e) => {
      const r = c.room || {}, cfg = (r.configured && r.configured.mode) || 'fifo';
      // Resume to the configured mode, or fifo if the file itself pauses.
      if (r.mode === 'paused') send(c, e.currentTarget, 'mode', 'PATCH', path(), { mode: cfg === 'paused' ? 'fifo' : cfg });
      else if (confirm(tr('confirm_pause', { room: title() }))) send(c, e.currentTarget, 'mode', 'PATCH', path(), { mode: 'paused' });
    });
    c.el.querySelector('[data-act="reset"]').addEventListener('click', (e) => {
      if (confirm(tr('confirm_reset', { room: title() }))) send(c, e.currentTarget, 'mode', 'DELETE', path('/overrides'));
    });
    // Delete asks twice: the first click arms the button for a few seconds.
    const del = c.el.querySelector('[data-act="delete"]');
    let armed = 0;
    del.addEventListener('click', (e) => {
      if (!armed) {
        setText(del, tr('really_delete'));
        armed = setTimeout(() => { armed = 0; setText(del, tr('delete')); }, 4000);
        return;
      }
      clearTimeout(armed);
      armed = 0;
      setText(del, tr('delete'));
      send(c, e.currentTarget, 'mode', 'DELETE', path());
    });
    // Preview opens a signed link to the room's page in the chosen state,
    // as a visitor would see it; it takes no place (POST .../preview).
    const pf = c.el.querySelector('form[data-preview]');
    pf.addEventListener('submit', async (e) => {
      e.preventDefault();
      const state = pf.elements.state.value, body = { state, lang: pf.elements.lang.value };
      if (state === 'waiting') {
        const n = Number(pf.elements.position.value);
        if (!(Number.isInteger(n) && n >= 1)) { say(c.err.preview, tr('whole1')); return; }
        body.position = n;
      }
      const data = await send(c, pf.querySelector('button'), 'preview', 'POST', path('/preview'), body);
      if (!data || typeof data.url !== 'string') return;
      const until = new Date(data.expires).toLocaleTimeString(LOCALE);
      // Only a link on the gateway's public side is opened; a path would
      // open on this listener.
      if (/^https?:\/\//.test(data.url)) {
        window.open(data.url, '_blank', 'noopener');
        say(c.err.preview, tr('preview_opened', { t: until, url: data.url }), true);
      } else {
        say(c.err.preview, tr('preview_path', { t: until, url: data.url }), true);
      }
    });
    c.el.querySelectorAll('form[data-act]').forEach((form) => {
      const act = form.dataset.act, input = form.querySelector('input'), admit = act === 'admit';
      input.addEventListener('input', () => input.classList.add('dirty'));
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        const v = input.value.trim(), n = Number(v);
        if (act !== 'admit_rate' && !(Number.isInteger(n) && n >= (admit ? 1 : 0))) {
          say(c.err[act], tr(admit ? 'whole1' : 'whole'));
          return;
        }
        const body = admit ? { count: n } : { [act]: act === 'admit_rate' ? v : n };
        const data = await send(c, form.querySelector('button'), act, admit ? 'POST' : 'PATCH', path(admit ? '/admit' : ''), body);
        if (data === false) return;
        input.classList.remove('dirty');
        if (!admit) return;
        say(c.err[act], data && Number.isFinite(data.admitted)
          ? tr(data.asked > data.admitted ? 'let_in_of' : 'let_in', { n: num(data.admitted), asked: num(data.asked) })
          : tr('sent'), true);
      });
    });
  }

  // send makes one change and refreshes the cards at once; an error is shown
  // next to the control that caused it.
  async function send(c, btn, key, method, path, body) {
    say(c.err[key], '');
    btn.disabled = true;
    try {
      const data = await call(method, path, body);
      roomsPoll.kick();
      return data;
    } catch (e) {
      if (!e.auth) say(c.err[key], e.message);
      return false;
    } finally { btn.disabled = false; }
  }

  // perMinute reads an admit_rate such as "300/m"; "unlimited" is 0.
  function perMinute(rate) {
    const m = /^(\d+)\/([smh])$/.exec(rate || '');
    return m ? Number(m[1]) * { s: 60, m: 1, h: 1 / 60 }[m[2]] : 0;
  }

  // nice rounds a chart's top up to 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a
  // power of ten.
  function nice(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((s) => s * p >= v) * p;
  }

  // draw puts the last 15 minutes into the card's three charts: x is time
  // up to the newest point, y runs from 0 to a round number above the peak
  // and above the limit, which is drawn dashed for active and admissions.
  function draw(c) {
    const pts = (c.hist && c.hist.points) || [], eff = (c.room && c.room.effective) || {};
    const end = pts.length ? Date.parse(pts[pts.length - 1].t) : 0, start = end - SPAN;
    for (const k of Object.keys(CHARTS)) {
      const fig = c.el.querySelector('.chart[data-k="' + k + '"]');
      const xy = pts.map((p) => [(Date.parse(p.t) - start) / SPAN * 300, p[k]])
        .filter((q) => q[0] >= 0 && typeof q[1] === 'number');
      const vals = xy.map((q) => q[1]), last = vals[vals.length - 1], peak = Math.max(0, ...vals);
      const ref = k === 'active' ? eff.max_active : k === 'admitted_per_minute' ? perMinute(eff.admit_rate) : 0;
      const top = nice(1.1 * Math.max(1, ref || 0, peak));
      const y = (v) => (79 - v / top * 78).toFixed(1);
      const line = xy.map((q) => q[0].toFixed(1) + ',' + y(q[1])).join(' ');
      fig.querySelector('.line').setAttribute('points', line);
      fig.querySelector('.area').setAttribute('points', xy.length
        ? xy[0][0].toFixed(1) + ',80 ' + line + ' ' + xy[xy.length - 1][0].toFixed(1) + ',80' : '');
      fig.querySelector('.ref').setAttribute('points', ref > 0 ? '0,' + y(ref) + ' 300,' + y(ref) : '');
      setText(c.f['top-' + k], compact.format(top));
      setText(c.f['now-' + k], vals.length ? num(last) : '');
      setText(c.f['ref-' + k], ref > 0 ? tr('limit', { n: num(ref) }) : '');
      c.f['ref-' + k].hidden = !(ref > 0);
      fig.querySelector('svg').setAttribute('aria-label', vals.length
        ? tr('chart_some', { chart: tr(CHARTS[k]), a: num(vals[0]), b: num(last), peak: num(peak) })
        : tr('chart_none', { chart: tr(CHARTS[k]) }));
    }
  }

  function showSignin(msg) {
    roomsPoll.stop();
    historyPoll.stop();
    Object.values(cards).forEach((c) => c.el.remove());
    cards = {};
    lastOK = 0;
    banner('');
    $('signin').hidden = false;
    $('newroom').hidden = true;
    $('signout').hidden = $('live').hidden = $('empty').hidden = true;
    $('signin-err').textContent = msg || '';
    $('token').focus();
  }
  function signOut(msg) { setToken(''); showSignin(msg); }
  // The new room form posts the room as the API takes it.
  $('create').addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = e.currentTarget.elements, err = $('create-err');
    const body = { name: f.name.value.trim(), max_active: Number(f.max_active.value),
      admit_rate: f.admit_rate.value.trim() || 'unlimited',
      routes: [{ path: f.path.value.trim(), upstream: f.upstream.value.trim() }] };
    if (f.title.value.trim()) body.page = { title: f.title.value.trim() };
    say(err, '');
    try {
      await call('POST', '/rooms', body);
      say(err, tr('created', { name: body.name }), true);
      e.currentTarget.reset();
      roomsPoll.kick();
    } catch (x) {
      if (!x.auth) say(err, x.message);
    }
  });
  function start() {
    $('signin').hidden = true;
    $('newroom').hidden = false;
    $('live').hidden = false;
    // Nothing to sign out of on an API that needs no token (the demo).
    $('signout').hidden = !token();
    live();
    roomsPoll.start(); // its first answer makes the cards, which kicks historyPoll
    historyPoll.start();
  }

  $('signin').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token').value.trim();
    $('token').value = '';
    if (t) { setToken(t); start(); }
  });
  $('signout').addEventListener('click', () => signOut(''));
  // The language switch keeps the pick in a cookie for a year (the server
  // reads it to render the page) and reloads in that language; the token
  // stays in sessionStorage, so the operator stays signed in.
  $('lang').addEventListener('change', (e) => {
    const v = e.currentTarget.value === 'ko' ? 'ko' : 'en';
    document.cookie = 'waitroom_admin_lang=' + v + '; path=/admin; max-age=31536000; samesite=strict';
    location.reload();
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden && !$('live').hidden) roomsPoll.kick(); });
  setInterval(live, 1000);
  // An API without a token (the demo, an admin listener on loopback) needs
  // no sign-in: ask it once without one before showing the form.
  async function open() {
    try {
      const res = await fetch(API + '/rooms', { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
      return res.ok;
    } catch (e) { return false; }
  }
  if (token()) start(); else open().then((ok) => ok ? start() : showSignin(''));
})();
