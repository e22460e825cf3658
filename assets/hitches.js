/*
 * Hitches, stalls below the hang threshold: their marks under the frame-time chart and the
 * detail one opens. The hitches and which one is selected are state.js's; a click on a mark
 * goes to main.js (onOpen), which selects it and shows hitchDetail in the detail pane.
 */
import { api } from './api.js';
import { byId, el, summaryItem } from './dom.js';
import { fmtDuration, fmtWall } from './format.js';
import { CHART_WINDOW_MS, addHitches, hitchList, latestTick, metricsIntervalMs, selectedHitchSeq } from './state.js';
import { hitchTree } from './trees.js';

export async function loadHitches() {
  const body = await api('/api/v1/hitches');
  addHitches(body.hitches || []);
}

/* A hitch's start on the app's wall clock, from the latest tick's pair of clocks. */
function hitchWallMs(hitch, tick) {
  return tick.wall_ms + (hitch.start_ns - tick.time_ns) / 1e6;
}

/* The marks of the last minute; onOpen(hitch) when one is clicked. */
export function renderHitchStrip(onOpen) {
  const strip = byId('hitch-strip');
  const tick = latestTick();
  if (!strip || !tick || typeof tick.time_ns !== 'number') return;
  const start = tick.wall_ms - CHART_WINDOW_MS;
  const marks = [];
  for (const hitch of hitchList()) {
    const at = hitchWallMs(hitch, tick);
    if (at < start || at > tick.wall_ms + metricsIntervalMs()) continue;
    const mark = el('button', 'hitch-mark' + (hitch.seq === selectedHitchSeq() ? ' selected' : ''));
    mark.type = 'button';
    mark.dataset.testid = 'hitch-mark';
    mark.dataset.seq = String(hitch.seq);
    mark.style.left = Math.min(100, ((at - start) / CHART_WINDOW_MS) * 100).toFixed(2) + '%';
    const label = 'Hitch of ' + fmtDuration(hitch.duration_ms) + (hitch.function ? ' in ' + hitch.function : '');
    mark.title = label;
    mark.setAttribute('aria-label', label);
    mark.addEventListener('click', () => onOpen(hitch));
    marks.push(mark);
  }
  strip.replaceChildren(...marks);
}

/* A hitch's detail: what it was and its heaviest stack, drawn by callTree (calltree.js's,
 * handed in by main.js). */
export function hitchDetail(hitch, callTree) {
  const root = el('div', 'hang-detail');
  root.dataset.testid = 'hitch-detail';
  root.dataset.seq = String(hitch.seq);
  const tick = latestTick();
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
