// Call trees turned over and filtered (assets/trees.js): bottom-up, "my code only" and a
// hitch's heaviest stack as a tree. Sample counts must be kept by every transformation.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isOthersCode } from '../../../assets/format.js';
import { bottomUp, heaviestChild, hitchTree, ownCodeTree } from '../../../assets/trees.js';

const APP = '/home/me/build/app';
const LIBC = '/usr/lib/x86_64-linux-gnu/libc.so.6';

function node(fn, module, count, children, extra) {
  return Object.assign({ function: fn, module, count, children: children || [] }, extra);
}

/* main (10) → work (8) → libc read (5) → app callback (3); work self 3; main self 2. */
function sampleTree() {
  const callback = node('on_data', APP, 3);
  const read = node('read', LIBC, 5, [callback]);
  const work = node('work', APP, 8, [read], { line: 12, file: 'app.c' });
  const main = node('main', APP, 10, [work]);
  return { count: 10, children: [main] };
}

/* name → [count, self, children's names] of every node, to compare at a glance. */
function flatten(root) {
  const out = {};
  (function walk(n, path) {
    const name = path + '/' + (n.function || '');
    out[name] = [n.count, n.self, n.children.map((c) => c.function)];
    for (const c of n.children) walk(c, name);
  })(root, '');
  return out;
}

test('bottomUp: roots are where samples ended, their children the callers', () => {
  const tree = bottomUp(sampleTree());
  assert.equal(tree.count, 10);
  // Heaviest first; ties in the order the top-down walk met them.
  assert.deepEqual(tree.children.map((c) => [c.function, c.count]),
    [['work', 3], ['on_data', 3], ['main', 2], ['read', 2]]);
  const onData = tree.children[1];
  assert.deepEqual(onData.children.map((c) => c.function), ['read']);
  assert.deepEqual(onData.children[0].children.map((c) => c.function), ['work']);
  assert.deepEqual(onData.children[0].children[0].children.map((c) => c.function), ['main']);
  assert.equal(tree.children.reduce((sum, c) => sum + c.count, 0), 10, 'every sample ends somewhere once');
  assert.equal(JSON.stringify(tree).includes('byKey'), false);
});

test('ownCodeTree: system frames leave, their callees move up, counts stay', () => {
  const tree = ownCodeTree(sampleTree());
  assert.deepEqual(flatten(tree), {
    '/(all samples)': [10, 0, ['main']],
    '/(all samples)/main': [10, 2, ['work']],
    '/(all samples)/main/work': [8, 5, ['on_data']], // read's own 2 samples count for work
    '/(all samples)/main/work/on_data': [3, 3, []],
  });
  const root = sampleTree();
  assert.equal(ownCodeTree(root), ownCodeTree(root), 'made once per tree');
});

test('ownCodeTree: two call sites of one function, one through libc, merge into one node', () => {
  const direct = node('helper', APP, 2, [], { line: 30 });
  const viaLibc = node('qsort', LIBC, 4, [node('helper', APP, 4, [], { line: 30 })]);
  const root = { count: 6, children: [node('main', APP, 6, [direct, viaLibc])] };
  const tree = ownCodeTree(root);
  const main = tree.children[0];
  assert.deepEqual(main.children.map((c) => [c.function, c.count, c.line]), [['helper', 6, 30]]);
});

test('ownCodeTree: by the report\'s "code" when it has one: lagscope\'s hook and the system leave, a private library stays', () => {
  // mousepad's own library under /usr/lib is the app's; the preload's g_main_loop_run hook is
  // lagscope's, though outside the system's folders.
  const PRIVATE = '/usr/lib/x86_64-linux-gnu/mousepad/libmousepad.so.0';
  const PRELOAD = '/opt/lagscope/lib/liblagscope-preload.so';
  const open = node('mousepad_file_open', PRIVATE, 4, [node('read', LIBC, 4, [], { code: 'system' })], { code: 'app' });
  const hook = node('g_main_loop_run', PRELOAD, 4, [open], { code: 'lagscope' });
  const root = { count: 4, children: [node('main', APP, 4, [hook], { code: 'app' })] };
  assert.deepEqual(flatten(ownCodeTree(root)), {
    '/(all samples)': [4, 0, ['main']],
    '/(all samples)/main': [4, 0, ['mousepad_file_open']],
    '/(all samples)/main/mousepad_file_open': [4, 4, []],
  });
  assert.equal(isOthersCode({ module: PRIVATE }), true, 'without "code": by its folder, as before');
  assert.equal(isOthersCode({ module: PRIVATE, code: 'app' }), false);
});

test('hitchTree: the heaviest stack, outermost caller first, every node with the hitch\'s samples', () => {
  const tree = hitchTree({ sample_count: 9, heaviest_stack: [
    { function: 'clock_gettime', module: LIBC }, { function: 'spin', module: APP }, { function: 'main', module: APP }] });
  assert.equal(tree.count, 9);
  const path = [];
  for (let n = tree; heaviestChild(n); n = heaviestChild(n)) path.push(heaviestChild(n));
  assert.deepEqual(path.map((n) => [n.function, n.count]), [['main', 9], ['spin', 9], ['clock_gettime', 9]]);
  assert.equal(path[2].self, 9);
  assert.equal(path[0].self, undefined);
  assert.equal(hitchTree({ sample_count: 4 }).count, 0, 'no stack: an empty tree');
  assert.equal(hitchTree({ heaviest_stack: [{ function: 'f' }] }).count, 1, 'at least one sample');
});
