/*
 * The call tree view (collapsible rows, the heaviest path open) and the "my code only"
 * switch shared by the call tree, bottom-up and flame graph tabs.
 */
import { el } from './dom.js';
import { basename, frameLocation, frameName } from './format.js';
import { bottomUp, heaviestChild, ownCodeTree } from './trees.js';

const prefs = { myCodeOnly: false }; // kept from one hang to the next

export function shownTree(root) {
  return prefs.myCodeOnly && root && root.count ? ownCodeTree(root) : root;
}

export function bottomUpTree(root) {
  const tree = root && root.count ? bottomUp(root) : root;
  return callTree(tree, { testid: 'calltree-bottom-up', heading: 'Function, then its callers' });
}

export function myCodeToggle(onChange) {
  const box = el('input');
  box.type = 'checkbox';
  box.checked = prefs.myCodeOnly;
  box.dataset.testid = 'my-code-only';
  box.addEventListener('change', () => {
    prefs.myCodeOnly = box.checked;
    onChange();
  });
  const label = el('label', 'tab-tool', box, 'My code only');
  label.title = 'Leave out frames of system libraries (libc, the loader, the vDSO): their samples count for the nearest frame shown';
  return label;
}

/* Collapsible rows, children built on first expand (a tree may hold 20 000 nodes); the
 * heaviest path is open from the start, because that is where the time went. */
export function callTree(root, options) {
  const wrap = el('div', 'call-tree');
  wrap.dataset.testid = (options && options.testid) || 'call-tree';
  if (!root || !root.count) {
    wrap.append(el('p', 'empty', 'No samples were taken: the hang ended before the first one.'));
    return wrap;
  }
  const head = el('div', 'tree-head', el('span', null, (options && options.heading) || 'Function'),
    el('span', 'num', 'Samples'), el('span', 'num', 'Total'));
  const list = el('ul', 'tree');
  list.setAttribute('role', 'tree');
  const heaviest = new Set();
  for (let node = root; node; node = heaviestChild(node)) heaviest.add(node);
  list.append(treeNode(root, 0, root.count, heaviest));
  wrap.append(head, list);
  if (root.truncated) wrap.append(el('p', 'muted', 'The tree was cut at 20 000 nodes; ' + (root.truncated_samples || 0) + ' samples are shorter than they were.'));
  return wrap;
}

function treeNode(node, depth, total, heaviest) {
  const item = el('li', 'tree-item');
  item.setAttribute('role', 'treeitem');
  const hasChildren = (node.children || []).length > 0;
  const row = el('div', 'tree-row');
  row.tabIndex = 0;
  row.style.setProperty('--depth', String(depth));
  const pct = (node.count / total) * 100;
  const bar = el('span', 'tree-bar');
  bar.style.width = pct.toFixed(2) + '%';
  const name = el('span', 'tree-name',
    el('span', 'twisty', hasChildren ? '▸' : ''),
    el('span', 'fn' + (node.function ? '' : ' unknown'), depth === 0 ? '(all samples)' : frameName(node)));
  if (depth > 0 && node.module && node.function) name.append(el('span', 'mod', basename(node.module)));
  const where = frameLocation(node);
  if (where) name.append(el('span', 'loc', where));
  name.title = [frameName(node), node.module, node.file && node.file + ':' + node.line,
    node.count + ' samples' + (node.self ? ', self ' + node.self : '')].filter(Boolean).join('\n');
  const self = node.self ? el('span', 'self', 'self ' + node.self) : null;
  row.append(bar, name, el('span', 'num', self, String(node.count)), el('span', 'num pct', pct.toFixed(1) + '%'));
  item.append(row);
  item.dataset.function = node.function || '';
  item.dataset.module = node.module || '';
  item.dataset.count = String(node.count);

  if (hasChildren) {
    let children = null;
    const toggle = (open) => {
      if (open && !children) {
        children = el('ul', 'tree-children');
        children.setAttribute('role', 'group');
        for (const child of node.children) children.append(treeNode(child, depth + 1, total, heaviest));
        item.append(children);
      }
      if (children) children.hidden = !open;
      item.setAttribute('aria-expanded', open ? 'true' : 'false');
      row.querySelector('.twisty').textContent = open ? '▾' : '▸';
    };
    row.addEventListener('click', () => toggle(item.getAttribute('aria-expanded') !== 'true'));
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ' || e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        toggle(e.key === 'ArrowRight' ? true : e.key === 'ArrowLeft' ? false : item.getAttribute('aria-expanded') !== 'true');
      }
    });
    toggle(heaviest.has(node));
  }
  return item;
}
