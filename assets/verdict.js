/*
 * The verdict at the top of a hang's detail: the cause's kind and sentence, how many samples
 * it explains, the phases of a hang told in more than one (a strip on the hang's timeline),
 * and for a lock the chain of threads that held it (or a deadlock's cycle). The strip's
 * geometry, phaseSegments, is pure: node tests it (tests/unit/viewer/verdict.test.mjs).
 */
import { el } from './dom.js';
import { NBSP, fmtDuration, isOthersCode, sharePercent } from './format.js';

/* The report's cause, read first: its kind, the sentence, how many samples it explains, the
 * other kinds seen, and for a lock the chain of threads that held it. A thread's stack is drawn
 * by stackList (threads.js's, handed in by main.js). */
export function verdictView(report, stackList) {
  const cause = report.cause;
  const box = el('section', 'verdict');
  box.dataset.testid = 'verdict';
  box.dataset.kind = cause.kind || 'unknown';
  const head = el('div', 'verdict-head', kindBadge(cause.kind), shareText(cause.share), otherCauses(cause));
  const summary = el('p', 'verdict-summary', cause.summary || 'No verdict: no sample was classified.');
  summary.dataset.testid = 'verdict-summary';
  box.append(head, summary);
  const phases = phasesView(cause.phases, report.duration_ms);
  if (phases) box.append(phases);
  if (cause.owner) box.append(chainView(report, stackList));
  else if (Array.isArray(cause.cycle) && cause.cycle.length) box.append(cycleView(report, stackList));
  return box;
}

/* ---- the phases strip ---- */

// The kinds one stack can have: LAGSCOPE__CAUSES's with stack 1 (core/cause/cause.h;
// tests/unit/viewer/causes.test.mjs checks).
const PHASE_KINDS = new Set(['io', 'cpu', 'lock', 'sleep', 'wait', 'idle', 'unknown']);
export const PHASES_MAX = 12; // more is not a report's (a phase told is a fifth of the hang's time or more)

function finite(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

function clampPercent(value) {
  return Math.min(100, Math.max(0, Math.round(value * 1000) / 1000));
}

/* A phase as the strip reads it, or null when it cannot be placed: from_ms and to_ms numbers,
 * to_ms not before from_ms. */
function readPhase(phase) {
  if (!phase || typeof phase !== 'object') return null;
  const from = phase.from_ms;
  const to = phase.to_ms;
  if (!finite(from) || !finite(to) || to < from) return null;
  const text = (v) => (typeof v === 'string' && v ? v : null);
  return {
    kind: PHASE_KINDS.has(phase.kind) ? phase.kind : 'unknown',
    from_ms: from,
    to_ms: to,
    share: finite(phase.share) ? Math.min(1, Math.max(0, phase.share)) : null,
    syscall: text(phase.syscall),
    target: text(phase.target),
    function: text(phase.function),
  };
}

/* The strip's segments, in time order: each phase that can be placed, at most PHASES_MAX (the
 * first ones), with left and width in percent of 0..durationMs, clamped to [0, 100]. Without a
 * usable duration the latest phase's end stands for it. hidden: the placeable phases left out.
 * Pure. */
export function phaseSegments(phases, durationMs) {
  if (!Array.isArray(phases)) return { segments: [], hidden: 0 };
  const read = phases.map(readPhase).filter(Boolean);
  read.sort((a, b) => a.from_ms - b.from_ms); // stable: phases starting together keep their order
  const span = finite(durationMs) && durationMs > 0 ? durationMs : read.reduce((m, p) => Math.max(m, p.to_ms), 0);
  if (!(span > 0)) return { segments: [], hidden: 0 };
  const segments = read.slice(0, PHASES_MAX).map((p) => {
    const left = clampPercent((p.from_ms / span) * 100);
    const right = clampPercent((p.to_ms / span) * 100);
    const timeMs = p.share !== null && finite(durationMs) && durationMs > 0 ? p.share * durationMs : null;
    return Object.assign(p, { left, width: Math.max(0, right - left), time_ms: timeMs });
  });
  return { segments, hidden: read.length - segments.length };
}

/* "read() pipe:[2495454]", "demo_busy_spin", or nothing. */
function phaseWhat(segment) {
  if (segment.syscall) return segment.syscall + '()' + (segment.target ? ' ' + segment.target : '');
  return segment.function || '';
}

/* "io read() pipe:[…] 182 ms (23 %)", for the bar's label and a segment's tooltip. */
function phaseWords(segment) {
  const what = phaseWhat(segment);
  const share = segment.share === null ? '' : ' (' + sharePercent(segment.share).replace(NBSP, ' ') + ')';
  return segment.kind + (what ? ' ' + what : '') + ' ' + fmtDuration(segment.time_ms) + share;
}

/* The strip under the sentence, for a hang told in two phases or more; null otherwise. */
function phasesView(phases, durationMs) {
  const { segments, hidden } = phaseSegments(phases, durationMs);
  if (segments.length < 2) return null;
  const box = el('div', 'phases');
  box.dataset.testid = 'verdict-phases';
  box.append(phaseBar(segments, durationMs), phaseAxis(durationMs), phaseLegend(segments, hidden));
  return box;
}

function phaseBar(segments, durationMs) {
  const bar = el('div', 'phase-bar');
  bar.dataset.testid = 'phase-bar';
  bar.setAttribute('role', 'img');
  const over = finite(durationMs) && durationMs > 0 ? ' over ' + fmtDuration(durationMs) : '';
  bar.setAttribute('aria-label', segments.length + ' phases' + over + ': ' + segments.map(phaseWords).join(', then '));
  for (const s of segments) bar.append(phaseSegment(s));
  return bar;
}

/* "0 ms" under the bar's start, the hang's duration under its end. */
function phaseAxis(durationMs) {
  if (!finite(durationMs) || durationMs <= 0) return null;
  const axis = el('div', 'phase-axis', el('span', null, '0 ms'), el('span', null, fmtDuration(durationMs)));
  axis.setAttribute('aria-hidden', 'true');
  return axis;
}

/* One segment: in the bar's left half it grows right from its start, in the right half left
 * from its end, so that its minimum width (viewer.css) never runs out of the bar. */
function phaseSegment(segment) {
  const node = el('span', 'phase-seg');
  markPhase(node, segment);
  node.title = phaseWords(segment) + ', ' + fmtDuration(segment.from_ms) + '–' + fmtDuration(segment.to_ms);
  node.style.width = segment.width.toFixed(3) + '%';
  if (segment.left + segment.width / 2 <= 50) node.style.left = segment.left.toFixed(3) + '%';
  else node.style.right = Math.max(0, 100 - segment.left - segment.width).toFixed(3) + '%';
  return node;
}

function phaseLegend(segments, hidden) {
  const list = el('ol', 'phase-legend');
  list.dataset.testid = 'phase-legend';
  for (const s of segments) {
    const item = el('li', 'phase-item', el('span', 'phase-swatch'), el('span', 'phase-kind', s.kind));
    markPhase(item, s);
    const what = phaseWhat(s);
    if (what) item.append(el('span', 'phase-what mono', what));
    item.append(el('span', 'phase-time', fmtDuration(s.time_ms)));
    if (s.share !== null) item.append(el('span', 'phase-share muted', sharePercent(s.share)));
    list.append(item);
  }
  if (hidden > 0) list.append(el('li', 'phase-more muted', 'and ' + hidden + ' more'));
  return list;
}

function markPhase(node, segment) {
  node.dataset.testid = 'phase';
  node.dataset.kind = segment.kind;
  if (segment.syscall) node.dataset.syscall = segment.syscall;
  if (segment.function) node.dataset.function = segment.function;
}

/* ---- badges and the lock chain ---- */

function kindBadge(kind) {
  const badge = el('span', 'kind-badge', kind || 'unknown');
  badge.dataset.kind = kind || 'unknown';
  badge.dataset.testid = 'kind-badge';
  return badge;
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
function chainView(report, stackList) {
  const list = el('ol', 'chain');
  list.dataset.testid = 'verdict-chain';
  const main = mainThreadOf(report);
  list.append(threadCard(main, report.cause, true, stackList));
  const drawn = new Map([[main.tid, main.name]]);
  for (let c = report.cause; c && c.owner; c = c.owner.cause) {
    list.append(chainLink(c));
    if (drawn.has(c.owner.tid)) {
      list.append(backLink(c.owner, c.owner.tid === main.tid));
      break;
    }
    drawn.set(c.owner.tid, c.owner.name);
    list.append(threadCard(c.owner, c.owner.cause, false, stackList));
  }
  return list;
}

/* A deadlock whose owners were not recorded: its cycle's threads, from the capture. */
function cycleView(report, stackList) {
  const list = el('ol', 'chain');
  list.dataset.testid = 'verdict-chain';
  const byTid = new Map((report.threads || []).map((t) => [t.tid, t]));
  const cycle = report.cause.cycle;
  cycle.forEach((tid, i) => {
    const thread = byTid.get(tid) || { tid, name: null, stack: [] };
    if (i) list.append(chainLink({}));
    list.append(threadCard(thread, null, tid === report.main_thread_tid, stackList));
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
function threadCard(thread, cause, isMain, stackList) {
  const card = el('li', 'chain-card' + (isMain ? ' main' : ''));
  card.dataset.testid = isMain ? 'chain-main' : 'chain-owner';
  card.dataset.tid = String(thread.tid);
  card.dataset.name = thread.name || '';
  card.append(el('div', 'chain-who',
    isMain ? el('span', 'main-badge', 'MAIN') : null,
    el('span', 'thread-name', thread.name || (isMain ? 'main thread' : '(unnamed)')),
    el('span', 'muted', 'tid ' + thread.tid)));
  if (cause) card.append(doingLine(cause, thread.stack));
  card.append(cardStack(thread.stack || [], stackList));
  return card;
}

/* "lock · futex() · in demo_chain_a": its kind, the call, the target, its own code. */
function doingLine(cause, stack) {
  const kind = cause.kind === 'deadlock' ? 'lock' : cause.kind;
  const line = el('div', 'chain-doing', kindBadge(kind));
  if (cause.syscall) line.append(el('span', 'mono', cause.syscall + '()'));
  if (cause.target) line.append(el('span', 'chain-target mono', cause.target));
  const own = (stack || []).find((f) => f.function && !isOthersCode(f));
  if (own) line.append(el('span', 'muted', 'in ', el('span', 'mono', own.function)));
  return line;
}

function cardStack(stack, stackList) {
  if (!stack.length) return el('p', 'muted chain-nostack', 'no stack captured');
  const details = el('details', 'chain-stack');
  details.append(el('summary', null, 'Stack · ' + stack.length + (stack.length === 1 ? ' frame' : ' frames')), stackList(stack));
  return details;
}
