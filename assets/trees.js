/*
 * Call trees turned into other call trees, pure (no DOM) and so tested by node
 * (tests/unit/viewer/trees.test.mjs): bottom-up, "my code only", a hitch's stack as a tree.
 */
import { isOthersCode } from './format.js';

function childSum(node) {
  let sum = 0;
  for (const child of node.children || []) sum += child.count;
  return sum;
}

/* Two frames are one node when they are one function of one module (one address without a
 * symbol); withLine also keeps a caller's call sites apart, as the report's tree does. */
function frameKey(frame, withLine) {
  const key = (frame.module || '') + '|' + (frame.function || frame.address || '');
  return withLine && frame.line ? key + '|' + frame.line : key;
}

function frameCopy(frame) {
  const copy = { count: 0, self: 0, children: [] };
  for (const field of ['function', 'module', 'address', 'module_offset', 'file', 'line']) {
    if (frame[field] !== undefined) copy[field] = frame[field];
  }
  return copy;
}

/* The child of parent that frame merges into, made when missing. A merged frame seen at
 * another line keeps no line: it would name only one of them. */
function childFor(parent, frame, withLine) {
  if (!parent.byKey) parent.byKey = new Map();
  const key = frameKey(frame, withLine);
  let child = parent.byKey.get(key);
  if (!child) {
    child = frameCopy(frame);
    parent.byKey.set(key, child);
    parent.children.push(child);
  } else if (child.line !== frame.line || child.file !== frame.file) {
    delete child.line;
    delete child.file;
  }
  return child;
}

/* Heaviest first, as in the report; byKey is only for building. */
function finishTree(node) {
  delete node.byKey;
  node.children.sort((a, b) => b.count - a.count);
  for (const child of node.children) finishTree(child);
  return node;
}

function treeTop(root) {
  return { function: '(all samples)', count: root.count, self: 0, children: [] };
}

/* The tree turned over: roots are where samples ended, children their callers. Each path
 * from the root to a node with samples of its own is inserted reversed, with those samples. */
export function bottomUp(root) {
  const top = treeTop(root);
  top.self = root.count - childSum(root);
  const path = [];
  (function walk(node) {
    const own = node.count - childSum(node);
    if (path.length && own > 0) insertReversed(top, path, own);
    for (const child of node.children || []) {
      path.push(child);
      walk(child);
      path.pop();
    }
  })(root);
  return finishTree(top);
}

function insertReversed(top, path, own) {
  let node = top;
  for (let i = path.length - 1; i >= 0; i--) {
    node = childFor(node, path[i], false);
    node.count += own;
  }
}

/* "My code only": a frame that is not the app's is left out, its callees move up to the nearest
 * frame shown, its own samples stay with that frame (counts are kept). */
const ownTrees = new WeakMap();
export function ownCodeTree(root) {
  if (!ownTrees.has(root)) {
    const top = treeTop(root);
    liftInto(top, root.children);
    ownTrees.set(root, setSelf(finishTree(top)));
  }
  return ownTrees.get(root);
}

function liftInto(parent, children) {
  for (const child of children || []) {
    if (isOthersCode(child)) {
      liftInto(parent, child.children);
      continue;
    }
    const node = childFor(parent, child, true);
    node.count += child.count;
    liftInto(node, child.children);
  }
}

function setSelf(node) {
  node.self = node.count - childSum(node);
  for (const child of node.children) setSelf(child);
  return node;
}

export function heaviestChild(node) {
  let best = null;
  for (const child of node.children || []) if (!best || child.count > best.count) best = child;
  return best;
}

/* The hitch's heaviest stack as a call tree: one path, outermost caller first, every node
 * holding the hitch's samples. */
export function hitchTree(hitch) {
  const stack = (hitch.heaviest_stack || []).slice().reverse();
  const count = Math.max(1, hitch.sample_count || 0);
  const root = { count: stack.length ? count : 0, children: [] };
  let parent = root;
  stack.forEach((frame, i) => {
    const node = Object.assign({}, frame, { count, children: [] });
    if (i === stack.length - 1) node.self = count;
    parent.children.push(node);
    parent = node;
  });
  return root;
}
