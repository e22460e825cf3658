// The hang list's merge (assets/hang-list.js): entries from stored pages and from the stream's
// events become one entry per hang, and a hang that ended stays ended.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  beganFields, elapsedMs, endedFields, fmtAgo, groupHangs, groupLine, hangKey, mergeHang, newestFirst,
  nextOffsetAfter, sampleFields, summaryFields,
} from '../../../assets/hang-list.js';

const PID = 4242;

function summary(fields) {
  return Object.assign({ id: '20240405T101112.123Z-4242-1', hang_id: 1, pid: PID, app: 'demo', state: 'ended',
    start_wall_ms: 1712311872123, duration_ms: 640, samples: 61, function: 'demo_busy_spin',
    module: '/bin/demo' }, fields);
}

function merge(entries, fields) {
  return mergeHang(entries, hangKey(fields.pid, fields.hang_id), fields);
}

test('a page and then the stream: the live hang ends in the entry the page made', () => {
  const entries = new Map();
  const page = summary({ state: 'in_progress', duration_ms: 300, samples: 12 });
  assert.equal(merge(entries, summaryFields(page)).isNew, true);
  const { entry, isNew } = merge(entries, endedFields({ hang_id: 1, report_id: page.id, duration_ms: 910,
    heaviest_stack: [{ function: 'demo_now_ns', module: '/bin/demo' }], cause: { label: 'cpu · demo_now_ns' } }, PID));
  assert.equal(isNew, false);
  assert.equal(entries.size, 1);
  assert.equal(entry.state, 'ended');
  assert.equal(entry.duration_ms, 910);
  assert.equal(entry.id, page.id);
  assert.equal(entry.function, 'demo_now_ns');
  assert.equal(entry.label, 'cpu · demo_now_ns');
  assert.equal(entry.samples, 12, 'what the event does not say stays as the page said');
});

test('an older page seen after the end does not undo it', () => {
  const entries = new Map();
  merge(entries, endedFields({ hang_id: 1, report_id: 'r1', duration_ms: 910 }, PID));
  const { entry } = merge(entries, summaryFields(summary({ id: 'r1', state: 'in_progress', duration_ms: 300, samples: 12 })));
  assert.equal(entry.state, 'ended');
  assert.equal(entry.duration_ms, 910);
  assert.equal(entry.samples, 12, 'the rest of the older copy is still taken');
  // A final state may follow a final state: the store may find the app was killed.
  merge(entries, summaryFields(summary({ id: 'r1', state: 'ended_by_termination', duration_ms: 2000 })));
  assert.equal(entry.state, 'ended_by_termination');
  assert.equal(entry.duration_ms, 2000);
});

test('the stream first and then a page: the page gives the live hang its report id', () => {
  const entries = new Map();
  const began = beganFields({ hang_id: 3, start_wall_ms: 1000, time_ns: 5260e6, start_ns: 5000e6 }, PID, 'demo', 100);
  const { entry } = merge(entries, began);
  assert.equal(entry.id, null);
  assert.equal(entry.state, 'in_progress');
  assert.equal(entry.elapsedBase, 260);
  assert.equal(entry.elapsedAt, 100);
  merge(entries, summaryFields(summary({ id: 'r3', hang_id: 3, state: 'in_progress', start_wall_ms: 1000 })));
  assert.equal(entries.size, 1);
  assert.equal(entry.id, 'r3');
  assert.equal(entry.live, true, 'still the stream\'s live entry');
});

test('one hang id in two launches is two hangs', () => {
  const entries = new Map();
  merge(entries, summaryFields(summary({ pid: 100, hang_id: 1, id: 'old' })));
  merge(entries, summaryFields(summary({ pid: 200, hang_id: 1, id: 'new' })));
  assert.equal(entries.size, 2);
  assert.equal(entries.get(hangKey(100, 1)).id, 'old');
  assert.equal(entries.get(hangKey(200, 1)).id, 'new');
});

test('a label only when the report or the event has one', () => {
  assert.equal('label' in summaryFields(summary({ label: '' })), false);
  assert.equal('label' in summaryFields(summary({ label: null })), false);
  assert.equal(summaryFields(summary({ label: 'lock · keeper' })).label, 'lock · keeper');
  assert.equal('label' in endedFields({ hang_id: 1 }, PID), false);
});

test('hang_began: an event without the clocks falls back to the threshold', () => {
  assert.equal(beganFields({ hang_id: 1, threshold_ms: 250 }, PID, 'demo', 0).elapsedBase, 250);
  assert.equal(beganFields({ hang_id: 1, time_ns: 7, start_ns: 7 }, PID, 'demo', 0).elapsedBase, 0);
});

test('hang_sample: the list names the innermost frame that has a name', () => {
  const vdso = { address: '0x7ffd1000', module: 'linux-vdso.so.1' };
  const named = sampleFields({ hang_id: 1, sample_count: 9,
    stack: [vdso, { function: 'clock_gettime', module: '/usr/lib/libc.so.6' }] });
  assert.equal(named.function, 'clock_gettime');
  assert.equal(named.module, '/usr/lib/libc.so.6');
  assert.equal(named.samples, 9);
  assert.equal(named.latestStack.length, 2);
  const unnamed = sampleFields({ hang_id: 1, stack: [vdso] });
  assert.equal(unnamed.function, null);
  assert.equal(unnamed.module, 'linux-vdso.so.1');
  assert.equal('samples' in unnamed, false);
  assert.equal('function' in sampleFields({ hang_id: 1 }), false, 'no stack: nothing said about where');
});

test('a sample merged after the end changes where, not the state', () => {
  const entries = new Map();
  const { entry } = merge(entries, endedFields({ hang_id: 1, duration_ms: 500 }, PID));
  mergeHang(entries, hangKey(PID, 1), sampleFields({ hang_id: 1, stack: [{ function: 'late' }] }));
  assert.equal(entry.state, 'ended');
  assert.equal(entry.duration_ms, 500);
});

test('"Load more" pages on; a refresh of the newest page never moves it back', () => {
  assert.equal(nextOffsetAfter(0, 0, 20, true), 20);
  assert.equal(nextOffsetAfter(20, 20, 20, false), 40);
  assert.equal(nextOffsetAfter(40, 40, 7, false), 47);
  assert.equal(nextOffsetAfter(47, 0, 20, true), 47);
  assert.equal(nextOffsetAfter(3, 0, 5, true), 5, 'a refresh that found more moves it on');
});

test('elapsedMs: a live hang counts on from the last figure, an ended one is its duration', () => {
  assert.equal(elapsedMs({ state: 'in_progress', elapsedBase: 300, elapsedAt: 1000 }, 1450), 750);
  assert.equal(elapsedMs({ state: 'in_progress', elapsedBase: 300, elapsedAt: 0 }, 1450), 300);
  assert.equal(elapsedMs({ state: 'ended', duration_ms: 640, elapsedBase: 300, elapsedAt: 1000 }, 9999), 640);
});

test('newestFirst: by start time, an entry without one last', () => {
  const entries = new Map();
  merge(entries, summaryFields(summary({ hang_id: 1, start_wall_ms: 2000 })));
  merge(entries, summaryFields(summary({ hang_id: 2, start_wall_ms: 3000 })));
  merge(entries, { hang_id: 9, pid: PID }); // a sample's hang, not yet listed: no start time
  merge(entries, summaryFields(summary({ hang_id: 3, start_wall_ms: 1000 })));
  assert.deepEqual(newestFirst(entries).map((e) => e.hang_id), [2, 1, 3, 9]);
});

// Grouping by signature (issue 35, section 2): "lock · image-loader ×14, 9.2 s in all, last 2 s ago".
test('hangs of one signature form one group, newest first; others stay alone', () => {
  const entries = new Map();
  const SIG = '0123456789abcdef', OTHER = 'fedcba9876543210';
  for (let i = 1; i <= 14; i++)
    merge(entries, summaryFields(summary({ hang_id: i, id: 'r-' + i, signature: SIG, label: 'lock · image-loader',
      start_wall_ms: 1000000 + i * 1000, duration_ms: 657.142857 })));
  merge(entries, summaryFields(summary({ hang_id: 20, signature: OTHER, label: 'cpu · parse', start_wall_ms: 1005500,
    duration_ms: 300 })));
  merge(entries, summaryFields(summary({ hang_id: 21, start_wall_ms: 900000, duration_ms: 400 }))); // before signatures
  merge(entries, summaryFields(summary({ hang_id: 22, signature: 'not hex!', start_wall_ms: 800000 })));
  merge(entries, beganFields({ hang_id: 30, time_ns: 3e8, start_ns: 0, start_wall_ms: 1020000 }, PID, 'demo', 0));
  const groups = groupHangs(entries);
  assert.deepEqual(groups.map((g) => g.count), [1, 14, 1, 1, 1]);
  assert.equal(groups[0].entries[0].hang_id, 30); // the live one, newest, alone until it ends
  const lock = groups[1];
  assert.equal(lock.signature, SIG);
  assert.deepEqual(lock.entries.map((e) => e.hang_id), [14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  assert.equal(lock.lastWallMs, 1014000);
  assert.ok(Math.abs(lock.totalMs - 9200) < 1e-3);
  const line = groupLine(lock, 1016000, (ms) => (ms / 1000).toFixed(1) + ' s');
  assert.equal(line, 'lock · image-loader \u00d714, 9.2 s in all, last 2 s ago');
  assert.equal(groups[2].signature, OTHER);
  assert.equal(groups[4].signature, null); // a signature that is not one is none
});

test('a hang that ends joins its signature\'s group', () => {
  const entries = new Map();
  const SIG = '0123456789abcdef';
  merge(entries, summaryFields(summary({ hang_id: 1, signature: SIG, start_wall_ms: 1000 })));
  merge(entries, beganFields({ hang_id: 2, time_ns: 3e8, start_ns: 0, start_wall_ms: 2000 }, PID, 'demo', 0));
  assert.equal(groupHangs(entries).length, 2);
  merge(entries, endedFields({ hang_id: 2, report_id: 'r-2', duration_ms: 500, signature: SIG }, PID));
  const groups = groupHangs(entries);
  assert.equal(groups.length, 1);
  assert.equal(groups[0].count, 2);
});

test('a group counts every hang of its signature, not only the loaded ones, and says how many it lists', () => {
  // 13 of the signature's 26 hangs loaded (a page of 20 and the stream); the store counts 26,
  // 6 of them without a report (evicted by its bound): /api/v1/signatures' group.
  const entries = new Map();
  const SIG = '0123456789abcdef';
  for (let i = 1; i <= 13; i++)
    merge(entries, summaryFields(summary({ hang_id: i, id: 'r-' + i, signature: SIG, label: 'sleep · nap',
      start_wall_ms: 1000000 + i * 1000, duration_ms: 281.5 })));
  const signatures = new Map([[SIG, { signature: SIG, count: 26, reports: 20, evicted: 6, total_ms: 7300,
    last_wall_ms: 1013000 }]]);
  const [group] = groupHangs(entries, signatures);
  assert.equal(group.count, 26);
  assert.equal(group.listed, 13);
  assert.equal(group.evicted, 6);
  assert.ok(Math.abs(group.totalMs - 7300) < 1e-3);
  const line = groupLine(group, 1015000, (ms) => (ms / 1000).toFixed(1) + ' s');
  assert.equal(line, 'sleep · nap \u00d726, 7.3 s in all, last 2 s ago (13 listed, 6 without a report)');
  // A hang the stream told of after the store's counts were read: the loaded ones are not undercounted.
  merge(entries, endedFields({ hang_id: 40, report_id: 'r-40', duration_ms: 500, signature: SIG }, PID));
  const small = new Map([[SIG, { signature: SIG, count: 13, reports: 13, evicted: 0, total_ms: 3659.5 }]]);
  const [later] = groupHangs(entries, small);
  assert.equal(later.count, 14);
  assert.ok(Math.abs(later.totalMs - 4159.5) < 1e-3);
  assert.equal(groupLine(later, 1015000, (ms) => (ms / 1000).toFixed(1) + ' s'), 'sleep · nap \u00d714, 4.2 s in all, last 2 s ago');
});

test('how long ago', () => {
  assert.equal(fmtAgo(0, 2000), '2 s ago');
  assert.equal(fmtAgo(5000, 0), '0 s ago'); // a clock behind: never "in the future"
  assert.equal(fmtAgo(0, 125000), '2 min ago');
  assert.equal(fmtAgo(0, 7200000), '2 h ago');
  assert.equal(fmtAgo(0, 2 * 86400000), '2 d ago');
});

test('a hang in the start-up is marked so, from a page, the stream\'s began and its end', () => {
  assert.equal(summaryFields(summary({ app_state: 'startup' })).startup, true);
  assert.equal(summaryFields(summary({ app_state: 'running' })).startup, undefined);
  assert.equal(summaryFields(summary({ app_state: 42 })).startup, undefined, 'only the word says it');
  assert.equal(beganFields({ hang_id: 1, app_state: 'startup', time_ns: 9, start_ns: 1 }, PID, 'app', 0).startup, true);
  assert.equal(endedFields({ hang_id: 1, app_state: 'startup', duration_ms: 300 }, PID).startup, true);
  assert.equal(endedFields({ hang_id: 1, duration_ms: 300 }, PID).startup, undefined);
});

test('a report or event written before the rename says "phase": still read', () => {
  assert.equal(summaryFields(summary({ phase: 'startup' })).startup, true);
  assert.equal(summaryFields(summary({ phase: 'running' })).startup, undefined);
  assert.equal(beganFields({ hang_id: 1, phase: 'startup', time_ns: 9, start_ns: 1 }, PID, 'app', 0).startup, true);
  assert.equal(endedFields({ hang_id: 1, phase: 'startup', duration_ms: 300 }, PID).startup, true);
  // The viewer's API copies the stored report's key under the new name; a null there is no
  // start-up, whatever an old key beside it says.
  assert.equal(summaryFields(summary({ app_state: null, phase: 'startup' })).startup, undefined);
  assert.equal(summaryFields(summary({ app_state: 'running', phase: 'startup' })).startup, undefined);
});
