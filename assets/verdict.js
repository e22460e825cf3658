/*
 * The verdict at the top of a hang's detail: the cause's kind and sentence, how many samples
 * it explains, and for a lock the chain of threads that held it (or a deadlock's cycle).
 */
import { el } from './dom.js';
import { isSystemLibrary, sharePercent } from './format.js';

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
  if (cause.owner) box.append(chainView(report, stackList));
  else if (Array.isArray(cause.cycle) && cause.cycle.length) box.append(cycleView(report, stackList));
  return box;
}

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
  const own = (stack || []).find((f) => f.function && !isSystemLibrary(f.module));
  if (own) line.append(el('span', 'muted', 'in ', el('span', 'mono', own.function)));
  return line;
}

function cardStack(stack, stackList) {
  if (!stack.length) return el('p', 'muted chain-nostack', 'no stack captured');
  const details = el('details', 'chain-stack');
  details.append(el('summary', null, 'Stack · ' + stack.length + (stack.length === 1 ? ' frame' : ' frames')), stackList(stack));
  return details;
}
