// The viewer's module graph (assets/*.js): no import cycle, and no view imports another view.
// main.js is the hub: it builds the views and wires them through state.js's on/emit, so a view
// draws only its own part of the page and learns what the others did from the state's events.
// Only static imports count (`import ... from './x.js'`, `import './x.js'`, `export ... from`):
// the viewer has no dynamic import.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ASSETS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'assets');

// The views, as main.js's header lists them: each draws one part of the page.
const VIEWS = new Set(['app.js', 'metrics.js', 'hitches.js', 'hangs.js', 'detail.js', 'verdict.js',
  'calltree.js', 'flame.js', 'threads.js', 'capture.js']);
// Pure: nothing that touches the page, so node tests them as they are.
const PURE = new Set(['format.js', 'hang-list.js', 'trees.js', 'backoff.js']);
// What a view may import besides the pure modules.
const VIEW_MAY_IMPORT = new Set(['dom.js', 'api.js', 'canvas.js', 'state.js']);

// One static import or re-export: its clause holds only names, braces, commas, `*` and `as`.
const IMPORT_RE = /^[ \t]*(?:import\s*(?:[\w$\s{},*]+?\s*from\s*)?|export\s*(?:\*(?:\s*as\s+[\w$]+)?|\{[\w$\s,]*\})\s*from\s*)(['"])([^'"\n]+)\1/gm;

function moduleFiles() {
  return fs.readdirSync(ASSETS).filter((name) => name.endsWith('.js')).sort();
}

/* Every module's imports, as file names under assets/. */
function importGraph() {
  const graph = new Map();
  for (const name of moduleFiles()) {
    const source = fs.readFileSync(path.join(ASSETS, name), 'utf8');
    const targets = [];
    for (const match of source.matchAll(IMPORT_RE)) {
      const spec = match[2];
      assert.ok(spec.startsWith('./'), name + ' imports "' + spec + '": the viewer imports only its own files (./x.js)');
      const target = path.posix.normalize(spec);
      assert.ok(fs.existsSync(path.join(ASSETS, target)), name + ' imports ' + spec + ', which is not in assets/');
      targets.push(target);
    }
    // A statement the pattern missed would hide an edge: every line opening with `import` is one.
    const opened = source.match(/^[ \t]*import\b(?!\s*\()/gm) || [];
    const parsed = targets.length - (source.match(/^[ \t]*export\s*[*{][^;]*?\bfrom\b/gm) || []).length;
    assert.equal(parsed, opened.length, name + ': ' + opened.length + ' import statements, ' + parsed + ' understood');
    graph.set(name, targets);
  }
  return graph;
}

/* The modules that import one another (Tarjan's strongly connected components), each group
 * named with the shortest cycle through each of its members: 'a.js → b.js → a.js'. */
function cycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  function visit(v) {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) || []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length === 1 && !(graph.get(v) || []).includes(v)) return;
    const members = new Set(component);
    const named = new Set();
    for (const u of component.sort()) {
      const cycle = cycleIn(graph, members, u).slice(0, -1);
      const first = cycle.indexOf(cycle.slice().sort()[0]);
      const rotated = cycle.slice(first).concat(cycle.slice(0, first));
      named.add(rotated.concat(rotated[0]).join(' → '));
    }
    found.push(component.join(', ') + ' import one another: ' + [...named].join('; '));
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/* A shortest path from start back to itself inside one component (breadth first). */
function cycleIn(graph, component, start) {
  const from = new Map();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v) || []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)) path.splice(1, 0, u);
        return path.concat(start);
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

test('no module of assets/ takes part in an import cycle', () => {
  const found = cycles(importGraph());
  assert.deepEqual(found, [], 'import cycles under assets/');
});

test('a view imports no other view: only pure modules, dom.js, api.js, canvas.js and state.js', () => {
  const graph = importGraph();
  const wrong = [];
  for (const view of VIEWS) {
    for (const target of graph.get(view) || []) {
      if (VIEWS.has(target)) wrong.push(view + ' imports the view ' + target);
      else if (!PURE.has(target) && !VIEW_MAY_IMPORT.has(target)) wrong.push(view + ' imports ' + target);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the pure modules import only pure modules, and nothing imports main.js', () => {
  const graph = importGraph();
  const wrong = [];
  for (const [name, targets] of graph) {
    for (const target of targets) {
      if (PURE.has(name) && !PURE.has(target)) wrong.push(name + ' (pure) imports ' + target);
      if (target === 'main.js') wrong.push(name + ' imports main.js, the hub');
    }
  }
  assert.deepEqual(wrong, []);
});

test('main.js\'s header names every module, and the views and pure modules named here exist', () => {
  const header = fs.readFileSync(path.join(ASSETS, 'main.js'), 'utf8').split('*/')[0];
  const files = moduleFiles();
  for (const name of files) {
    if (name !== 'main.js') assert.match(header, new RegExp('\\b' + name.replace('.', '\\.') + '\\b'), 'main.js\'s header does not list ' + name);
  }
  for (const name of [...VIEWS, ...PURE, ...VIEW_MAY_IMPORT]) assert.ok(files.includes(name), name + ' is not in assets/');
});

test('the parser sees the statements the viewer uses, and finds a cycle', () => {
  const source = [
    "import { a, b as c } from './one.js';",
    'import {',
    '  d,',
    "} from './two.js';",
    "import * as all from \"./three.js\";",
    "import './four.js';",
    "export { e } from './five.js';",
    "export * from './six.js';",
    "// import { no } from './comment.js';",
    " * import { no } from './doc-comment.js';",
    "const x = import('./dynamic.js');",
  ].join('\n');
  assert.deepEqual([...source.matchAll(IMPORT_RE)].map((m) => m[2]),
    ['./one.js', './two.js', './three.js', './four.js', './five.js', './six.js']);
  const graph = new Map([['a.js', ['b.js']], ['b.js', ['c.js']], ['c.js', ['a.js', 'd.js']], ['d.js', []], ['e.js', ['e.js']]]);
  assert.deepEqual(cycles(graph).sort(), [
    'a.js, b.js, c.js import one another: a.js → b.js → c.js → a.js',
    'e.js import one another: e.js → e.js',
  ]);
});
