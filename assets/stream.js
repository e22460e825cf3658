/*
 * The event stream (GET /api/v1/stream): each event goes into state.js, which tells the views;
 * reconnecting with a backoff (backoff.js), a restarted app noticed by its hello, and the
 * once-a-second checks. main.js creates it with what it reloads:
 *   createStream({ loadAll, loadHangs })
 */
import { api } from './api.js';
import { reconnectDelayMs } from './backoff.js';
import { toast } from './dom.js';
import {
  addHitches, addTick, appLaunchKey, appRestarted, connectionState, hangBegan, hangEnded, hangSample,
  lastTickArrival, launchKeyOf, metricsIntervalMs, setAppPid, setAuthError, setConnection,
} from './state.js';

export function createStream({ loadAll, loadHangs }) {
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
      setAuthError(false);
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
      addTick(tick);
      if (connectionState() === 'stale') setConnection('live', 'Live');
    });
    on('hang_began', hangBegan);
    on('hang_sample', hangSample);
    on('hang_ended', hangEnded);
    on('hang_recovered', () => loadHangs(true).catch(() => {}));
    on('hang_lost', (ev) => toast('lagscope: ' + (ev.message || 'a hang of an earlier run was lost')));
    on('hitch', (hitch) => addHitches([hitch]));
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
    if (stream.failures === 0 || connectionState() === 'live') return;
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
    } catch (e) { /* api() reports a 401; a network error needs nothing more */ }
  }

  /* A hello from another pid or launch time: the app restarted. Everything the page holds
   * about the old launch is reloaded from the new one. After any reconnect the stream may have
   * missed events, so the lists are refreshed too. */
  async function onHello(hello) {
    stream.hellos++;
    const key = launchKeyOf(hello.pid, hello.launch_wall_ms);
    const restarted = appLaunchKey() && key !== appLaunchKey();
    if (restarted) {
      appRestarted();
      toast('The app restarted (pid ' + hello.pid + ').');
    }
    setAppPid(hello.pid);
    if (restarted || stream.hellos > 1 || !appLaunchKey()) await loadAll();
  }

  /* Once a second: the retry countdown, and a silent app (paused in a debugger, SIGSTOPped)
   * noticed even though its connection is still open. */
  function everySecond() {
    updateRetryText();
    const state = connectionState();
    if (state === 'live' && lastTickArrival()) {
      const silent = performance.now() - lastTickArrival();
      if (silent > Math.max(5000, metricsIntervalMs() * 6)) {
        setConnection('stale', 'No data for ' + Math.round(silent / 1000) + ' s (app paused?)');
      }
    } else if (state === 'stale') {
      const silent = performance.now() - lastTickArrival();
      setConnection('stale', 'No data for ' + Math.round(silent / 1000) + ' s (app paused?)');
    }
  }

  return { connect, everySecond };
}
