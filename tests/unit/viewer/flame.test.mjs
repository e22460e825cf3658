// The flame graph's geometry (assets/flame.js): where each frame's rectangle goes, zoomed or
// not, and which one is under the pointer.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FLAME_ROW, flameHit, flamePath, indexFlame, layoutFlame } from '../../../assets/flame.js';

/* all (10): a (6) [a1 (3), a2 (3)], b (4) [b1 (1)] */
function sampleTree() {
  const a1 = { function: 'a1', count: 3, children: [] };
  const a2 = { function: 'a2', count: 3, children: [] };
  const b1 = { function: 'b1', count: 1, children: [] };
  const a = { function: 'a', count: 6, children: [a1, a2] };
  const b = { function: 'b', count: 4, children: [b1] };
  const root = { count: 10, children: [a, b] };
  return { root, a, b, a1, a2, b1 };
}

/* The rectangles as [name, depth, x, w, dim], to compare at a glance. */
function shape(rects) {
  return rects.map((r) => [r.node.function || 'all', r.depth, r.x, r.w, r.dim]);
}

test('unzoomed: widths are shares of the samples, children left to right under their parent', () => {
  const { root } = sampleTree();
  assert.deepEqual(shape(layoutFlame([root], 100)), [
    ['all', 0, 0, 100, false],
    ['a', 1, 0, 60, false],
    ['a1', 2, 0, 30, false],
    ['a2', 2, 30, 30, false],
    ['b', 1, 60, 40, false],
    ['b1', 2, 60, 10, false], // b's own samples leave the rest of its width empty
  ]);
});

test('zoomed to a frame: its callers span the width, dimmed; its subtree fills the width', () => {
  const { root, a, a1 } = sampleTree();
  const { parents } = indexFlame(root);
  assert.deepEqual(flamePath(a, parents), [root, a]);
  assert.deepEqual(shape(layoutFlame(flamePath(a, parents), 200)), [
    ['all', 0, 0, 200, true],
    ['a', 1, 0, 200, false],
    ['a1', 2, 0, 100, false],
    ['a2', 2, 100, 100, false],
  ]);
  assert.deepEqual(shape(layoutFlame(flamePath(a1, parents), 50)), [
    ['all', 0, 0, 50, true],
    ['a', 1, 0, 50, true],
    ['a1', 2, 0, 50, false],
  ]);
});

test('a frame narrower than half a pixel is left out with its callees, its room kept', () => {
  const tiny = { function: 'tiny', count: 1, children: [{ function: 'deeper', count: 1, children: [] }] };
  const big = { function: 'big', count: 999, children: [] };
  const root = { count: 1000, children: [tiny, big] };
  const rects = layoutFlame([root], 400); // tiny would be 0.4 px wide
  assert.deepEqual(shape(rects), [
    ['all', 0, 0, 400, false],
    ['big', 1, 0.4, 399.6, false],
  ]);
});

test('no child is wider than its parent, nor starts outside it', () => {
  const { root } = sampleTree();
  const rects = layoutFlame([root], 333);
  const { parents } = indexFlame(root);
  const byNode = new Map(rects.map((r) => [r.node, r]));
  for (const r of rects) {
    const parent = byNode.get(parents.get(r.node));
    if (!parent) continue;
    assert.equal(r.depth, parent.depth + 1);
    assert.ok(r.x >= parent.x - 1e-9 && r.x + r.w <= parent.x + parent.w + 1e-9, r.node.function);
  }
});

test('indexFlame: parents and the deepest level, for the path and the canvas height', () => {
  const { root, a, a2 } = sampleTree();
  const { parents, maxDepth } = indexFlame(root);
  assert.equal(maxDepth, 2);
  assert.equal(parents.get(a2), a);
  assert.equal(parents.get(a), root);
  assert.equal(parents.has(root), false);
  assert.equal(indexFlame({ count: 0, children: [] }).maxDepth, 0);
});

test('flameHit: the rectangle under the pointer, by row and by x', () => {
  const { root, a, b, a2, b1 } = sampleTree();
  const rects = layoutFlame([root], 100);
  const row = (depth) => depth * FLAME_ROW + FLAME_ROW / 2;
  assert.equal(flameHit(rects, 5, row(0)).node, root);
  assert.equal(flameHit(rects, 59.9, row(1)).node, a);
  assert.equal(flameHit(rects, 60, row(1)).node, b, 'a rectangle\'s right edge is its neighbour\'s');
  assert.equal(flameHit(rects, 30, row(2)).node, a2);
  assert.equal(flameHit(rects, 65, row(2)).node, b1);
  assert.equal(flameHit(rects, 75, row(2)), null, 'b\'s own samples: nothing below');
  assert.equal(flameHit(rects, 5, row(3)), null);
  assert.equal(flameHit(rects, 100, row(0)), null);
});
