/*
 * lagscope's viewer: live metrics, hangs as they happen, a hang's call tree, flame graph and
 * threads, and "Capture now". Plain script, no build step, no dependency; the API it reads is
 * docs/viewer-api.md.
 *
 * The server's Content-Security-Policy allows only this file as script and viewer.css as style:
 * no inline script or style markup, no eval. Positions and widths are set through the CSSOM
 * (element.style.x = ...), which that policy allows. Every string from the API reaches the DOM
 * through textContent or an attribute, never through innerHTML.
 *
 * Contents: helpers, the API, the header (app, connection), metrics and charts, the hang list,
 * the hang detail (verdict, summary, call tree, bottom-up, "my code only", flame graph,
 * threads), capture, the stream, start.
 */
'use strict';

(function () {
  // ---- helpers ------------------------------------------------------------------------------

  /* Makes an element with a class and text; children may be nodes or strings. */
  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
    }
    return node;
  }

  function byId(id) {
    return document.getElementById(id);
  }

  function setText(id, text) {
    const node = byId(id);
    if (node.textContent !== text) node.textContent = text;
  }

  function basename(path) {
    if (!path) return '';
    const cut = path.lastIndexOf('/');
    return cut >= 0 ? path.slice(cut + 1) : path;
  }

  /* "595 ms", "1.24 s", "2 min 05 s". */
  function fmtDuration(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return '—';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
    const min = Math.floor(ms / 60000);
    const s = Math.floor((ms % 60000) / 1000);
    return min + ' min ' + String(s).padStart(2, '0') + ' s';
  }

  function fmtUptime(ms) {
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + ' s';
    const min = Math.floor(s / 60);
    if (min < 60) return min + ' min ' + String(s % 60).padStart(2, '0') + ' s';
    const h = Math.floor(min / 60);
    if (h < 48) return h + ' h ' + String(min % 60).padStart(2, '0') + ' min';
    return Math.floor(h / 24) + ' d ' + (h % 24) + ' h';
  }

  function pad2(n) {
    return String(n).padStart(2, '0');
  }

  /* Local time of a Unix ms; with the date when it is not today. */
  function fmtWall(ms, withMs) {
    if (!ms) return '—';
    const d = new Date(ms);
    let text = pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
    if (withMs) text += '.' + String(d.getMilliseconds()).padStart(3, '0');
    if (d.toDateString() !== new Date().toDateString()) {
      text = d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' + text;
    }
    return text;
  }

  const NBSP = '\u00a0'; // between a number and its unit, so a line never breaks there

  function fmtBytes(bytes) {
    if (bytes === null || bytes === undefined) return '—';
    if (bytes >= 1e9) return (bytes / 1e9).toFixed(2) + NBSP + 'GB';
    if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + NBSP + 'MB';
    return Math.round(bytes / 1e3) + NBSP + 'kB';
  }

  function fmtPercent(value) {
    if (value === null || value === undefined) return '—';
    return (value >= 100 ? value.toFixed(0) : value.toFixed(1)) + NBSP + '%';
  }

  /* A frame's name: its function, else module+offset, else its raw address. */
  function frameName(frame) {
    if (frame.function) return frame.function;
    if (frame.module) return basename(frame.module) + '+' + (frame.module_offset || frame.address || '?');
    return frame.address || '(unknown)';
  }

  function frameLocation(frame) {
    if (!frame.file) return '';
    return basename(frame.file) + (frame.line ? ':' + frame.line : '');
  }

  /* Frames from system libraries get cool colours in the flame graph, the app's warm ones. */
  function isSystemModule(module) {
    return /(^|\/)(lib|usr\/lib|system|linux-vdso)|\.so(\.|$)|\.dylib$/.test(module || '');
  }

  /* "My code only" hides these: the C library, the loader, the vDSO, Darwin's system. */
  const SYSTEM_LIBRARY = /^(\/usr)?\/lib(64)?\/|^\/System\/Library\/|linux-vdso|\[vdso\]|(^|\/)ld-linux/;

  function isSystemLibrary(module) {
    return SYSTEM_LIBRARY.test(module || '');
  }

  function hashString(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  let toastTimer = 0;
  function toast(text) {
    const node = byId('toast');
    node.textContent = text;
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, 6000);
  }

  // ---- the API ------------------------------------------------------------------------------

  /* Thrown for any answer that is not 2xx; carries the status and the server's error body. */
  class ApiError extends Error {
    constructor(status, body, retryAfterMs) {
      super((body && body.message) || 'HTTP ' + status);
      this.status = status;
      this.kind = body && body.error;
      this.retryAfterMs = retryAfterMs;
    }
  }

  /* fetch + JSON. A 401 anywhere means this browser's token is no longer accepted: say so. */
  async function api(path, options) {
    const res = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, options));
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    if (res.status === 401) showAuthError(true);
    else if (res.ok) showAuthError(false);
    if (!res.ok) {
      let retry = body && typeof body.retry_after_ms === 'number' ? body.retry_after_ms : null;
      const header = res.headers.get('Retry-After');
      if (retry === null && header && isFinite(Number(header))) retry = Number(header) * 1000;
      throw new ApiError(res.status, body, retry);
    }
    return body;
  }

  function showAuthError(on) {
    byId('auth-error').hidden = !on;
    if (on) setConnection('unauthorized', 'Unauthorized');
  }

  // ---- the header: app, uptime, connection ----------------------------------------------------

  const app = {
    status: null,        // the last /api/v1/status answer
    statusAt: 0,         // performance.now() when it came
    launchKey: '',       // pid and launch time of the launch the page shows
    pid: null,
  };

  function launchKeyOf(pid, launchWallMs) {
    return pid + '@' + launchWallMs;
  }

  async function loadStatus() {
    const status = await api('/api/v1/status');
    app.status = status;
    app.statusAt = performance.now();
    app.pid = status.app && status.app.pid;
    setText('app-name', (status.app && status.app.name) || '(unnamed app)');
    setText('app-pid', String(app.pid));
    document.title = ((status.app && status.app.name) || 'app') + ' — lagscope';
    if (status.config && status.config.hang_threshold_ms) {
      setText('hang-threshold', String(status.config.hang_threshold_ms));
    }
    updateUptime();
    return status;
  }

  /* Uptime runs on from the server's figure with the browser's monotonic clock, so the two
   * machines' wall clocks never need to agree. It stands still while the app is away. */
  function updateUptime() {
    if (!app.status) return;
    const away = connection.state === 'disconnected' || connection.state === 'unauthorized';
    if (away && byId('app-uptime').textContent !== '—') return;
    setText('app-uptime', fmtUptime(app.status.uptime_ms + performance.now() - app.statusAt));
  }

  const connection = { state: 'connecting' };

  function setConnection(state, text) {
    const node = byId('connection');
    if (connection.state === 'unauthorized' && state !== 'live' && state !== 'unauthorized') {
      return; // keep the clearer message until the token works again
    }
    connection.state = state;
    node.dataset.state = state;
    document.body.dataset.connection = state; // the stylesheet dims figures that are not live
    setText('connection-text', text);
  }

  // ---- metrics and charts ---------------------------------------------------------------------

  const METRICS_KEEP = 240;   // ticks kept: two minutes at the default 500 ms
  const CHART_WINDOW_MS = 60000;

  const metrics = {
    ticks: [],              // metrics events, oldest first
    intervalMs: 500,
    lastArrival: 0,         // performance.now() of the last tick, to notice a silent app
  };

  const colors = {};
  /* Chart colours come from the stylesheet's custom properties, so the palette lives in one
   * place. */
  function readColors() {
    const style = getComputedStyle(document.documentElement);
    for (const name of ['text', 'muted', 'grid', 'accent', 'good', 'warn', 'bad', 'hang', 'panel', 'mem', 'cpu']) {
      colors[name] = style.getPropertyValue('--c-' + name).trim() || '#888';
    }
  }

  function addTick(tick, live) {
    const last = metrics.ticks[metrics.ticks.length - 1];
    if (last && tick.wall_ms <= last.wall_ms) return; // already have it (load after stream)
    metrics.ticks.push(tick);
    if (metrics.ticks.length > METRICS_KEEP) metrics.ticks.splice(0, metrics.ticks.length - METRICS_KEEP);
    if (live) metrics.lastArrival = performance.now();
  }

  async function loadMetrics() {
    const answer = await api('/api/v1/metrics');
    if (answer.interval_ms) metrics.intervalMs = answer.interval_ms;
    const live = metrics.ticks;
    metrics.ticks = [];
    for (const tick of answer.metrics || []) addTick(tick, false);
    for (const tick of live) addTick(tick, false);
    renderMetrics();
  }

  function renderMetrics() {
    const tick = metrics.ticks[metrics.ticks.length - 1];
    if (!tick) return;
    const section = byId('metrics');
    section.dataset.seq = String(tick.seq);
    section.dataset.wallMs = String(tick.wall_ms);

    const fps = byId('fps-value');
    // An event-driven app with nothing to draw is idle: not "0", and no band either way.
    fps.textContent = tick.idle ? 'idle' : String(Math.round(tick.fps));
    fps.dataset.idle = tick.idle ? 'true' : 'false';
    fps.dataset.wallMs = String(tick.wall_ms); // lets a test see that a new tick arrived
    setText('fps-unit', tick.refresh_hz ? (tick.idle ? 'at ' : '/ ') + Math.round(tick.refresh_hz) + ' Hz' : '');
    const band = byId('fps-band');
    band.textContent = tick.idle ? 'idle' : tick.hitch_band || '';
    band.dataset.band = tick.idle ? 'idle' : tick.hitch_band || '';
    setText('fps-sub', 'hitches ' + Math.round(tick.hitch_ms_per_s || 0) + ' ms/s · ' + (tick.dropped || 0) + ' dropped');

    const frames = tick.recent_frame_ms || [];
    const budget = tick.refresh_hz ? 1000 / tick.refresh_hz : 1000 / 60;
    setText('frametime-budget', 'budget ' + budget.toFixed(1) + ' ms');
    if (frames.length) {
      const sorted = frames.slice().sort((a, b) => a - b);
      setText('frametime-value', sorted[Math.floor(sorted.length / 2)].toFixed(1));
      setText('frametime-sub', 'worst ' + sorted[sorted.length - 1].toFixed(1) + ' ms · median of ' + frames.length);
    }

    setText('cpu-value', tick.cpu_percent >= 100 ? tick.cpu_percent.toFixed(0) : tick.cpu_percent.toFixed(1));
    setText('cpu-sub', tick.thread_count + ' threads · lagscope ' + fmtPercent(tick.monitor_cpu_percent || 0));

    const rss = fmtBytes(tick.rss_bytes).split(NBSP);
    setText('mem-value', rss[0]);
    setText('mem-unit', rss[1] || '');
    setText('mem-sub', 'PSS ' + fmtBytes(tick.pss_bytes) + ' · lagscope ' + fmtBytes(tick.monitor_memory_bytes || 0));

    drawCharts();
  }

  /* Sizes a canvas's backing store to its CSS box at the screen's pixel ratio; returns the 2D
   * context scaled so that drawing is in CSS pixels, or null when it is not laid out. */
  function prepareCanvas(canvas, cssHeight) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = cssHeight || canvas.clientHeight;
    if (!width || !height) return null;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    return { ctx, width, height };
  }

  function drawCharts() {
    const ticks = metrics.ticks;
    if (!ticks.length) return;
    const refresh = ticks[ticks.length - 1].refresh_hz || 60;
    drawLineChart(byId('chart-fps'), ticks, (t) => t.fps, {
      color: colors.good, max: Math.max(refresh, ...ticks.map((t) => t.fps)) * 1.08, guide: refresh,
    });
    drawLineChart(byId('chart-cpu'), ticks, (t) => t.cpu_percent, {
      color: colors.cpu, max: Math.max(100, ...ticks.map((t) => t.cpu_percent)) * 1.05,
    });
    drawLineChart(byId('chart-mem'), ticks, (t) => t.rss_bytes, {
      color: colors.mem, max: Math.max(...ticks.map((t) => t.rss_bytes)) * 1.15,
    });
    drawFrameChart(byId('chart-frametime'), ticks[ticks.length - 1]);
    renderHitchStrip();
  }

  /* A minute of one metric as a filled line; time runs on the app's clock (wall_ms of the
   * ticks), so a browser whose clock is off still draws it right. Ticks that fell inside a hang
   * get a red band behind the line. */
  function drawLineChart(canvas, ticks, value, opts) {
    const box = prepareCanvas(canvas);
    if (!box) return;
    const { ctx, width, height } = box;
    const end = ticks[ticks.length - 1].wall_ms;
    const start = end - CHART_WINDOW_MS;
    const x = (t) => ((t - start) / CHART_WINDOW_MS) * width;
    const top = 4;
    const max = opts.max || 1;
    const y = (v) => height - 1 - (Math.max(0, v) / max) * (height - top - 1);

    ctx.fillStyle = colors.hang;
    ctx.globalAlpha = 0.22;
    for (const t of ticks) {
      if (t.hang_in_progress && t.wall_ms >= start) {
        const x0 = x(t.wall_ms - metrics.intervalMs);
        ctx.fillRect(x0, 0, x(t.wall_ms) - x0 + 1, height);
      }
    }
    ctx.globalAlpha = 1;

    ctx.strokeStyle = colors.grid;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(0, height - 0.5);
    ctx.lineTo(width, height - 0.5);
    ctx.stroke();
    if (opts.guide) {
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(0, Math.round(y(opts.guide)) + 0.5);
      ctx.lineTo(width, Math.round(y(opts.guide)) + 0.5);
      ctx.stroke();
      ctx.setLineDash([]);
    }

    const visible = ticks.filter((t) => t.wall_ms >= start - metrics.intervalMs);
    if (!visible.length) return;
    ctx.beginPath();
    visible.forEach((t, i) => (i ? ctx.lineTo(x(t.wall_ms), y(value(t))) : ctx.moveTo(x(t.wall_ms), y(value(t)))));
    ctx.strokeStyle = opts.color;
    ctx.lineWidth = 1.5;
    ctx.lineJoin = 'round';
    ctx.stroke();
    ctx.lineTo(x(visible[visible.length - 1].wall_ms), height);
    ctx.lineTo(x(visible[0].wall_ms), height);
    ctx.closePath();
    ctx.globalAlpha = 0.14;
    ctx.fillStyle = opts.color;
    ctx.fill();
    ctx.globalAlpha = 1;
  }

  /* The latest frames as bars on a square-root scale: a 600 ms hitch and 16 ms frames stay
   * visible side by side. The dashed line is the frame budget of the display's refresh rate. */
  function drawFrameChart(canvas, tick) {
    const box = prepareCanvas(canvas);
    if (!box) return;
    const { ctx, width, height } = box;
    const frames = tick.recent_frame_ms || [];
    const budget = 1000 / (tick.refresh_hz || 60);
    const threshold = (app.status && app.status.config && app.status.config.hang_threshold_ms) || 250;
    const max = Math.max(budget * 4, ...frames);
    const y = (v) => height - Math.sqrt(Math.max(0, v) / max) * (height - 4);
    const slots = Math.max(frames.length, 60);
    const step = width / slots;
    const barWidth = Math.max(1, step - (step > 3 ? 1 : 0));
    frames.forEach((ms, i) => {
      const x = width - (frames.length - i) * step;
      ctx.fillStyle = ms >= threshold ? colors.bad : ms > budget * 1.5 ? colors.warn : colors.accent;
      const top = y(ms);
      ctx.fillRect(x, top, barWidth, height - top);
    });
    ctx.strokeStyle = colors.muted;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(0, Math.round(y(budget)) + 0.5);
    ctx.lineTo(width, Math.round(y(budget)) + 0.5);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  // ---- hitches: stalls below the hang threshold ---------------------------------------------

  /* The hitch events the app keeps (GET /api/v1/hitches) and those streamed since, oldest first.
   * Each gets a mark on the time axis under the frame-time chart; a click opens its call tree. */
  const hitches = { list: [], selectedSeq: null };

  /* As many as the app keeps (config.hitch_keep in its status). */
  function hitchesKept() {
    return (app.status && app.status.config && app.status.config.hitch_keep) || 32;
  }

  function addHitch(hitch) {
    if (typeof hitch.start_ns !== 'number' || hitches.list.some((h) => h.seq === hitch.seq)) return;
    hitches.list.push(hitch);
    hitches.list.sort((a, b) => a.start_ns - b.start_ns);
    const keep = hitchesKept();
    if (hitches.list.length > keep) hitches.list.splice(0, hitches.list.length - keep);
  }

  async function loadHitches() {
    const body = await api('/api/v1/hitches');
    for (const hitch of body.hitches || []) addHitch(hitch);
    renderHitchStrip();
  }

  /* A hitch's start on the app's wall clock, from the latest tick's pair of clocks. */
  function hitchWallMs(hitch, tick) {
    return tick.wall_ms + (hitch.start_ns - tick.time_ns) / 1e6;
  }

  function renderHitchStrip() {
    const strip = byId('hitch-strip');
    const tick = metrics.ticks[metrics.ticks.length - 1];
    if (!strip || !tick || typeof tick.time_ns !== 'number') return;
    const start = tick.wall_ms - CHART_WINDOW_MS;
    const marks = [];
    for (const hitch of hitches.list) {
      const at = hitchWallMs(hitch, tick);
      if (at < start || at > tick.wall_ms + metrics.intervalMs) continue;
      const mark = el('button', 'hitch-mark' + (hitch.seq === hitches.selectedSeq ? ' selected' : ''));
      mark.type = 'button';
      mark.dataset.testid = 'hitch-mark';
      mark.dataset.seq = String(hitch.seq);
      mark.style.left = Math.min(100, ((at - start) / CHART_WINDOW_MS) * 100).toFixed(2) + '%';
      const label = 'Hitch of ' + fmtDuration(hitch.duration_ms) + (hitch.function ? ' in ' + hitch.function : '');
      mark.title = label;
      mark.setAttribute('aria-label', label);
      mark.addEventListener('click', () => openHitch(hitch));
      marks.push(mark);
    }
    strip.replaceChildren(...marks);
  }

  function openHitch(hitch) {
    clearSelectionMarks();
    selection.kind = 'hitch';
    selection.key = String(hitch.seq);
    selection.request++;
    hitches.selectedSeq = hitch.seq;
    renderHitchStrip();
    showDetail(hitchDetail(hitch));
  }

  /* The hitch's heaviest stack as a call tree: one path, outermost caller first, every node
   * holding the hitch's samples. */
  function hitchTree(hitch) {
    const stack = (hitch.heaviest_stack || []).slice().reverse();
    const count = Math.max(1, hitch.sample_count || 0);
    const root = { count: stack.length ? count : 0, children: [] };
    let parent = root;
    stack.forEach((frame, i) => {
      const node = Object.assign({}, frame, { count, children: [] });
      if (i === stack.length - 1) node.self = count;
      parent.children.push(node);
      parent = node;
    });
    return root;
  }

  function hitchDetail(hitch) {
    const root = el('div', 'hang-detail');
    root.dataset.testid = 'hitch-detail';
    root.dataset.seq = String(hitch.seq);
    const tick = metrics.ticks[metrics.ticks.length - 1];
    const cause = hitch.cause && hitch.cause.summary;
    root.append(el('header', 'detail-head',
      el('h2', null, 'Hitch · ' + fmtDuration(hitch.duration_ms)),
      el('p', 'muted', cause || 'A stall shorter than the hang threshold: the main thread answered in time, late.')));
    const summary = el('dl', 'summary');
    summary.dataset.testid = 'hitch-summary';
    summary.append(summaryItem('Duration', fmtDuration(hitch.duration_ms)));
    if (tick && typeof tick.time_ns === 'number') summary.append(summaryItem('Started', fmtWall(hitchWallMs(hitch, tick), true)));
    summary.append(summaryItem('Samples', String(hitch.sample_count || 0)));
    if (hitch.function) summary.append(summaryItem('In', hitch.function));
    if (hitch.cause && hitch.cause.kind) summary.append(summaryItem('Cause', hitch.cause.kind));
    root.append(summary, el('h3', 'section-title', 'Heaviest stack'), callTree(hitchTree(hitch)));
    return root;
  }

  // ---- the hang list ------------------------------------------------------------------------

  const HANG_PAGE = 20;

  /* One entry per hang, from the stored list and from live events, keyed by pid and hang id
   * (a live hang has no report id until it ends). */
  const hangs = {
    entries: new Map(),   // key -> entry
    total: 0,             // the store's count, from the last page
    nextOffset: 0,        // where the next "more" page starts
    loadingMore: false,
  };

  function hangKey(pid, hangId) {
    return pid + ':' + hangId;
  }

  const FINAL_STATES = new Set(['ended', 'ended_by_termination']);

  /* Folds what is known about one hang into its entry; a final state is never undone by an
   * older in-progress copy. */
  function upsertHang(key, fields) {
    let entry = hangs.entries.get(key);
    const isNew = !entry;
    if (isNew) {
      entry = { key, id: null, state: 'in_progress', elapsedBase: 0, elapsedAt: 0, node: null };
      hangs.entries.set(key, entry);
    }
    if (FINAL_STATES.has(entry.state) && fields.state === 'in_progress') {
      fields = Object.assign({}, fields);
      delete fields.state;
      delete fields.duration_ms;
    }
    Object.assign(entry, fields);
    renderHangItem(entry);
    if (isNew) placeHangItems();
    updateHangCount();
    return entry;
  }

  /* A hang's label ("lock · keeper") is the report's, computed once by lagscope: the list
   * shows it as soon as a report or an event carries it, and nothing here makes up another. */
  function labelOf(label) {
    return typeof label === 'string' && label ? { label } : {};
  }

  function fromSummary(summary) {
    const entry = upsertHang(hangKey(summary.pid, summary.hang_id), {
      id: summary.id,
      hang_id: summary.hang_id,
      pid: summary.pid,
      app: summary.app,
      state: summary.state,
      start_wall_ms: summary.start_wall_ms,
      duration_ms: summary.duration_ms,
      samples: summary.samples,
      function: summary.function,
      module: summary.module,
      ...labelOf(summary.label),
    });
    if (entry.state === 'in_progress' && !entry.elapsedAt) {
      entry.elapsedBase = summary.duration_ms || 0;
      entry.elapsedAt = performance.now();
    }
  }

  async function loadHangs(reset) {
    const offset = reset ? 0 : hangs.nextOffset;
    const page = await api('/api/v1/hangs?limit=' + HANG_PAGE + '&offset=' + offset);
    hangs.total = page.total;
    if (reset) hangs.nextOffset = Math.max(hangs.nextOffset, page.hangs.length);
    else hangs.nextOffset = offset + page.hangs.length;
    for (const summary of page.hangs) fromSummary(summary);
    updateHangCount();
    return page;
  }

  async function loadMoreHangs() {
    if (hangs.loadingMore) return;
    hangs.loadingMore = true;
    const button = byId('hang-more');
    button.disabled = true;
    button.textContent = 'Loading…';
    try {
      await loadHangs(false);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) toast('Could not load more hangs: ' + e.message);
    } finally {
      hangs.loadingMore = false;
      button.disabled = false;
      updateHangCount();
    }
  }

  function updateHangCount() {
    const shown = hangs.entries.size;
    const total = Math.max(hangs.total, shown);
    setText('hang-count', total ? shown + (shown < total ? ' of ' + total : '') : '');
    byId('hang-empty').hidden = shown > 0;
    const more = byId('hang-more');
    more.hidden = hangs.nextOffset >= hangs.total;
    if (!hangs.loadingMore) more.textContent = 'Load more (' + Math.max(0, hangs.total - hangs.nextOffset) + ' older)';
  }

  /* Newest first; DOM nodes move only when the order changed, so the pulse of a live entry is
   * not restarted by every update. */
  function placeHangItems() {
    const list = byId('hang-list');
    const ordered = Array.from(hangs.entries.values()).sort((a, b) => (b.start_wall_ms || 0) - (a.start_wall_ms || 0));
    ordered.forEach((entry, i) => {
      if (list.children[i] !== entry.node) list.insertBefore(entry.node, list.children[i] || null);
    });
  }

  function stateLabel(state) {
    if (state === 'in_progress') return 'hanging';
    if (state === 'ended_by_termination') return 'killed while hung';
    return 'ended';
  }

  function elapsedOf(entry) {
    if (entry.state !== 'in_progress') return entry.duration_ms;
    return entry.elapsedBase + (entry.elapsedAt ? performance.now() - entry.elapsedAt : 0);
  }

  function renderHangItem(entry) {
    if (!entry.node) {
      const button = el('button', 'hang-item');
      button.type = 'button';
      button.dataset.testid = 'hang-item';
      button.addEventListener('click', () => selectHang(entry.key));
      button.append(
        el('span', 'hang-state'),
        el('span', 'hang-fn'),
        el('span', 'hang-duration'),
        el('span', 'hang-meta'));
      entry.node = el('li', null, button);
    }
    const button = entry.node.firstChild;
    const [stateNode, fnNode, durationNode, metaNode] = button.children;
    button.dataset.state = entry.state;
    button.dataset.key = entry.key;
    if (entry.id) button.dataset.id = entry.id;
    button.classList.toggle('selected', selection.kind === 'hang' && selection.key === entry.key);
    stateNode.textContent = stateLabel(entry.state);
    // No symbol for the innermost frame: its module says at least where it was.
    const fn = entry.label || entry.function || (entry.module ? basename(entry.module) : null);
    fnNode.textContent = fn || (entry.state === 'in_progress' ? 'sampling…' : '(unknown function)');
    fnNode.classList.toggle('unknown', !entry.label && !entry.function);
    fnNode.title = entry.label && entry.function ? entry.label + ' (in ' + entry.function + ')'
      : fn === entry.function || fn === entry.label ? fn || '' : entry.module ? entry.module + ' (no symbol)' : '';
    durationNode.textContent = fmtDuration(elapsedOf(entry));
    const meta = [fmtWall(entry.start_wall_ms)];
    if (entry.module && entry.function) meta.push(basename(entry.module));
    if (entry.samples) meta.push(entry.samples + ' samples');
    const earlier = entry.pid && app.pid && entry.pid !== app.pid;
    if (earlier) meta.push('earlier launch');
    metaNode.textContent = meta.join(' · ');
    metaNode.title = earlier ? 'from an earlier launch of the app, pid ' + entry.pid : '';
  }

  /* Live hangs count up between events; this runs only while one lasts. */
  let liveTimer = 0;
  function tickLiveHangs() {
    let longest = -1;
    for (const entry of hangs.entries.values()) {
      if (entry.state !== 'in_progress' || !entry.live) continue;
      const elapsed = elapsedOf(entry);
      longest = Math.max(longest, elapsed);
      entry.node.querySelector('.hang-duration').textContent = fmtDuration(elapsed);
      if (selection.kind === 'hang' && selection.key === entry.key) updateLiveDetail(entry);
    }
    if (longest < 0) {
      clearInterval(liveTimer);
      liveTimer = 0;
    }
    showHangBadge(longest >= 0, longest);
  }

  function startLiveTimer() {
    if (!liveTimer) liveTimer = setInterval(tickLiveHangs, 100);
  }

  // Stream events about hangs.
  function onHangBegan(ev) {
    const entry = upsertHang(hangKey(app.pid, ev.hang_id), {
      hang_id: ev.hang_id,
      pid: app.pid,
      app: app.status && app.status.app && app.status.app.name,
      state: 'in_progress',
      start_wall_ms: ev.start_wall_ms,
      live: true,
      // The event comes when the threshold passed: the hang is already that old.
      elapsedBase: (ev.time_ns - ev.start_ns) / 1e6 || ev.threshold_ms || 0,
      elapsedAt: performance.now(),
    });
    showHangBadge(true, entry.elapsedBase);
    startLiveTimer();
  }

  function onHangSample(ev) {
    const key = hangKey(app.pid, ev.hang_id);
    const entry = hangs.entries.get(key) || upsertHang(key, { hang_id: ev.hang_id, pid: app.pid, state: 'in_progress', live: true });
    if (FINAL_STATES.has(entry.state)) return;
    const stack = ev.stack || [];
    // A single sample's innermost frame is often one no symbol names (the vDSO under
    // clock_gettime): the list names the innermost frame that has a name.
    const inner = stack.find((f) => f.function) || stack[0];
    const fields = { live: true, latestStack: stack };
    if (inner) {
      fields.function = inner.function || null;
      fields.module = inner.module || null;
    }
    if (typeof ev.sample_count === 'number') fields.samples = ev.sample_count;
    upsertHang(key, fields);
    if (typeof ev.elapsed_ms === 'number') {
      entry.elapsedBase = ev.elapsed_ms;
      entry.elapsedAt = performance.now();
    }
    startLiveTimer();
    if (selection.kind === 'hang' && selection.key === key) updateLiveDetail(entry);
  }

  function onHangEnded(ev) {
    const key = hangKey(app.pid, ev.hang_id);
    const inner = (ev.heaviest_stack || [])[0] || {};
    const entry = upsertHang(key, {
      hang_id: ev.hang_id,
      pid: app.pid,
      id: ev.report_id || null,
      state: 'ended',
      duration_ms: ev.duration_ms,
      function: inner.function || null,
      module: inner.module || null,
      ...labelOf(ev.cause && ev.cause.label),
      live: true,
    });
    tickLiveHangs();
    // Samples and the stored summary: a quiet refresh of the newest page fills them in.
    loadHangs(true).catch(() => {});
    if (selection.kind === 'hang' && selection.key === key) openHang(entry);
  }

  /* The header's badge, like the HUD's: "HANG 1.2 s" while the main thread is stuck. */
  function showHangBadge(on, elapsedMs) {
    const badge = byId('hang-badge');
    if (!badge) return;
    badge.hidden = !on;
    if (on) badge.textContent = 'HANG ' + (elapsedMs > 0 ? (elapsedMs / 1000).toFixed(1) + ' s' : '');
  }

  // ---- selection and the detail pane ----------------------------------------------------------

  const selection = { kind: null, key: null, request: 0 };

  function clearSelectionMarks() {
    for (const entry of hangs.entries.values()) {
      if (entry.node) entry.node.firstChild.classList.remove('selected');
    }
    if (hitches.selectedSeq !== null) {
      hitches.selectedSeq = null;
      renderHitchStrip();
    }
  }

  function showDetail(node) {
    const pane = byId('detail');
    pane.replaceChildren(node);
    // On a phone the pane is below the list: bring it into view.
    if (window.matchMedia('(max-width: 900px)').matches) pane.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }

  function selectHang(key) {
    const entry = hangs.entries.get(key);
    if (!entry) return;
    clearSelectionMarks();
    selection.kind = 'hang';
    selection.key = key;
    entry.node.firstChild.classList.add('selected');
    openHang(entry);
  }

  async function openHang(entry) {
    const request = ++selection.request;
    if (!entry.id) {
      // A live hang is written to the store at its first capture: find its id there.
      try {
        await loadHangs(true);
      } catch (e) { /* shown below as live */ }
    }
    if (request !== selection.request) return;
    if (!entry.id) {
      showDetail(liveDetail(entry));
      return;
    }
    showDetail(el('div', 'loading', 'Loading report…'));
    let report;
    try {
      report = await api('/api/v1/hangs/' + encodeURIComponent(entry.id));
    } catch (e) {
      if (request === selection.request) showDetail(el('div', 'error-box', 'Could not load the report: ' + e.message));
      return;
    }
    if (request !== selection.request) return;
    showDetail(hangDetail(report, entry));
  }

  /* The detail of a hang still going on whose report is not stored yet: what the stream said. */
  function liveDetail(entry) {
    const root = el('div', 'hang-detail');
    root.dataset.testid = 'hang-detail';
    root.dataset.state = 'in_progress';
    root.append(el('header', 'detail-head',
      el('h2', null, 'Hang #' + entry.hang_id + ' ', el('span', 'state-pill', 'hanging')),
      el('p', 'muted', 'The report is being written; it opens here when the hang is captured.')));
    const summary = el('dl', 'summary');
    summary.append(summaryItem('Elapsed', el('span', 'live-elapsed', fmtDuration(elapsedOf(entry)))));
    summary.append(summaryItem('Started', fmtWall(entry.start_wall_ms, true)));
    root.append(summary, el('h3', 'section-title', 'Latest main-thread stack'), liveStack(entry));
    return root;
  }

  function stackSignature(stack) {
    return (stack || []).map((f) => f.address).join(',');
  }

  function liveStack(entry) {
    const stack = entry.latestStack || [];
    const list = stack.length ? stackList(stack) : el('p', 'empty', 'Waiting for the first sample…');
    list.classList.add('live-stack');
    list.dataset.testid = 'live-stack';
    list.dataset.signature = stackSignature(stack);
    return list;
  }

  /* Ten times a second while the selected hang lasts: its elapsed time and, when it moved, the
   * main thread's latest stack. */
  function updateLiveDetail(entry) {
    const pane = byId('detail');
    for (const node of pane.querySelectorAll('.live-elapsed')) node.textContent = fmtDuration(elapsedOf(entry));
    const old = pane.querySelector('.live-stack');
    if (old && old.dataset.signature !== stackSignature(entry.latestStack)) old.replaceWith(liveStack(entry));
  }

  function summaryItem(label, value) {
    return el('div', 'summary-item', el('dt', null, label), el('dd', null, value));
  }

  function beforeDuring(pair, format, inProgress) {
    if (!pair) return '—';
    const none = inProgress ? 'not sampled yet' : 'ended before a sample';
    const during = pair.during === null || pair.during === undefined ? none : format(pair.during);
    return format(pair.before) + ' → ' + during;
  }

  function downloadLink(href, text, filename, testid) {
    const a = el('a', 'btn btn-quiet', text);
    a.href = href;
    a.download = filename;
    a.dataset.testid = testid;
    return a;
  }

  function hangDetail(report, entry) {
    const root = el('div', 'hang-detail');
    root.dataset.testid = 'hang-detail';
    root.dataset.id = report.id;
    root.dataset.state = report.state;
    const id = encodeURIComponent(report.id);

    // A hang still going on: its report is the one first written; the time counts on live.
    const live = report.state === 'in_progress' && entry && entry.state === 'in_progress' && entry.live;
    const title = el('h2', null, 'Hang #' + report.hang_id + ' · ',
      live ? el('span', 'live-elapsed', fmtDuration(elapsedOf(entry))) : fmtDuration(report.duration_ms), ' ');
    const pill = el('span', 'state-pill', stateLabel(report.state));
    pill.dataset.state = report.state;
    title.append(pill);
    const links = el('div', 'downloads',
      downloadLink('/api/v1/hangs/' + id, 'Report JSON', report.id + '.json', 'download-report'),
      downloadLink('/api/v1/hangs/' + id + '/speedscope', 'Speedscope', report.id + '.speedscope.json', 'download-speedscope'),
      downloadLink('/api/v1/hangs/' + id + '/trace', 'Chrome trace', report.id + '.trace.json', 'download-trace'));
    root.append(el('header', 'detail-head', title, el('p', 'muted mono', report.id), links));
    if (report.cause) root.append(verdictView(report));

    const samples = report.samples || {};
    const walks = Object.entries(samples.walks || {}).map(([k, v]) => v + ' ' + k).join(', ');
    const summary = el('dl', 'summary');
    summary.dataset.testid = 'hang-summary';
    summary.append(
      summaryItem('Duration', live ? el('span', 'live-elapsed', fmtDuration(elapsedOf(entry)))
        : fmtDuration(report.duration_ms) + (report.state === 'ended_by_termination' ? ' (at least)' : '')),
      summaryItem('State', stateLabel(report.state)),
      summaryItem('App', ((report.app && report.app.name) || '—') + ' · pid ' + (report.app && report.app.pid)),
      summaryItem('Started', fmtWall(report.start && report.start.wall_ms, true)),
      summaryItem('Samples', (samples.count || 0) + ' every ' + report.sample_interval_ms + ' ms' +
        (samples.dropped ? ', ' + samples.dropped + ' dropped' : '') + (walks ? ' (' + walks + ')' : '')),
      summaryItem('CPU', beforeDuring(report.cpu, fmtPercent, live)),
      summaryItem('Memory', beforeDuring(report.memory, (m) => fmtBytes(m.rss_bytes), live)),
      summaryItem('FPS', beforeDuring(report.frames, (f) => Math.round(f.fps) + ' (' + f.hitch_band + ')', live)));
    root.append(summary);
    if (live) {
      const n = samples.count || 0;
      root.append(el('p', 'live-note', 'Still hanging. Below is the report as first written (' + n +
        (n === 1 ? ' sample' : ' samples') + '); the final one replaces it when the main thread answers.'),
      el('h3', 'section-title', 'Latest main-thread stack'), liveStack(entry));
    }

    const threads = report.threads || [];
    const tree = report.call_tree;
    const tabs = makeTabs([
      { id: 'calltree', label: 'Call tree', filtered: true, build: () => callTree(shownTree(tree)) },
      { id: 'bottomup', label: 'Bottom-up', filtered: true, build: () => bottomUpTree(shownTree(tree)) },
      { id: 'flamegraph', label: 'Flame graph', filtered: true, build: () => flameGraph(shownTree(tree)) },
      { id: 'threads', label: 'Threads (' + threads.length + ')', build: () => threadList(threads, report.main_thread_tid) },
    ], myCodeToggle(() => tabs.rebuild()));
    root.append(tabs);
    if (entry && entry.state === 'in_progress' && report.state !== 'in_progress') fromSummaryOfReport(report);
    return root;
  }

  /* A stored report is newer than the list's copy: bring the entry up to date. */
  function fromSummaryOfReport(report) {
    const inner = (report.heaviest_stack || [])[0] || {};
    fromSummary({ id: report.id, hang_id: report.hang_id, pid: report.app.pid, app: report.app.name, state: report.state,
      start_wall_ms: report.start.wall_ms, duration_ms: report.duration_ms, samples: report.samples.count,
      function: inner.function || null, module: inner.module || null,
      label: report.cause && report.cause.label });
  }

  /* Tabs whose panels are built the first time they are shown (a flame graph needs its size).
   * tool, beside the bar, shows with the tabs marked filtered; rebuild() builds them anew. */
  function makeTabs(specs, tool) {
    const wrap = el('div', 'tabs');
    const bar = el('div', 'tab-bar');
    bar.setAttribute('role', 'tablist');
    const panels = el('div', 'tab-panels');
    const built = new Map();
    let current = specs[0];
    function show(spec) {
      current = spec;
      if (tool) tool.hidden = !spec.filtered;
      for (const button of bar.children) {
        const on = button.dataset.tab === spec.id;
        button.setAttribute('aria-selected', on ? 'true' : 'false');
        button.classList.toggle('active', on);
      }
      if (!built.has(spec.id)) {
        const panel = el('div', 'tab-panel');
        panel.setAttribute('role', 'tabpanel');
        panel.dataset.tab = spec.id;
        panels.append(panel);
        built.set(spec.id, panel);
        panel.append(spec.build());
      }
      for (const [id, panel] of built) panel.hidden = id !== spec.id;
      const shown = built.get(spec.id);
      if (shown.firstChild && shown.firstChild.redraw) shown.firstChild.redraw();
    }
    for (const spec of specs) {
      const button = el('button', 'tab', spec.label);
      button.type = 'button';
      button.setAttribute('role', 'tab');
      button.dataset.tab = spec.id;
      button.dataset.testid = 'tab-' + spec.id;
      button.addEventListener('click', () => show(spec));
      bar.append(button);
    }
    wrap.append(el('div', 'tab-head', bar, tool || null), panels);
    wrap.rebuild = () => {
      built.clear();
      panels.replaceChildren();
      show(current);
    };
    show(specs[0]);
    return wrap;
  }

  // ---- the verdict ----------------------------------------------------------------------------

  /* The report's cause, read first: its kind, the sentence, how many samples it explains, the
   * other kinds seen, and for a lock the chain of threads that held it. */
  function verdictView(report) {
    const cause = report.cause;
    const box = el('section', 'verdict');
    box.dataset.testid = 'verdict';
    box.dataset.kind = cause.kind || 'unknown';
    const head = el('div', 'verdict-head', kindBadge(cause.kind), shareText(cause.share), otherCauses(cause));
    const summary = el('p', 'verdict-summary', cause.summary || 'No verdict: no sample was classified.');
    summary.dataset.testid = 'verdict-summary';
    box.append(head, summary);
    if (cause.owner) box.append(chainView(report));
    else if (Array.isArray(cause.cycle) && cause.cycle.length) box.append(cycleView(report));
    return box;
  }

  function kindBadge(kind) {
    const badge = el('span', 'kind-badge', kind || 'unknown');
    badge.dataset.kind = kind || 'unknown';
    badge.dataset.testid = 'kind-badge';
    return badge;
  }

  function sharePercent(share) {
    const pct = Math.round((share || 0) * 100);
    return (pct === 0 && share > 0 ? '<1' : String(pct)) + NBSP + '%';
  }

  function shareText(share) {
    if (typeof share !== 'number') return null;
    const node = el('span', 'verdict-share', 'explains ' + sharePercent(share) + ' of samples');
    node.dataset.testid = 'verdict-share';
    return node;
  }

  /* The kinds besides the verdict's (a deadlock's samples are its lock's). */
  function otherCauses(cause) {
    const own = cause.kind === 'deadlock' ? 'lock' : cause.kind;
    const others = (cause.causes || []).filter((c) => c.kind !== own && c.share > 0);
    if (!others.length) return null;
    const node = el('span', 'verdict-others', 'also ');
    node.dataset.testid = 'verdict-others';
    others.forEach((c, i) => node.append(i ? ', ' : '', el('span', 'other-kind', c.kind), ' ' + sharePercent(c.share)));
    return node;
  }

  function mainThreadOf(report) {
    const main = (report.threads || []).find((t) => t.is_main || t.tid === report.main_thread_tid);
    return main || { tid: report.main_thread_tid, name: null, stack: report.heaviest_stack || [] };
  }

  /* main → "waits for mutex … held by" → owner → …; an owner already drawn closes a cycle. */
  function chainView(report) {
    const list = el('ol', 'chain');
    list.dataset.testid = 'verdict-chain';
    const main = mainThreadOf(report);
    list.append(threadCard(main, report.cause, true));
    const drawn = new Map([[main.tid, main.name]]);
    for (let c = report.cause; c && c.owner; c = c.owner.cause) {
      list.append(chainLink(c));
      if (drawn.has(c.owner.tid)) {
        list.append(backLink(c.owner, c.owner.tid === main.tid));
        break;
      }
      drawn.set(c.owner.tid, c.owner.name);
      list.append(threadCard(c.owner, c.owner.cause, false));
    }
    return list;
  }

  /* A deadlock whose owners were not recorded: its cycle's threads, from the capture. */
  function cycleView(report) {
    const list = el('ol', 'chain');
    list.dataset.testid = 'verdict-chain';
    const byTid = new Map((report.threads || []).map((t) => [t.tid, t]));
    const cycle = report.cause.cycle;
    cycle.forEach((tid, i) => {
      const thread = byTid.get(tid) || { tid, name: null, stack: [] };
      if (i) list.append(chainLink({}));
      list.append(threadCard(thread, null, tid === report.main_thread_tid));
    });
    const first = byTid.get(cycle[0]) || { tid: cycle[0] };
    list.append(chainLink({}), backLink(first, cycle[0] === report.main_thread_tid));
    return list;
  }

  function chainLink(cause) {
    const what = cause.mutex ? 'mutex ' + cause.mutex : 'a lock';
    return el('li', 'chain-link', el('span', 'chain-arrow', '↓'), 'waits for ' + what + ' held by');
  }

  function backLink(thread, isMain) {
    const name = (thread.name || 'thread') + ' (tid ' + thread.tid + ')';
    const item = el('li', 'chain-back', el('span', 'chain-arrow', '↺'),
      'back to ' + name + (isMain ? ', the main thread' : ', already above') + ': a deadlock, no thread can go on');
    item.dataset.testid = 'chain-back';
    item.dataset.tid = String(thread.tid);
    return item;
  }

  /* One thread of the chain: who, what it was doing, and its stack (folded). */
  function threadCard(thread, cause, isMain) {
    const card = el('li', 'chain-card' + (isMain ? ' main' : ''));
    card.dataset.testid = isMain ? 'chain-main' : 'chain-owner';
    card.dataset.tid = String(thread.tid);
    card.dataset.name = thread.name || '';
    card.append(el('div', 'chain-who',
      isMain ? el('span', 'main-badge', 'MAIN') : null,
      el('span', 'thread-name', thread.name || (isMain ? 'main thread' : '(unnamed)')),
      el('span', 'muted', 'tid ' + thread.tid)));
    if (cause) card.append(doingLine(cause, thread.stack));
    card.append(cardStack(thread.stack || []));
    return card;
  }

  /* "lock · futex() · in demo_chain_a": its kind, the call, the target, its own code. */
  function doingLine(cause, stack) {
    const kind = cause.kind === 'deadlock' ? 'lock' : cause.kind;
    const line = el('div', 'chain-doing', kindBadge(kind));
    if (cause.syscall) line.append(el('span', 'mono', cause.syscall + '()'));
    if (cause.target) line.append(el('span', 'chain-target mono', cause.target));
    const own = (stack || []).find((f) => f.function && !isSystemLibrary(f.module));
    if (own) line.append(el('span', 'muted', 'in ', el('span', 'mono', own.function)));
    return line;
  }

  function cardStack(stack) {
    if (!stack.length) return el('p', 'muted chain-nostack', 'no stack captured');
    const details = el('details', 'chain-stack');
    details.append(el('summary', null, 'Stack · ' + stack.length + (stack.length === 1 ? ' frame' : ' frames')), stackList(stack));
    return details;
  }

  // ---- bottom-up and "my code only" -----------------------------------------------------------

  const prefs = { myCodeOnly: false }; // kept from one hang to the next

  function childSum(node) {
    let sum = 0;
    for (const child of node.children || []) sum += child.count;
    return sum;
  }

  /* Two frames are one node when they are one function of one module (one address without a
   * symbol); withLine also keeps a caller's call sites apart, as the report's tree does. */
  function frameKey(frame, withLine) {
    const key = (frame.module || '') + '|' + (frame.function || frame.address || '');
    return withLine && frame.line ? key + '|' + frame.line : key;
  }

  function frameCopy(frame) {
    const copy = { count: 0, self: 0, children: [] };
    for (const field of ['function', 'module', 'address', 'module_offset', 'file', 'line']) {
      if (frame[field] !== undefined) copy[field] = frame[field];
    }
    return copy;
  }

  /* The child of parent that frame merges into, made when missing. A merged frame seen at
   * another line keeps no line: it would name only one of them. */
  function childFor(parent, frame, withLine) {
    if (!parent.byKey) parent.byKey = new Map();
    const key = frameKey(frame, withLine);
    let child = parent.byKey.get(key);
    if (!child) {
      child = frameCopy(frame);
      parent.byKey.set(key, child);
      parent.children.push(child);
    } else if (child.line !== frame.line || child.file !== frame.file) {
      delete child.line;
      delete child.file;
    }
    return child;
  }

  /* Heaviest first, as in the report; byKey is only for building. */
  function finishTree(node) {
    delete node.byKey;
    node.children.sort((a, b) => b.count - a.count);
    for (const child of node.children) finishTree(child);
    return node;
  }

  function treeTop(root) {
    return { function: '(all samples)', count: root.count, self: 0, children: [] };
  }

  /* The tree turned over: roots are where samples ended, children their callers. Each path
   * from the root to a node with samples of its own is inserted reversed, with those samples. */
  function bottomUp(root) {
    const top = treeTop(root);
    top.self = root.count - childSum(root);
    const path = [];
    (function walk(node) {
      const own = node.count - childSum(node);
      if (path.length && own > 0) insertReversed(top, path, own);
      for (const child of node.children || []) {
        path.push(child);
        walk(child);
        path.pop();
      }
    })(root);
    return finishTree(top);
  }

  function insertReversed(top, path, own) {
    let node = top;
    for (let i = path.length - 1; i >= 0; i--) {
      node = childFor(node, path[i], false);
      node.count += own;
    }
  }

  /* "My code only": a system library's frame is left out, its callees move up to the nearest
   * frame shown, its own samples stay with that frame (counts are kept). */
  const ownTrees = new WeakMap();
  function ownCodeTree(root) {
    if (!ownTrees.has(root)) {
      const top = treeTop(root);
      liftInto(top, root.children);
      ownTrees.set(root, setSelf(finishTree(top)));
    }
    return ownTrees.get(root);
  }

  function liftInto(parent, children) {
    for (const child of children || []) {
      if (isSystemLibrary(child.module)) {
        liftInto(parent, child.children);
        continue;
      }
      const node = childFor(parent, child, true);
      node.count += child.count;
      liftInto(node, child.children);
    }
  }

  function setSelf(node) {
    node.self = node.count - childSum(node);
    for (const child of node.children) setSelf(child);
    return node;
  }

  function shownTree(root) {
    return prefs.myCodeOnly && root && root.count ? ownCodeTree(root) : root;
  }

  function bottomUpTree(root) {
    const tree = root && root.count ? bottomUp(root) : root;
    return callTree(tree, { testid: 'calltree-bottom-up', heading: 'Function, then its callers' });
  }

  function myCodeToggle(onChange) {
    const box = el('input');
    box.type = 'checkbox';
    box.checked = prefs.myCodeOnly;
    box.dataset.testid = 'my-code-only';
    box.addEventListener('change', () => {
      prefs.myCodeOnly = box.checked;
      onChange();
    });
    const label = el('label', 'tab-tool', box, 'My code only');
    label.title = 'Leave out frames of system libraries (libc, the loader, the vDSO): their samples count for the nearest frame shown';
    return label;
  }

  // ---- the call tree ------------------------------------------------------------------------

  /* Collapsible rows, children built on first expand (a tree may hold 20 000 nodes); the
   * heaviest path is open from the start, because that is where the time went. */
  function callTree(root, options) {
    const wrap = el('div', 'call-tree');
    wrap.dataset.testid = (options && options.testid) || 'call-tree';
    if (!root || !root.count) {
      wrap.append(el('p', 'empty', 'No samples were taken: the hang ended before the first one.'));
      return wrap;
    }
    const head = el('div', 'tree-head', el('span', null, (options && options.heading) || 'Function'),
      el('span', 'num', 'Samples'), el('span', 'num', 'Total'));
    const list = el('ul', 'tree');
    list.setAttribute('role', 'tree');
    const heaviest = new Set();
    for (let node = root; node; node = heaviestChild(node)) heaviest.add(node);
    list.append(treeNode(root, 0, root.count, heaviest));
    wrap.append(head, list);
    if (root.truncated) wrap.append(el('p', 'muted', 'The tree was cut at 20 000 nodes; ' + (root.truncated_samples || 0) + ' samples are shorter than they were.'));
    return wrap;
  }

  function heaviestChild(node) {
    let best = null;
    for (const child of node.children || []) if (!best || child.count > best.count) best = child;
    return best;
  }

  function treeNode(node, depth, total, heaviest) {
    const item = el('li', 'tree-item');
    item.setAttribute('role', 'treeitem');
    const hasChildren = (node.children || []).length > 0;
    const row = el('div', 'tree-row');
    row.tabIndex = 0;
    row.style.setProperty('--depth', String(depth));
    const pct = (node.count / total) * 100;
    const bar = el('span', 'tree-bar');
    bar.style.width = pct.toFixed(2) + '%';
    const name = el('span', 'tree-name',
      el('span', 'twisty', hasChildren ? '▸' : ''),
      el('span', 'fn' + (node.function ? '' : ' unknown'), depth === 0 ? '(all samples)' : frameName(node)));
    if (depth > 0 && node.module && node.function) name.append(el('span', 'mod', basename(node.module)));
    const where = frameLocation(node);
    if (where) name.append(el('span', 'loc', where));
    name.title = [frameName(node), node.module, node.file && node.file + ':' + node.line,
      node.count + ' samples' + (node.self ? ', self ' + node.self : '')].filter(Boolean).join('\n');
    const self = node.self ? el('span', 'self', 'self ' + node.self) : null;
    row.append(bar, name, el('span', 'num', self, String(node.count)), el('span', 'num pct', pct.toFixed(1) + '%'));
    item.append(row);
    item.dataset.function = node.function || '';
    item.dataset.module = node.module || '';
    item.dataset.count = String(node.count);

    if (hasChildren) {
      let children = null;
      const toggle = (open) => {
        if (open && !children) {
          children = el('ul', 'tree-children');
          children.setAttribute('role', 'group');
          for (const child of node.children) children.append(treeNode(child, depth + 1, total, heaviest));
          item.append(children);
        }
        if (children) children.hidden = !open;
        item.setAttribute('aria-expanded', open ? 'true' : 'false');
        row.querySelector('.twisty').textContent = open ? '▾' : '▸';
      };
      row.addEventListener('click', () => toggle(item.getAttribute('aria-expanded') !== 'true'));
      row.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ' || e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          e.preventDefault();
          toggle(e.key === 'ArrowRight' ? true : e.key === 'ArrowLeft' ? false : item.getAttribute('aria-expanded') !== 'true');
        }
      });
      toggle(heaviest.has(node));
    }
    return item;
  }

  // ---- the flame graph ------------------------------------------------------------------------

  const FLAME_ROW = 20;

  /* An icicle graph on a canvas (callers on top, callees below, width = samples). Hovering
   * names the frame; a click zooms to it, a click on the top row or "Reset" zooms out. */
  function flameGraph(root) {
    const wrap = el('div', 'flame');
    wrap.dataset.testid = 'flamegraph';
    if (!root || !root.count) {
      wrap.append(el('p', 'empty', 'No samples were taken: the hang ended before the first one.'));
      return wrap;
    }
    const crumbs = el('div', 'flame-crumbs');
    const reset = el('button', 'btn btn-quiet btn-small', 'Reset zoom');
    reset.type = 'button';
    reset.dataset.testid = 'flame-reset';
    const bar = el('div', 'flame-bar', crumbs, reset);
    const scroller = el('div', 'flame-scroll');
    const canvas = el('canvas', 'flame-canvas');
    canvas.dataset.testid = 'flame-canvas';
    scroller.append(canvas);
    const touch = window.matchMedia('(hover: none)').matches;
    wrap.append(bar, scroller, el('p', 'hint muted', touch ? 'Tap a frame for its details and to zoom into it.'
      : 'Hover a frame for details; click to zoom into it, click it again to zoom out.'));

    const parents = new Map();
    let maxDepth = 0;
    (function index(node, depth) {
      maxDepth = Math.max(maxDepth, depth);
      for (const child of node.children || []) {
        parents.set(child, node);
        index(child, depth + 1);
      }
    })(root, 0);

    const view = { zoom: root, rects: [], hover: null };

    function pathTo(node) {
      const path = [];
      for (let n = node; n; n = parents.get(n)) path.unshift(n);
      return path;
    }

    /* Rectangles in CSS pixels: the zoomed node's ancestors span the whole width (dimmed),
     * its subtree is scaled to its own count. */
    function layout(width) {
      const rects = [];
      const ancestors = pathTo(view.zoom);
      ancestors.forEach((node, depth) => rects.push({ node, depth, x: 0, w: width, dim: node !== view.zoom }));
      const startDepth = ancestors.length - 1;
      (function place(node, depth, x, w) {
        let cx = x;
        for (const child of node.children || []) {
          const cw = (child.count / node.count) * w;
          if (cw >= 0.5) {
            rects.push({ node: child, depth: depth + 1, x: cx, w: cw, dim: false });
            place(child, depth + 1, cx, cw);
          }
          cx += cw;
        }
      })(view.zoom, startDepth, 0, width);
      return rects;
    }

    function colorOf(node, dim) {
      if (dim) return colors.grid;
      if (node === root) return '#4b5563';
      if (!node.function) return '#6b7280';
      const h = hashString(node.function);
      if (isSystemModule(node.module)) return 'hsl(' + (190 + (h % 40)) + ',48%,' + (62 + (h >> 8) % 12) + '%)';
      return 'hsl(' + (12 + (h % 34)) + ',80%,' + (56 + (h >> 8) % 12) + '%)';
    }

    function draw() {
      const height = (maxDepth + 1) * FLAME_ROW;
      canvas.style.height = height + 'px';
      const box = prepareCanvas(canvas, height);
      if (!box) return;
      const { ctx, width } = box;
      view.rects = layout(width);
      ctx.font = '12px ' + getComputedStyle(document.body).fontFamily;
      ctx.textBaseline = 'middle';
      for (const r of view.rects) {
        const y = r.depth * FLAME_ROW;
        ctx.fillStyle = colorOf(r.node, r.dim);
        ctx.fillRect(r.x, y, Math.max(0.5, r.w - 1), FLAME_ROW - 1);
        if (r === view.hover) {
          ctx.strokeStyle = colors.text;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(r.x + 0.75, y + 0.75, Math.max(0.5, r.w - 2.5), FLAME_ROW - 2.5);
        }
        if (r.w > 28) {
          const label = fitText(ctx, r.node === root ? '(all samples)' : frameName(r.node), r.w - 8);
          ctx.fillStyle = r.dim || r.node === root || !r.node.function ? colors.text : '#111318';
          ctx.fillText(label, r.x + 4, y + FLAME_ROW / 2 + 0.5);
        }
      }
      canvas.dataset.rects = String(view.rects.length);
      renderCrumbs();
    }

    /* The path to the zoomed node; a long one shows its start and its last few steps. */
    function renderCrumbs() {
      crumbs.replaceChildren();
      const path = pathTo(view.zoom);
      const keep = window.matchMedia('(max-width: 560px)').matches ? 2 : 4;
      path.forEach((node, i) => {
        if (i > 0 && i < path.length - keep) {
          if (i === 1) crumbs.append(el('span', 'crumb-sep', '›'), el('span', 'crumb-gap', '…'));
          return;
        }
        if (i) crumbs.append(el('span', 'crumb-sep', '›'));
        const crumb = el('button', 'crumb', node === root ? 'all samples' : frameName(node));
        crumb.type = 'button';
        crumb.addEventListener('click', () => zoomTo(node));
        crumbs.append(crumb);
      });
      crumbs.scrollLeft = crumbs.scrollWidth;
      reset.disabled = view.zoom === root;
    }

    function zoomTo(node) {
      view.zoom = node;
      view.hover = null;
      hideTooltip();
      wrap.dataset.zoom = node === root ? '' : frameName(node);
      draw();
    }

    function hit(event) {
      const rect = canvas.getBoundingClientRect();
      const x = event.clientX - rect.left;
      const y = event.clientY - rect.top;
      const depth = Math.floor(y / FLAME_ROW);
      return view.rects.find((r) => r.depth === depth && x >= r.x && x < r.x + r.w) || null;
    }

    canvas.addEventListener('mousemove', (event) => {
      const r = hit(event);
      if (r !== view.hover) {
        view.hover = r;
        draw();
      }
      if (r) showTooltip(r.node, root.count, event.clientX, event.clientY);
      else hideTooltip();
    });
    canvas.addEventListener('mouseleave', () => {
      view.hover = null;
      hideTooltip();
      draw();
    });
    canvas.addEventListener('click', (event) => {
      const r = hit(event);
      if (!r) return;
      // A click on the node already zoomed to steps out one level; any other zooms to it.
      zoomTo(r.node === view.zoom ? parents.get(r.node) || root : r.node);
    });
    reset.addEventListener('click', () => zoomTo(root));

    // Redrawn when its width changes (a rotated phone, a resized window) and when shown.
    new ResizeObserver(() => draw()).observe(scroller);
    wrap.redraw = draw;
    return wrap;
  }

  function fitText(ctx, text, width) {
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid;
      else hi = mid - 1;
    }
    return lo ? text.slice(0, lo) + '…' : '';
  }

  function showTooltip(node, total, clientX, clientY) {
    const tip = byId('flame-tooltip');
    const lines = [
      el('div', 'tip-fn', node.function ? node.function : frameName(node)),
    ];
    if (node.module) lines.push(el('div', 'tip-row', el('span', 'muted', 'module '), basename(node.module)));
    if (node.file) lines.push(el('div', 'tip-row', el('span', 'muted', 'source '), frameLocation(node)));
    lines.push(el('div', 'tip-row', el('span', 'muted', 'samples '),
      node.count + ' (' + ((node.count / total) * 100).toFixed(1) + '%)' + (node.self ? ', self ' + node.self : '')));
    tip.replaceChildren(...lines);
    tip.hidden = false;
    // Keep the tip inside the window, on the side of the pointer with more room.
    const margin = 12;
    const tipRect = tip.getBoundingClientRect();
    let left = clientX + margin;
    if (left + tipRect.width > window.innerWidth - 4) left = Math.max(4, clientX - margin - tipRect.width);
    let top = clientY + margin;
    if (top + tipRect.height > window.innerHeight - 4) top = Math.max(4, clientY - margin - tipRect.height);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }

  function hideTooltip() {
    byId('flame-tooltip').hidden = true;
  }

  // ---- threads and stacks ---------------------------------------------------------------------

  const THREAD_STATES = { R: 'running', S: 'sleeping', D: 'disk wait', T: 'stopped', t: 'traced', Z: 'zombie', I: 'idle', X: 'dead' };
  const WALK_NOTES = {
    truncated: 'stack cut at 128 frames',
    bad_frame: 'walk stopped at an unreadable frame',
    no_reply: 'the thread did not answer the capture (signals blocked?)',
    exited: 'the thread exited during the capture',
    own: 'one of lagscope\'s threads, never stopped',
  };

  /* Every thread, the main one first and open, the others folded. */
  function threadList(threads, mainTid) {
    const list = el('ol', 'threads');
    list.dataset.testid = 'threads';
    list.dataset.count = String(threads.length);
    const isMain = (t) => t.is_main || t.tid === mainTid;
    const ordered = threads.slice().sort((a, b) => (isMain(b) ? 1 : 0) - (isMain(a) ? 1 : 0));
    for (const group of groupThreads(ordered, isMain)) list.append(threadItem(group, isMain(group[0])));
    if (!threads.length) list.append(el('li', 'empty', 'No threads were captured.'));
    return list;
  }

  /* A pool of idle workers is many threads with one name waiting in one place: each such set
   * is one item ("×12"), so the threads that differ stand out. The main thread is never
   * grouped. */
  function groupThreads(threads, isMain) {
    const groups = [];
    const byKey = new Map();
    for (const thread of threads) {
      if (isMain(thread)) {
        groups.push([thread]);
        continue;
      }
      const key = [thread.name, thread.state, thread.walk, (thread.stack || []).map(frameName).join(';')].join('|');
      let group = byKey.get(key);
      if (!group) {
        group = [];
        byKey.set(key, group);
        groups.push(group);
      }
      group.push(thread);
    }
    return groups;
  }

  function threadItem(group, isMain) {
    const thread = group[0];
    const many = group.length > 1;
    const item = el('li', 'thread' + (isMain ? ' main' : ''));
    item.dataset.testid = 'thread';
    item.dataset.main = isMain ? 'true' : 'false';
    item.dataset.tid = String(thread.tid);
    item.dataset.count = String(group.length);
    item.dataset.tids = group.map((t) => t.tid).join(',');
    const details = el('details');
    details.open = isMain;
    const stateNode = el('span', 'thread-state', (thread.state || '?') + ' ' + (THREAD_STATES[thread.state] || ''));
    stateNode.dataset.state = thread.state || '';
    const cpus = group.map((t) => t.cpu_percent).filter((c) => c !== undefined);
    let cpu = null;
    if (cpus.length) cpu = 'cpu ' + (many ? 'max ' : '') + fmtPercent(Math.max(...cpus));
    const summary = el('summary', 'thread-head',
      isMain ? el('span', 'main-badge', 'MAIN') : null,
      el('span', 'thread-name', thread.name || '(unnamed)'),
      many ? el('span', 'count-badge', '×' + group.length) : null,
      el('span', 'thread-meta',
        el('span', null, many ? group.length + ' threads' : 'tid ' + thread.tid),
        stateNode,
        cpu ? el('span', null, cpu) : null,
        el('span', null, (thread.stack || []).length + ' frames')));
    details.append(summary);
    if (many) details.append(el('p', 'thread-tids', 'tids ' + group.map((t) => t.tid).join(', ') + ', all with this stack:'));
    if (thread.walk && thread.walk !== 'complete') details.append(el('p', 'walk-note', WALK_NOTES[thread.walk] || thread.walk));
    if (thread.stack_omitted) details.append(el('p', 'walk-note', 'stack left out: the report\'s frame budget was spent on earlier threads'));
    if ((thread.stack || []).length) details.append(stackList(thread.stack));
    item.append(details);
    return item;
  }

  /* Frames innermost first, numbered like a debugger's backtrace. */
  function stackList(stack) {
    const list = el('ol', 'stack');
    stack.forEach((frame, i) => {
      const where = frameLocation(frame);
      const row = el('li', 'frame',
        el('span', 'frame-no', '#' + i),
        el('span', 'fn' + (frame.function ? '' : ' unknown'), frameName(frame)),
        el('span', 'mod', basename(frame.module) || '?'),
        where ? el('span', 'loc', where) : null);
      row.title = [frame.address, frame.module, frame.file && frame.file + ':' + frame.line].filter(Boolean).join('\n');
      list.append(row);
    });
    return list;
  }

  // ---- capture --------------------------------------------------------------------------------

  let captureUntil = 0;    // rate limit: performance.now() before which the button waits
  let captureTimer = 0;

  async function capture() {
    const button = byId('capture-button');
    button.disabled = true;
    setCaptureMessage('Capturing…', 'busy');
    try {
      const result = await api('/api/v1/capture', { method: 'POST' });
      setCaptureMessage('', '');
      clearSelectionMarks();
      selection.kind = 'capture';
      selection.key = null;
      selection.request++;
      showDetail(captureDetail(result));
      button.disabled = false;
    } catch (e) {
      handleCaptureError(e);
    }
  }

  function handleCaptureError(e) {
    const button = byId('capture-button');
    if (e instanceof ApiError && e.status === 429) {
      captureUntil = performance.now() + (e.retryAfterMs || 1000);
      countDownCapture();
      return;
    }
    button.disabled = false;
    if (e instanceof ApiError && e.status === 503) {
      setCaptureMessage('The app is busy (' + e.message + '). Try again.', 'error');
    } else if (e instanceof ApiError && e.status === 401) {
      setCaptureMessage('', ''); // the banner says what to do
    } else {
      setCaptureMessage('Capture failed: ' + e.message, 'error');
    }
  }

  /* 429: the button says when the next capture is allowed and comes back by itself. */
  function countDownCapture() {
    clearTimeout(captureTimer);
    const left = captureUntil - performance.now();
    const button = byId('capture-button');
    if (left <= 0) {
      button.disabled = false;
      setCaptureMessage('', '');
      return;
    }
    setCaptureMessage('Rate limited — retry in ' + (left / 1000).toFixed(1) + ' s', 'warn');
    captureTimer = setTimeout(countDownCapture, Math.min(100, left));
  }

  function setCaptureMessage(text, kind) {
    const node = byId('capture-message');
    node.textContent = text;
    node.dataset.kind = kind;
  }

  function captureDetail(result) {
    const root = el('div', 'capture-detail');
    root.dataset.testid = 'capture-result';
    const threads = result.threads || [];
    root.append(el('header', 'detail-head',
      el('h2', null, 'Capture · ' + threads.length + ' threads'),
      el('p', 'muted', 'Every thread of the app at ' + fmtWall(result.wall_ms, true) + ', taken in ' +
        (result.duration_ms !== undefined ? result.duration_ms + ' ms' : '—') + ' (lagscope\'s own threads excepted).')));
    root.append(threadList(threads, result.main_thread_tid));
    return root;
  }

  // ---- the stream -----------------------------------------------------------------------------

  const stream = { source: null, failures: 0, retryTimer: 0, retryAt: 0, hellos: 0 };

  /* EventSource gives up for good on an HTTP error (a 401, a 503) and retries only network
   * errors, at a pace of its own; this closes it on any error and opens a new one with a
   * backoff, so both cases recover the same way. */
  function connect() {
    clearTimeout(stream.retryTimer);
    if (stream.source) stream.source.close();
    if (stream.failures === 0) setConnection('connecting', 'Connecting…');
    const source = new EventSource('/api/v1/stream');
    stream.source = source;
    source.addEventListener('open', () => {
      stream.failures = 0;
      setConnection('live', 'Live');
      showAuthError(false);
    });
    source.addEventListener('error', () => {
      if (stream.source !== source) return;
      source.close();
      stream.failures++;
      scheduleReconnect();
      probeAfterError();
    });
    const on = (type, handler) => source.addEventListener(type, (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch (e) {
        return; // a malformed event must not stop the stream
      }
      handler(data);
    });
    on('hello', onHello);
    on('metrics', (tick) => {
      addTick(tick, true);
      renderMetrics();
      if (connection.state === 'stale') setConnection('live', 'Live');
    });
    on('hang_began', onHangBegan);
    on('hang_sample', onHangSample);
    on('hang_ended', onHangEnded);
    on('hang_recovered', () => loadHangs(true).catch(() => {}));
    on('hitch', (hitch) => {
      addHitch(hitch);
      renderHitchStrip();
    });
    on('error', (ev) => toast('lagscope: ' + (ev.code ? ev.code + ': ' : '') + (ev.message || 'error')));
  }

  function scheduleReconnect() {
    // First retry at once (a server that dropped a slow reader), then 1, 2, 4, 8, 10 s.
    const delay = stream.failures <= 1 ? 300 : Math.min(10000, 1000 * 2 ** (stream.failures - 2));
    stream.retryAt = performance.now() + delay;
    stream.retryTimer = setTimeout(connect, delay);
    updateRetryText();
  }

  function updateRetryText() {
    if (stream.failures === 0 || connection.state === 'live') return;
    if (stream.failures === 1) {
      setConnection('connecting', 'Reconnecting…');
      return;
    }
    const left = Math.max(0, Math.ceil((stream.retryAt - performance.now()) / 1000));
    setConnection('disconnected', left ? 'Disconnected — retrying in ' + left + ' s' : 'Disconnected — retrying…');
  }

  /* The stream cannot say why it failed; a plain request can: 401 means this browser lost its
   * token (the app was launched twice since), anything else that the app is away. */
  async function probeAfterError() {
    try {
      await api('/api/v1/status');
    } catch (e) { /* api() shows a 401; a network error needs nothing more */ }
  }

  /* A hello from another pid or launch time: the app restarted. Everything the page holds
   * about the old launch is reloaded from the new one. After any reconnect the stream may have
   * missed events, so the lists are refreshed too. */
  async function onHello(hello) {
    stream.hellos++;
    const key = launchKeyOf(hello.pid, hello.launch_wall_ms);
    const restarted = app.launchKey && key !== app.launchKey;
    if (restarted) {
      metrics.ticks = [];
      for (const entry of hangs.entries.values()) {
        // Hangs the old launch left open are closed by the new launch's store: ask it again.
        if (entry.state === 'in_progress') entry.live = false;
      }
      toast('The app restarted (pid ' + hello.pid + ').');
    }
    app.pid = hello.pid;
    if (restarted || stream.hellos > 1 || !app.launchKey) await loadAll();
  }

  /* Status, metrics and the newest hangs; a call while one is under way shares it. */
  let loadingAll = null;
  function loadAll() {
    if (!loadingAll) loadingAll = reloadAll().finally(() => { loadingAll = null; });
    return loadingAll;
  }

  async function reloadAll() {
    try {
      const status = await loadStatus();
      app.launchKey = launchKeyOf(status.app.pid, status.launch_wall_ms);
      await Promise.all([loadMetrics(), loadHangs(true), loadHitches()]);
      for (const entry of hangs.entries.values()) {
        if (entry.state === 'in_progress' && entry.pid === app.pid) {
          entry.live = true;
          startLiveTimer();
        }
      }
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) toast('Could not load from the app: ' + e.message);
    }
  }

  /* Once a second: the uptime, the retry countdown, and a silent app (paused in a debugger,
   * SIGSTOPped) noticed even though its connection is still open. */
  function everySecond() {
    updateUptime();
    updateRetryText();
    if (connection.state === 'live' && metrics.lastArrival) {
      const silent = performance.now() - metrics.lastArrival;
      if (silent > Math.max(5000, metrics.intervalMs * 6)) {
        setConnection('stale', 'No data for ' + Math.round(silent / 1000) + ' s (app paused?)');
      }
    } else if (connection.state === 'stale') {
      const silent = performance.now() - metrics.lastArrival;
      setText('connection-text', 'No data for ' + Math.round(silent / 1000) + ' s (app paused?)');
    }
  }

  // ---- start ----------------------------------------------------------------------------------

  function start() {
    readColors();
    byId('capture-button').addEventListener('click', capture);
    byId('hang-more').addEventListener('click', loadMoreHangs);
    // The header's hang badge, counted like the HUD's.
    const badge = el('span', 'hang-badge', 'HANG');
    badge.id = 'hang-badge';
    badge.dataset.testid = 'hang-badge';
    badge.hidden = true;
    byId('connection').after(badge);
    new ResizeObserver(() => drawCharts()).observe(byId('metrics'));
    setInterval(everySecond, 1000);
    loadAll();
    connect();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
