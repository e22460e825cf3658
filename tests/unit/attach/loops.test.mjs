// lagscope-run's one list of loops (attach/loops.h, LAGSCOPE__RUN_LOOPS) against what it stands
// for: each loop is marked by a hook of attach/hooks.c, each hook it names is one, each hook
// that marks a loop is named by one, and docs/guide.md names every hook and says the loops as
// lagscope-run does. The code derives the rest from the list (the preload's bits and run_loops
// line, lagscope-run's fields, sentences and --help); this keeps the list and the prose honest.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

// XX(ID, key, "name", "brief", "hooks, …"), the macro's lines joined.
function loops() {
  const header = read('attach/loops.h');
  const start = header.indexOf('#define LAGSCOPE__RUN_LOOPS(XX)');
  assert.ok(start >= 0, 'attach/loops.h: no #define LAGSCOPE__RUN_LOOPS(XX)');
  let body = '';
  for (const line of header.slice(start).split('\n').slice(1)) {
    body += line.replace(/\\\s*$/, ' ');
    if (!/\\\s*$/.test(line)) break;
  }
  const entries = [];
  const XX = /XX\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*((?:"[^"]*"\s*)+)\)/g;
  for (const m of body.matchAll(XX)) {
    const hooks = [...m[5].matchAll(/"([^"]*)"/g)].map((s) => s[1]).join('');
    entries.push({ id: m[1], key: m[2], name: m[3], brief: m[4],
      hooks: hooks.split(',').map((h) => h.trim()).filter(Boolean) });
  }
  assert.ok(entries.length > 0, 'attach/loops.h: no XX(ID, key, "name", "brief", "hooks") line read');
  return entries;
}

// hooks.c's exported hooks (HOOK type name(…) { … }), with their bodies; and those of its
// siblings for one library each (attach/hooks_*.c: hooks_wayland.c).
function hooks() {
  const siblings = fs.readdirSync(path.join(ROOT, 'attach')).filter((f) => /^hooks_\w+\.c$/.test(f)).sort();
  const source = ['hooks.c', ...siblings].map((f) => read('attach/' + f)).join('\n');
  const found = new Map();
  const HOOK = /^HOOK [^(\n]*?\b(\w+)\(([^)]*)\)\s*\{/gm;
  for (const m of source.matchAll(HOOK)) {
    const open = m.index + m[0].length;
    let depth = 1, i = open;
    for (; i < source.length && depth > 0; i++) depth += source[i] === '{' ? 1 : source[i] === '}' ? -1 : 0;
    found.set(m[1], source.slice(open, i));
  }
  return { source, found };
}

// "GLib, SDL2, OpenGL (glX, EGL) or Xlib", as lagscope__run_loop_names joins them.
function sentence(names) {
  return names.length < 2 ? names.join('') : names.slice(0, -1).join(', ') + ' or ' + names.at(-1);
}

// The Vulkan layer's entry points (attach/vk_layer.c, its own_device_proc table: {"vkName", fn}):
// the loader, not the dynamic linker, calls them, so they are no HOOK; they mark a loop there.
function layerEntries() {
  const source = read('attach/vk_layer.c');
  return { source, names: new Set([...source.matchAll(/\{"(vk\w+)",/g)].map((m) => m[1])) };
}

test('each loop is marked in hooks.c (or the Vulkan layer), by the hooks it names', () => {
  const { source, found } = hooks();
  const layer = layerEntries();
  for (const loop of loops()) {
    const mark = new RegExp('\\bLAGSCOPE__LOOP_' + loop.id + '\\b');
    assert.ok(mark.test(source) || mark.test(layer.source),
      'attach/loops.h lists ' + loop.id + ', but no hook of attach/hooks.c (nor attach/vk_layer.c) ' +
      'marks LAGSCOPE__LOOP_' + loop.id + ' seen (loop_pass or frame_presented): it would never be seen');
    assert.ok(loop.hooks.length > 0, 'attach/loops.h: ' + loop.id + ' names no hook');
    for (const hook of loop.hooks)
      assert.ok(found.has(hook) || layer.names.has(hook), 'attach/loops.h: ' + loop.id + ' names ' +
        hook + ', which is no HOOK of attach/hooks.c nor an entry point of attach/vk_layer.c');
  }
});

test('each hook that marks a loop is named by the list', () => {
  const { found } = hooks();
  const named = new Set(loops().flatMap((loop) => loop.hooks));
  const MARKS = /\b(loop_pass|frame_presented|glib_loop_seen|sdl_wait)\(/;
  for (const [hook, body] of found)
    if (MARKS.test(body))
      assert.ok(named.has(hook), 'attach/hooks.c: ' + hook + ' marks a loop seen, but no loop of ' +
        'attach/loops.h names it in its hooks');
});

test("docs/guide.md names every hook and says the loops as lagscope-run does", () => {
  const guide = read('docs/guide.md');
  const list = loops();
  for (const hook of list.flatMap((loop) => loop.hooks))
    assert.ok(guide.includes('`' + hook), 'docs/guide.md does not name the hook ' + hook +
      ' (its table of what the preload hooks)');
  const said = 'no ' + sentence(list.map((loop) => loop.name)) + ' loop';
  assert.ok(guide.includes(said), 'docs/guide.md does not say "' + said + '" (lagscope-run\'s ' +
    'exit 5, as its summary says it)');
});
