/*
 * What the page knows, and the events that say it changed. The data (the app's status, the
 * connection, the metrics ticks, the hitches, the hangs, the selection) lives here and only the
 * functions below change it; each change emits an event that main.js hands to the views that
 * draw it. A view reads the data through the getters and never writes into what they return.
 *
 * The events (payload in parentheses):
 *   status        the app's status came (the status)
 *   connection    the connection's state or its words changed ({ state, text })
 *   auth          this browser's token was refused (true) or accepted (false)
 *   metrics       the ticks changed
 *   hitches       the hitch list changed
 *   hang          one hang's entry changed ({ entry, isNew })
 *   hang-page     a page of the stored hangs came (the page)
 *   hang-began, hang-sample, hang-ended
 *                 the stream said so; the entry is already up to date (the entry)
 *   hangs-live    hangs of this launch left in progress are counted as live again
 *   select        the selection changed ({ kind, key, hitchWas: the hitch selected before })
 *   restart       the app restarted: the old launch's ticks and hitches are gone, its hangs
 *                 no longer live (nothing is redrawn: the reload that follows draws)
 */
import {
  FINAL_STATES, beganFields, endedFields, hangKey, mergeHang, nextOffsetAfter, sampleFields, summaryFields,
} from './hang-list.js';

// ---- on/emit ---------------------------------------------------------------------------------

/* main.js listens; only this file's functions emit, after the change they tell of. */
const listeners = new Map(); // event -> functions, in the order they were added

export function on(event, fn) {
  if (!listeners.has(event)) listeners.set(event, []);
  listeners.get(event).push(fn);
}

export function emit(event, payload) {
  for (const fn of listeners.get(event) || []) fn(payload);
}

// ---- the app -----------------------------------------------------------------------------------

const app = {
  status: null,        // the last /api/v1/status answer
  statusAt: 0,         // performance.now() when it came
  launchKey: '',       // pid and launch time of the launch the page shows
  pid: null,
};

export function launchKeyOf(pid, launchWallMs) {
  return pid + '@' + launchWallMs;
}

export function appStatus() { return app.status; }
export function appStatusAt() { return app.statusAt; }
export function appPid() { return app.pid; }
export function appLaunchKey() { return app.launchKey; }

/* A configuration value from the app's status, or null before the status came. */
export function appConfig(name) {
  return (app.status && app.status.config && app.status.config[name]) || null;
}

export function setStatus(status) {
  app.status = status;
  app.statusAt = performance.now();
  app.pid = status.app && status.app.pid;
  emit('status', status);
}

/* The stream's hello names the launch it comes from. */
export function setAppPid(pid) {
  app.pid = pid;
}

export function setLaunchKey(key) {
  app.launchKey = key;
}

// ---- the connection --------------------------------------------------------------------------

const connection = { state: 'connecting' };

export function connectionState() { return connection.state; }

export function setConnection(state, text) {
  if (connection.state === 'unauthorized' && state !== 'live' && state !== 'unauthorized') {
    return; // keep the clearer message until the token works again
  }
  connection.state = state;
  emit('connection', { state, text });
}

/* A 401 anywhere means this browser's token is no longer accepted; any 2xx that it is. */
export function setAuthError(on) {
  emit('auth', on);
  if (on) setConnection('unauthorized', 'Unauthorized');
}

// ---- the metrics ------------------------------------------------------------------------------

const METRICS_KEEP = 240;           // ticks kept: two minutes at the default 500 ms
export const CHART_WINDOW_MS = 60000; // what the charts and the hitch strip show

const metrics = {
  ticks: [],              // metrics events, oldest first
  intervalMs: 500,
  lastArrival: 0,         // performance.now() of the last tick, to notice a silent app
};

export function metricTicks() { return metrics.ticks; }
export function latestTick() { return metrics.ticks[metrics.ticks.length - 1]; }
export function metricsIntervalMs() { return metrics.intervalMs; }
export function lastTickArrival() { return metrics.lastArrival; }

function keepTick(tick, live) {
  const last = metrics.ticks[metrics.ticks.length - 1];
  if (last && tick.wall_ms <= last.wall_ms) return; // already have it (load after stream)
  metrics.ticks.push(tick);
  if (metrics.ticks.length > METRICS_KEEP) metrics.ticks.splice(0, metrics.ticks.length - METRICS_KEEP);
  if (live) metrics.lastArrival = performance.now();
}

/* A tick from the stream. */
export function addTick(tick) {
  keepTick(tick, true);
  emit('metrics');
}

/* GET /api/v1/metrics's answer, with the ticks streamed meanwhile after it. */
export function setMetricsPage(answer) {
  if (answer.interval_ms) metrics.intervalMs = answer.interval_ms;
  const live = metrics.ticks;
  metrics.ticks = [];
  for (const tick of answer.metrics || []) keepTick(tick, false);
  for (const tick of live) keepTick(tick, false);
  emit('metrics');
}

// ---- the hitches ------------------------------------------------------------------------------

/* The hitch events the app keeps (GET /api/v1/hitches) and those streamed since, oldest first. */
const hitches = { list: [], selectedSeq: null };

export function hitchList() { return hitches.list; }
export function selectedHitchSeq() { return hitches.selectedSeq; }

function keepHitch(hitch) {
  if (typeof hitch.start_ns !== 'number' || hitches.list.some((h) => h.seq === hitch.seq)) return;
  hitches.list.push(hitch);
  hitches.list.sort((a, b) => a.start_ns - b.start_ns);
  const keep = appConfig('hitch_keep') || 32; // as many as the app keeps
  if (hitches.list.length > keep) hitches.list.splice(0, hitches.list.length - keep);
}

export function addHitches(list) {
  for (const hitch of list) keepHitch(hitch);
  emit('hitches');
}

// ---- the hangs --------------------------------------------------------------------------------

/* One entry per hang, from the stored list and from live events (hang-list.js). */
const hangs = {
  entries: new Map(),   // key -> entry
  total: 0,             // the store's count, from the last page
  evicted: 0,           // hangs whose reports the store's bound deleted, from the last page
  signatures: new Map(), // signature -> GET /api/v1/signatures' group: the store's counts
  nextOffset: 0,        // where the next "more" page starts
};

export function hangEntries() { return hangs.entries; }
export function hangEntry(key) { return hangs.entries.get(key); }
export function hangTotal() { return hangs.total; }
export function hangNextOffset() { return hangs.nextOffset; }
export function hangEvicted() { return hangs.evicted; }
export function hangSignatures() { return hangs.signatures; }

/* GET /api/v1/signatures' answer: every hang counted by signature, for the groups' lines. */
export function setSignatures(answer) {
  hangs.signatures = new Map((answer.signatures || []).map((g) => [g.signature, g]));
  emit('signatures', answer);
}

/* Merges what is known about one hang into its entry. */
function upsertHang(key, fields) {
  const { entry, isNew } = mergeHang(hangs.entries, key, fields);
  emit('hang', { entry, isNew });
  return entry;
}

/* One summary of a stored page, or of a report newer than the list's copy. */
export function hangFromSummary(summary) {
  const entry = upsertHang(hangKey(summary.pid, summary.hang_id), summaryFields(summary));
  if (entry.state === 'in_progress' && !entry.elapsedAt) {
    entry.elapsedBase = summary.duration_ms || 0;
    entry.elapsedAt = performance.now();
  }
}

/* A page of GET /api/v1/hangs from offset; reset: the newest page, refreshed. */
export function addHangPage(page, offset, reset) {
  hangs.total = page.total;
  hangs.evicted = page.evicted || 0;
  hangs.nextOffset = nextOffsetAfter(hangs.nextOffset, offset, page.hangs.length, reset);
  for (const summary of page.hangs) hangFromSummary(summary);
  emit('hang-page', page);
}

// The stream's events about hangs.
export function hangBegan(ev) {
  const appName = app.status && app.status.app && app.status.app.name;
  const entry = upsertHang(hangKey(app.pid, ev.hang_id), beganFields(ev, app.pid, appName, performance.now()));
  emit('hang-began', entry);
}

export function hangSample(ev) {
  const key = hangKey(app.pid, ev.hang_id);
  const entry = hangs.entries.get(key) || upsertHang(key, { hang_id: ev.hang_id, pid: app.pid, state: 'in_progress', live: true });
  if (FINAL_STATES.has(entry.state)) return;
  upsertHang(key, sampleFields(ev));
  if (typeof ev.elapsed_ms === 'number') {
    entry.elapsedBase = ev.elapsed_ms;
    entry.elapsedAt = performance.now();
  }
  emit('hang-sample', entry);
}

export function hangEnded(ev) {
  const entry = upsertHang(hangKey(app.pid, ev.hang_id), endedFields(ev, app.pid));
  emit('hang-ended', entry);
}

/* After a load: hangs of this launch still in progress are live (the stream tells of them). */
export function markLiveHangs() {
  let any = false;
  for (const entry of hangs.entries.values()) {
    if (entry.state === 'in_progress' && entry.pid === app.pid) {
      entry.live = true;
      any = true;
    }
  }
  if (any) emit('hangs-live');
}

// ---- the restart -------------------------------------------------------------------------------

/* The app restarted: what the page holds about the old launch goes, before it is reloaded. */
export function appRestarted() {
  metrics.ticks = [];
  // The new launch numbers its hitches from 1 again: the old ones would hide them (a hitch
  // whose seq is known is not added), and their times are another process's.
  hitches.list = [];
  hitches.selectedSeq = null;
  for (const entry of hangs.entries.values()) {
    // Hangs the old launch left open are closed by the new launch's store: ask it again.
    if (entry.state === 'in_progress') entry.live = false;
  }
  emit('restart');
}

// ---- the selection -----------------------------------------------------------------------------

/* What the detail pane shows: a hang (its key), a hitch (its seq, as text), a capture. */
const selection = { kind: null, key: null };

export function selectionKind() { return selection.kind; }
export function selectionKey() { return selection.key; }

export function isSelectedHang(key) {
  return selection.kind === 'hang' && selection.key === key;
}

/* kind 'hang' with its key, 'hitch' with its seq, 'capture' with none. */
export function select(kind, key) {
  const hitchWas = hitches.selectedSeq;
  selection.kind = kind;
  selection.key = kind === 'hitch' ? String(key) : key;
  hitches.selectedSeq = kind === 'hitch' ? key : null;
  emit('select', { kind, key: selection.key, hitchWas });
}
