/*
 * The hang list on the page: its items, "Load more", the live hangs' running times and the
 * header's HANG badge, and the stream's events about hangs. How entries merge is
 * hang-list.js's.
 */
import { ApiError, api } from './api.js';
import { app } from './app.js';
import { openHang, selectHang, selection, updateLiveDetail } from './detail.js';
import { byId, el, setText, toast } from './dom.js';
import { basename, fmtDuration, fmtWall, stateLabel } from './format.js';
import {
  FINAL_STATES, beganFields, elapsedMs, endedFields, hangKey, mergeHang, newestFirst, nextOffsetAfter,
  sampleFields, summaryFields,
} from './hang-list.js';

const HANG_PAGE = 20;

/* One entry per hang, from the stored list and from live events (hang-list.js). */
export const hangs = {
  entries: new Map(),   // key -> entry
  total: 0,             // the store's count, from the last page
  nextOffset: 0,        // where the next "more" page starts
  loadingMore: false,
};

/* Merges what is known about one hang into its entry, and shows it. */
function upsertHang(key, fields) {
  const { entry, isNew } = mergeHang(hangs.entries, key, fields);
  renderHangItem(entry);
  if (isNew) placeHangItems();
  updateHangCount();
  return entry;
}

export function fromSummary(summary) {
  const entry = upsertHang(hangKey(summary.pid, summary.hang_id), summaryFields(summary));
  if (entry.state === 'in_progress' && !entry.elapsedAt) {
    entry.elapsedBase = summary.duration_ms || 0;
    entry.elapsedAt = performance.now();
  }
}

export async function loadHangs(reset) {
  const offset = reset ? 0 : hangs.nextOffset;
  const page = await api('/api/v1/hangs?limit=' + HANG_PAGE + '&offset=' + offset);
  hangs.total = page.total;
  hangs.nextOffset = nextOffsetAfter(hangs.nextOffset, offset, page.hangs.length, reset);
  for (const summary of page.hangs) fromSummary(summary);
  updateHangCount();
  return page;
}

export async function loadMoreHangs() {
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
  newestFirst(hangs.entries).forEach((entry, i) => {
    if (list.children[i] !== entry.node) list.insertBefore(entry.node, list.children[i] || null);
  });
}

export function elapsedOf(entry) {
  return elapsedMs(entry, performance.now());
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

export function startLiveTimer() {
  if (!liveTimer) liveTimer = setInterval(tickLiveHangs, 100);
}

// Stream events about hangs.
export function onHangBegan(ev) {
  const appName = app.status && app.status.app && app.status.app.name;
  const entry = upsertHang(hangKey(app.pid, ev.hang_id), beganFields(ev, app.pid, appName, performance.now()));
  showHangBadge(true, entry.elapsedBase);
  startLiveTimer();
}

export function onHangSample(ev) {
  const key = hangKey(app.pid, ev.hang_id);
  const entry = hangs.entries.get(key) || upsertHang(key, { hang_id: ev.hang_id, pid: app.pid, state: 'in_progress', live: true });
  if (FINAL_STATES.has(entry.state)) return;
  upsertHang(key, sampleFields(ev));
  if (typeof ev.elapsed_ms === 'number') {
    entry.elapsedBase = ev.elapsed_ms;
    entry.elapsedAt = performance.now();
  }
  startLiveTimer();
  if (selection.kind === 'hang' && selection.key === key) updateLiveDetail(entry);
}

export function onHangEnded(ev) {
  const key = hangKey(app.pid, ev.hang_id);
  const entry = upsertHang(key, endedFields(ev, app.pid));
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
