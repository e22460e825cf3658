/*
 * The flame graph: an icicle graph of a call tree on a canvas, zoomable, with a tooltip. Its
 * geometry (indexFlame, flamePath, layoutFlame, flameHit) is pure and tested by node
 * (tests/unit/viewer/flame.test.mjs); the rest draws it and answers the pointer.
 */
import { colors, prepareCanvas } from './canvas.js';
import { byId, el } from './dom.js';
import { basename, frameLocation, frameName, hashString, isSystemModule } from './format.js';

export const FLAME_ROW = 20; // CSS pixels per level

/* Every node's parent, and the depth of the deepest node (the root is 0). */
export function indexFlame(root) {
  const parents = new Map();
  let maxDepth = 0;
  (function index(node, depth) {
    maxDepth = Math.max(maxDepth, depth);
    for (const child of node.children || []) {
      parents.set(child, node);
      index(child, depth + 1);
    }
  })(root, 0);
  return { parents, maxDepth };
}

/* The nodes from the root down to node. */
export function flamePath(node, parents) {
  const path = [];
  for (let n = node; n; n = parents.get(n)) path.unshift(n);
  return path;
}

/* Rectangles in CSS pixels for a graph width wide, zoomed to the last node of path (the
 * nodes from the root to it): those nodes span the whole width, the ones above it dimmed;
 * its subtree is scaled to its own count, children left to right in their order. A child
 * narrower than half a pixel is left out with its subtree, its room kept. */
export function layoutFlame(path, width) {
  const rects = [];
  const zoom = path[path.length - 1];
  path.forEach((node, depth) => rects.push({ node, depth, x: 0, w: width, dim: node !== zoom }));
  (function place(node, depth, x, w) {
    let cx = x;
    for (const child of node.children || []) {
      const cw = (child.count / node.count) * w;
      if (cw >= 0.5) {
        rects.push({ node: child, depth: depth + 1, x: cx, w: cw, dim: false });
        place(child, depth + 1, cx, cw);
      }
      cx += cw;
    }
  })(zoom, path.length - 1, 0, width);
  return rects;
}

/* The rectangle under the point (x, y) in CSS pixels of the graph, or null. */
export function flameHit(rects, x, y) {
  const depth = Math.floor(y / FLAME_ROW);
  return rects.find((r) => r.depth === depth && x >= r.x && x < r.x + r.w) || null;
}

/* An icicle graph on a canvas (callers on top, callees below, width = samples). Hovering
 * names the frame; a click zooms to it, a click on the top row or "Reset" zooms out. */
export function flameGraph(root) {
  const wrap = el('div', 'flame');
  wrap.dataset.testid = 'flamegraph';
  if (!root || !root.count) {
    wrap.append(el('p', 'empty', 'No samples were taken: the hang ended before the first one.'));
    return wrap;
  }
  const crumbs = el('div', 'flame-crumbs');
  const reset = el('button', 'btn btn-quiet btn-small', 'Reset zoom');
  reset.type = 'button';
  reset.dataset.testid = 'flame-reset';
  const bar = el('div', 'flame-bar', crumbs, reset);
  const scroller = el('div', 'flame-scroll');
  const canvas = el('canvas', 'flame-canvas');
  canvas.dataset.testid = 'flame-canvas';
  scroller.append(canvas);
  const touch = window.matchMedia('(hover: none)').matches;
  wrap.append(bar, scroller, el('p', 'hint muted', touch ? 'Tap a frame for its details and to zoom into it.'
    : 'Hover a frame for details; click to zoom into it, click it again to zoom out.'));

  const { parents, maxDepth } = indexFlame(root);
  const view = { zoom: root, rects: [], hover: null };
  const pathTo = (node) => flamePath(node, parents);

  function colorOf(node, dim) {
    if (dim) return colors.grid;
    if (node === root) return '#4b5563';
    if (!node.function) return '#6b7280';
    const h = hashString(node.function);
    if (isSystemModule(node.module)) return 'hsl(' + (190 + (h % 40)) + ',48%,' + (62 + (h >> 8) % 12) + '%)';
    return 'hsl(' + (12 + (h % 34)) + ',80%,' + (56 + (h >> 8) % 12) + '%)';
  }

  function draw() {
    const height = (maxDepth + 1) * FLAME_ROW;
    canvas.style.height = height + 'px';
    const box = prepareCanvas(canvas, height);
    if (!box) return;
    const { ctx, width } = box;
    view.rects = layoutFlame(pathTo(view.zoom), width);
    ctx.font = '12px ' + getComputedStyle(document.body).fontFamily;
    ctx.textBaseline = 'middle';
    for (const r of view.rects) {
      const y = r.depth * FLAME_ROW;
      ctx.fillStyle = colorOf(r.node, r.dim);
      ctx.fillRect(r.x, y, Math.max(0.5, r.w - 1), FLAME_ROW - 1);
      if (r === view.hover) {
        ctx.strokeStyle = colors.text;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(r.x + 0.75, y + 0.75, Math.max(0.5, r.w - 2.5), FLAME_ROW - 2.5);
      }
      if (r.w > 28) {
        const label = fitText(ctx, r.node === root ? '(all samples)' : frameName(r.node), r.w - 8);
        ctx.fillStyle = r.dim || r.node === root || !r.node.function ? colors.text : '#111318';
        ctx.fillText(label, r.x + 4, y + FLAME_ROW / 2 + 0.5);
      }
    }
    canvas.dataset.rects = String(view.rects.length);
    renderCrumbs();
  }

  /* The path to the zoomed node; a long one shows its start and its last few steps. */
  function renderCrumbs() {
    crumbs.replaceChildren();
    const path = pathTo(view.zoom);
    const keep = window.matchMedia('(max-width: 560px)').matches ? 2 : 4;
    path.forEach((node, i) => {
      if (i > 0 && i < path.length - keep) {
        if (i === 1) crumbs.append(el('span', 'crumb-sep', '›'), el('span', 'crumb-gap', '…'));
        return;
      }
      if (i) crumbs.append(el('span', 'crumb-sep', '›'));
      const crumb = el('button', 'crumb', node === root ? 'all samples' : frameName(node));
      crumb.type = 'button';
      crumb.addEventListener('click', () => zoomTo(node));
      crumbs.append(crumb);
    });
    crumbs.scrollLeft = crumbs.scrollWidth;
    reset.disabled = view.zoom === root;
  }

  function zoomTo(node) {
    view.zoom = node;
    view.hover = null;
    hideTooltip();
    wrap.dataset.zoom = node === root ? '' : frameName(node);
    draw();
  }

  function hit(event) {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    return flameHit(view.rects, x, y);
  }

  canvas.addEventListener('mousemove', (event) => {
    const r = hit(event);
    if (r !== view.hover) {
      view.hover = r;
      draw();
    }
    if (r) showTooltip(r.node, root.count, event.clientX, event.clientY);
    else hideTooltip();
  });
  canvas.addEventListener('mouseleave', () => {
    view.hover = null;
    hideTooltip();
    draw();
  });
  canvas.addEventListener('click', (event) => {
    const r = hit(event);
    if (!r) return;
    // A click on the node already zoomed to steps out one level; any other zooms to it.
    zoomTo(r.node === view.zoom ? parents.get(r.node) || root : r.node);
  });
  reset.addEventListener('click', () => zoomTo(root));

  // Redrawn when its width changes (a rotated phone, a resized window) and when shown.
  new ResizeObserver(() => draw()).observe(scroller);
  wrap.redraw = draw;
  return wrap;
}

function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid;
    else hi = mid - 1;
  }
  return lo ? text.slice(0, lo) + '…' : '';
}

function showTooltip(node, total, clientX, clientY) {
  const tip = byId('flame-tooltip');
  const lines = [
    el('div', 'tip-fn', node.function ? node.function : frameName(node)),
  ];
  if (node.module) lines.push(el('div', 'tip-row', el('span', 'muted', 'module '), basename(node.module)));
  if (node.file) lines.push(el('div', 'tip-row', el('span', 'muted', 'source '), frameLocation(node)));
  lines.push(el('div', 'tip-row', el('span', 'muted', 'samples '),
    node.count + ' (' + ((node.count / total) * 100).toFixed(1) + '%)' + (node.self ? ', self ' + node.self : '')));
  tip.replaceChildren(...lines);
  tip.hidden = false;
  // Keep the tip inside the window, on the side of the pointer with more room.
  const margin = 12;
  const tipRect = tip.getBoundingClientRect();
  let left = clientX + margin;
  if (left + tipRect.width > window.innerWidth - 4) left = Math.max(4, clientX - margin - tipRect.width);
  let top = clientY + margin;
  if (top + tipRect.height > window.innerHeight - 4) top = Math.max(4, clientY - margin - tipRect.height);
  tip.style.left = left + 'px';
  tip.style.top = top + 'px';
}

function hideTooltip() {
  byId('flame-tooltip').hidden = true;
}
