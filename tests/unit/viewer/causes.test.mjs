// The cause kinds have one list, LAGSCOPE__CAUSES in core/cause/cause.h, and what lists them
// elsewhere is checked against it here: viewer.css's colour of each kind (a kind without one
// would be drawn grey, silently), verdict.js's kinds of a phase, and the docs' lists of them.
// A new kind: docs/hacking.md, "Recipe: a new cause kind".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const LIST = 'LAGSCOPE__CAUSES (core/cause/cause.h)';

/* The list's entries, XX(NAME, "name", stack, "colour", "meaning" "meaning, continued"), in order. */
function causes() {
  const header = read('core/cause/cause.h');
  const start = header.indexOf('#define LAGSCOPE__CAUSES(XX)');
  assert.ok(start >= 0, 'core/cause/cause.h defines no LAGSCOPE__CAUSES(XX)');
  const lines = [];
  for (const line of header.slice(start).split('\n')) {
    lines.push(line.replace(/\\$/, ''));
    if (!line.endsWith('\\')) break;
  }
  const body = lines.join(' ');
  const entry = /XX\(\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*([01])\s*,\s*"([^"]*)"\s*,\s*((?:"[^"]*"\s*)+)\)/g;
  const list = [...body.matchAll(entry)].map((m) => ({
    constant: m[1],
    name: m[2],
    stack: m[3] === '1',
    colour: m[4],
    meaning: [...m[5].matchAll(/"([^"]*)"/g)].map((s) => s[1]).join(''),
  }));
  assert.equal(list.length, (body.match(/XX\(/g) || []).length, LIST + ': an entry this test cannot read');
  assert.ok(list.length > 0, LIST + ' is empty');
  return list;
}

const KINDS = causes();
const names = (list) => list.map((k) => k.name);

test('the list: names and constants used once, unknown in it', () => {
  for (const field of ['name', 'constant']) {
    const seen = new Set();
    for (const k of KINDS) {
      assert.ok(!seen.has(k[field]), LIST + ': ' + field + ' ' + k[field] + ' twice');
      seen.add(k[field]);
    }
  }
  assert.ok(names(KINDS).includes('unknown'), LIST + ' has no unknown: lagscope__cause_kind_name falls back to it');
});

test('viewer.css colours every kind, with the colour the list gives it', () => {
  const css = read('assets/viewer.css');
  const rules = new Map();
  for (const m of css.matchAll(/^\[data-kind="([^"]+)"\]\s*\{\s*--kind:\s*([^;]+?)\s*;\s*\}/gm)) rules.set(m[1], m[2]);
  for (const k of KINDS) {
    assert.ok(rules.has(k.name), 'assets/viewer.css has no rule [data-kind="' + k.name + '"] { --kind: ' + k.colour +
      '; }: the kind ' + k.name + ' of ' + LIST + ' has no colour in the viewer');
    assert.equal(rules.get(k.name), k.colour, 'assets/viewer.css colours the kind ' + k.name + ' ' + rules.get(k.name) +
      ', ' + LIST + ' says ' + k.colour);
  }
  for (const kind of rules.keys())
    assert.ok(names(KINDS).includes(kind), 'assets/viewer.css colours a kind ' + kind + ' that ' + LIST + ' does not list');
});

test("verdict.js's kinds of a phase are the list's kinds one stack can have", () => {
  const m = read('assets/verdict.js').match(/const PHASE_KINDS = new Set\(\[([^\]]*)\]\)/);
  assert.ok(m, 'assets/verdict.js: no `const PHASE_KINDS = new Set([...])`');
  const js = [...m[1].matchAll(/'([^']*)'/g)].map((s) => s[1]).sort();
  const stack = names(KINDS.filter((k) => k.stack)).sort();
  for (const kind of stack)
    assert.ok(js.includes(kind), "assets/verdict.js's PHASE_KINDS lacks " + kind + ' (' + LIST + ', stack 1): its phases would show as unknown');
  for (const kind of js)
    assert.ok(stack.includes(kind), "assets/verdict.js's PHASE_KINDS has " + kind + ', not a kind of one stack in ' + LIST);
});

test("docs/hang-report.md's table of cause kinds is the list, in its order, with its meanings", () => {
  const lines = read('docs/hang-report.md').split('\n');
  const at = lines.indexOf('| cause kind | meaning |');
  assert.ok(at >= 0, 'docs/hang-report.md: no table headed "| cause kind | meaning |"');
  const rows = [];
  for (let i = at + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const m = lines[i].match(/^\| `([^`]+)` \| (.*) \|$/);
    assert.ok(m, 'docs/hang-report.md line ' + (i + 1) + ': not "| `kind` | meaning |"');
    rows.push({ name: m[1], meaning: m[2] });
  }
  assert.deepEqual(rows.map((r) => r.name), names(KINDS), 'docs/hang-report.md lists the kinds ' +
    rows.map((r) => r.name).join(', ') + '; ' + LIST + ': ' + names(KINDS).join(', '));
  for (const [i, k] of KINDS.entries())
    assert.equal(rows[i].meaning, k.meaning, 'docs/hang-report.md says of ' + k.name + ' "' + rows[i].meaning + '", ' + LIST + ' "' + k.meaning + '"');
});

/* The first run of backticked words joined by commas and "or" after the marker, in a file's
 * text with its line breaks as spaces: "`cpu`, `lock`, ... or `unknown`". */
function proseKinds(file, marker) {
  const text = read(file).replace(/\s+/g, ' ');
  const at = text.indexOf(marker);
  assert.ok(at >= 0, file + ': "' + marker + '" not found');
  const run = text.slice(at).match(/`[a-z]+`(?:(?:,| or|, or) `[a-z]+`)+/);
  assert.ok(run, file + ': no list of kinds after "' + marker + '"');
  return [...run[0].matchAll(/`([a-z]+)`/g)].map((m) => m[1]).sort();
}

test("the docs' lists of a sample's kinds name the list's kinds one stack can have", () => {
  const stack = names(KINDS.filter((k) => k.stack)).sort();
  for (const [file, marker] of [['docs/design.md', 'Each sample is classified'], ['docs/hacking.md', '**cause**:']])
    assert.deepEqual(proseKinds(file, marker), stack, file + ' ("' + marker + '") lists ' + proseKinds(file, marker).join(', ') +
      '; the kinds of one stack in ' + LIST + ': ' + stack.join(', '));
});

test("docs/viewer-api.md's metrics list every kind but idle (reported, not counted: core/monitor.c)", () => {
  const counted = names(KINDS).filter((k) => k !== 'idle').sort();
  const marker = '`lagscope_hangs_total{kind}`';
  assert.deepEqual(proseKinds('docs/viewer-api.md', marker), counted, 'docs/viewer-api.md (' + marker + ') lists ' +
    proseKinds('docs/viewer-api.md', marker).join(', ') + '; the counted kinds of ' + LIST + ': ' + counted.join(', '));
});
