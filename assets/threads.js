/*
 * Threads and stacks: every thread of a report or a capture, idle pools grouped, each with
 * its stack numbered like a debugger's backtrace.
 */
import { el } from './dom.js';
import { basename, fmtPercent, frameLocation, frameName } from './format.js';

const THREAD_STATES = { R: 'running', S: 'sleeping', D: 'disk wait', T: 'stopped', t: 'traced', Z: 'zombie', I: 'idle', X: 'dead' };
const WALK_NOTES = {
  truncated: 'stack cut at 128 frames',
  bad_frame: 'walk stopped at an unreadable frame',
  no_reply: 'the thread did not answer the capture',
  signal_blocked: 'the thread blocks lagscope\'s capture signal: its stack could not be taken while it ran',
  exited: 'the thread exited during the capture',
  own: 'one of lagscope\'s threads, never stopped',
};

/* Every thread, the main one first and open, the others folded. */
export function threadList(threads, mainTid) {
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
    const key = [thread.name, thread.state, thread.walk, (thread.stack || []).map(frameName).join(';'),
      (thread.async_stack || []).map(frameName).join(';')].join('|');
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
  // A Swift task's logical callers (Darwin, where a frame was async): the physical stack above
  // shows the executor; these are who awaited.
  if ((thread.async_stack || []).length) {
    details.append(el('p', 'walk-note', 'the Swift task\'s callers (async, by await):'));
    details.append(stackList(thread.async_stack));
  }
  item.append(details);
  return item;
}

/* Frames innermost first, numbered like a debugger's backtrace. */
export function stackList(stack) {
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
