/*
 * Hitches, stalls below the hang threshold: their marks under the frame-time chart and the
 * detail one opens.
 */
import { api } from './api.js';
import { app } from './app.js';
import { callTree } from './calltree.js';
import { clearSelectionMarks, selection, showDetail, summaryItem } from './detail.js';
import { byId, el } from './dom.js';
import { fmtDuration, fmtWall } from './format.js';
import { CHART_WINDOW_MS, metrics } from './metrics.js';
import { hitchTree } from './trees.js';

/* The hitch events the app keeps (GET /api/v1/hitches) and those streamed since, oldest first.
 * Each gets a mark on the time axis under the frame-time chart; a click opens its call tree. */
export const hitches = { list: [], selectedSeq: null };

/* As many as the app keeps (config.hitch_keep in its status). */
function hitchesKept() {
  return (app.status && app.status.config && app.status.config.hitch_keep) || 32;
}

export function addHitch(hitch) {
  if (typeof hitch.start_ns !== 'number' || hitches.list.some((h) => h.seq === hitch.seq)) return;
  hitches.list.push(hitch);
  hitches.list.sort((a, b) => a.start_ns - b.start_ns);
  const keep = hitchesKept();
  if (hitches.list.length > keep) hitches.list.splice(0, hitches.list.length - keep);
}

export async function loadHitches() {
  const body = await api('/api/v1/hitches');
  for (const hitch of body.hitches || []) addHitch(hitch);
  renderHitchStrip();
}

/* A hitch's start on the app's wall clock, from the latest tick's pair of clocks. */
function hitchWallMs(hitch, tick) {
  return tick.wall_ms + (hitch.start_ns - tick.time_ns) / 1e6;
}

export function renderHitchStrip() {
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
