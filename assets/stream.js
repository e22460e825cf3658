/*
 * The event stream (GET /api/v1/stream): what each event changes, reconnecting with a
 * backoff (backoff.js), a restarted app noticed by its hello, and the once-a-second checks.
 */
import { ApiError, api, connection, setConnection, showAuthError } from './api.js';
import { app, launchKeyOf, loadStatus, updateUptime } from './app.js';
import { reconnectDelayMs } from './backoff.js';
import { setText, toast } from './dom.js';
import { hangs, loadHangs, onHangBegan, onHangEnded, onHangSample, startLiveTimer } from './hangs.js';
import { addHitch, hitches, loadHitches, renderHitchStrip } from './hitches.js';
import { addTick, loadMetrics, metrics, renderMetrics } from './metrics.js';

const stream = { source: null, failures: 0, retryTimer: 0, retryAt: 0, hellos: 0 };

/* EventSource gives up for good on an HTTP error (a 401, a 503) and retries only network
 * errors, at a pace of its own; this closes it on any error and opens a new one with a
 * backoff, so both cases recover the same way. */
export function connect() {
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
  const delay = reconnectDelayMs(stream.failures);
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
    // The new launch numbers its hitches from 1 again: the old ones would hide them (a hitch
    // whose seq is known is not added), and their times are another process's.
    hitches.list = [];
    hitches.selectedSeq = null;
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
export function loadAll() {
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
export function everySecond() {
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
