/*
 * The hang list's entries, without the page: one entry per hang, merged from the stored pages
 * (GET /api/v1/hangs) and from the stream's events, keyed by pid and hang id (a live hang has
 * no report id until it ends). Pure: state.js keeps them, hangs.js draws the list from them,
 * and node's test runner imports this file as it is (tests/unit/viewer/).
 */

export const FINAL_STATES = new Set(['ended', 'ended_by_termination']);

export function hangKey(pid, hangId) {
  return pid + ':' + hangId;
}

/* A hang first heard of: in progress until something says otherwise. */
function newEntry(key) {
  return { key, id: null, state: 'in_progress', elapsedBase: 0, elapsedAt: 0 };
}

/* Folds what is known about one hang into its entry, in entries (a Map), made when missing.
 * A final state is never undone by an older in-progress copy (a page fetched before the hang
 * ended, a sample that came late). */
export function mergeHang(entries, key, fields) {
  let entry = entries.get(key);
  const isNew = !entry;
  if (isNew) {
    entry = newEntry(key);
    entries.set(key, entry);
  }
  if (FINAL_STATES.has(entry.state) && fields.state === 'in_progress') {
    fields = Object.assign({}, fields);
    delete fields.state;
    delete fields.duration_ms;
  }
  Object.assign(entry, fields);
  return { entry, isNew };
}

/* A hang's label ("lock · keeper") is the report's, computed once by lagscope: the list
 * shows it as soon as a report or an event carries it, and nothing here makes up another. */
function labelOf(label) {
  return typeof label === 'string' && label ? { label } : {};
}

/* An entry's fields from one summary of a stored page. */
export function summaryFields(summary) {
  return {
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
    ...appStateOf(summary),
    ...signatureOf(summary.signature),
    ...labelOf(summary.label),
  };
}

/* A hang in the program's start-up (before its first frame: "app_state": "startup"), said in
 * the list as the reports and lagscope-run's budget say it. Reports and events written before
 * the rename call it "phase", read when "app_state" is not there. */
function appStateOf(o) {
  const appState = o.app_state !== undefined ? o.app_state : o.phase;
  return appState === 'startup' ? { startup: true } : {};
}

/* A hang's signature (its kind and the app's frames, hashed by lagscope): the same hang in
 * every run has the same one. Reports from before signatures have none. */
function signatureOf(signature) {
  return typeof signature === 'string' && /^[0-9a-f]{16}$/.test(signature) ? { signature } : {};
}

/* Where the next "Load more" page starts once a page of count summaries came from offset. A
 * refresh of the newest page (reset) never moves it back over pages already loaded. */
export function nextOffsetAfter(nextOffset, offset, count, reset) {
  return reset ? Math.max(nextOffset, count) : offset + count;
}

/* hang_began: the hang as the stream first tells it, at now (performance.now()). */
export function beganFields(ev, pid, appName, now) {
  return {
    hang_id: ev.hang_id,
    pid,
    app: appName,
    state: 'in_progress',
    start_wall_ms: ev.start_wall_ms,
    ...appStateOf(ev),
    live: true,
    // The event comes when the threshold passed: the hang is already that old.
    elapsedBase: (ev.time_ns - ev.start_ns) / 1e6 || ev.threshold_ms || 0,
    elapsedAt: now,
  };
}

/* hang_sample: the latest stack and where it is. */
export function sampleFields(ev) {
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
  return fields;
}

/* hang_ended: the final state, the report's id and the heaviest stack's innermost frame. */
export function endedFields(ev, pid) {
  const inner = (ev.heaviest_stack || [])[0] || {};
  return {
    hang_id: ev.hang_id,
    pid,
    id: ev.report_id || null,
    state: 'ended',
    duration_ms: ev.duration_ms,
    function: inner.function || null,
    module: inner.module || null,
    ...appStateOf(ev),
    ...signatureOf(ev.signature),
    ...labelOf(ev.cause && ev.cause.label),
    live: true,
  };
}

/* How long the hang has lasted at now (performance.now()): its duration once ended, else the
 * last figure the app sent and the time since. */
export function elapsedMs(entry, now) {
  if (entry.state !== 'in_progress') return entry.duration_ms;
  return entry.elapsedBase + (entry.elapsedAt ? now - entry.elapsedAt : 0);
}

/* The list's groups, the one of the newest hang first: the hangs of one signature together,
 * newest first; a hang without one (in progress, or from before signatures) alone. Each
 * { key, signature, entries, count, listed, evicted, totalMs, lastWallMs, label }.
 * signatures (a Map, signature -> a group of GET /api/v1/signatures), when given, has the
 * store's counts: every hang of the signature, those on pages not loaded and those whose
 * reports the store's bound deleted ("evicted") too; listed is how many the page holds. */
export function groupHangs(entries, signatures) {
  const groups = new Map();
  for (const entry of newestFirst(entries)) {
    const key = entry.signature ? 'sig:' + entry.signature : entry.key;
    let group = groups.get(key);
    if (!group) {
      group = { key, signature: entry.signature || null, entries: [], count: 0, totalMs: 0,
        lastWallMs: entry.start_wall_ms || 0, label: entry.label || entry.function || null };
      groups.set(key, group);
    }
    group.entries.push(entry);
    group.count++;
    if (isFinite(entry.duration_ms)) group.totalMs += entry.duration_ms;
  }
  for (const group of groups.values()) {
    group.listed = group.count;
    group.evicted = 0;
    const known = group.signature && signatures ? signatures.get(group.signature) : null;
    // The store's counts were read at one moment: a hang the stream told of since is counted
    // by the page alone, until they are read again.
    if (!known || !(known.count >= group.count)) continue;
    group.count = known.count;
    group.totalMs = known.total_ms;
    group.evicted = known.evicted || 0;
    if (known.last_wall_ms > group.lastWallMs) group.lastWallMs = known.last_wall_ms;
  }
  return Array.from(groups.values());
}

/* "8 s ago", "3 min ago", "2 h ago": how long since a wall-clock time, at nowWallMs. */
export function fmtAgo(wallMs, nowWallMs) {
  const s = Math.max(0, Math.round((nowWallMs - wallMs) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

/* A group's line: "lock · image-loader ×14, 9.2 s in all, last 2 s ago", and when the page
 * lists fewer than it counts, how many it lists and how many have no report left:
 * "… (13 listed, 6 without a report)". */
export function groupLine(group, nowWallMs, fmtTotal) {
  const what = group.label || '(unknown function)';
  const listed = group.listed !== undefined ? group.listed : group.count;
  const cap = listed < group.count
    ? ' (' + listed + ' listed' + (group.evicted ? ', ' + group.evicted + ' without a report' : '') + ')'
    : '';
  return what + ' \u00d7' + group.count + ', ' + fmtTotal(group.totalMs) + ' in all, last ' +
    fmtAgo(group.lastWallMs, nowWallMs) + cap;
}

/* The list's order: newest first. */
export function newestFirst(entries) {
  return Array.from(entries.values()).sort((a, b) => (b.start_wall_ms || 0) - (a.start_wall_ms || 0));
}
